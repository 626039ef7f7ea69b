"""Checks of the workspace and its settings, and of the index (read-only, no lock)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memcli.config import (
    ENV_PREFIX,
    Settings,
    confine_file,
    load_settings,
    user_config_path,
    workspace_config_path,
)
from memcli.doctor.report import NOTE, OK, PROBLEM, Check
from memcli.errors import ConfigError, MemcliError
from memcli.index import db
from memcli.index.freshness import Freshness
from memcli.index.schema import INDEX_ID, SCHEMA_VERSION
from memcli.index.seal import SEAL, untrusted
from memcli.index.store import Store
from memcli.notes.scan import scan
from memcli.notes.workspace import find_workspace


def check_workspace(ctx: dict[str, Any], explicit: str | Path | None) -> Check:
    try:
        ws = find_workspace(explicit)
    except MemcliError as exc:
        return Check(
            "workspace", PROBLEM, exc.message, exc.hint or "run 'memcli init'", {"root": None}
        )
    ctx["ws"] = ws
    memory = ws.memory_dir
    details = {"root": str(ws.root), "memory_dir": memory.is_dir()}
    if not memory.is_dir():
        return Check(
            "workspace",
            PROBLEM,
            f"{ws.root} has no memory/ folder",
            f"run 'memcli init {ws.root}'",
            details,
        )
    return Check("workspace", OK, str(ws.root), details=details)


def check_config(ctx: dict[str, Any]) -> Check:
    ws = ctx.get("ws")
    user = user_config_path()
    wsfile = workspace_config_path(ws.root) if ws else None
    details: dict[str, Any] = {
        "user_file": str(user),
        "user_file_exists": user.is_file(),
        "workspace_file": str(wsfile) if wsfile else None,
        "workspace_file_exists": bool(wsfile and wsfile.is_file()),
    }
    problems: list[ConfigError] = []
    try:  # every bad value or file is collected; the checks below use the rest
        settings = load_settings(ws.root if ws else None, problems=problems)
    except ConfigError as exc:  # a bad command-line value (none are passed here)
        problems.append(exc)
        settings = Settings.defaults()
    ctx["settings"] = settings
    if problems:
        details["problems"] = [p.message for p in problems]
        first = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return Check(
            "config",
            PROBLEM,
            first.message + more,
            first.hint
            or (
                "fix or unset the variable"
                if first.message.startswith(ENV_PREFIX)
                else "fix the file ('memcli config set' checks a value; 'memcli config path' "
                "shows where the files are)"
            ),
            details,
        )
    changed = sorted(k for k, _, origin in settings.items() if origin != "default")
    details["changed"] = changed
    return Check(
        "config", OK, f"{len(changed)} setting(s) differ from the defaults", details=details
    )


def check_trust(ctx: dict[str, Any]) -> Check:
    """Whether the workspace memcli.toml is trusted, and what is ignored until it is."""
    from memcli.config.trust import trust_state  # with doctor only

    ws = ctx.get("ws")
    if ws is None:
        return Check("trust", NOTE, "no workspace", details={"file": None})
    state = trust_state(ws.root)
    details = state.as_dict()
    name = workspace_config_path(ws.root).name
    if state.state == "no-file":
        return Check("trust", OK, f"no {name}: nothing to trust", details=details)
    if not state.sets:
        return Check("trust", OK, f"{name} sets nothing that needs trust", details=details)
    if state.state == "trusted":
        settings = ctx.get("settings")
        try:
            if settings is not None and settings.origin("llm.prompt_file") == "workspace":
                confine_file("llm.prompt_file", settings.get("llm.prompt_file"), ws.root)
        except MemcliError as exc:
            return Check("trust", PROBLEM, exc.message, exc.hint, details)
        keys = ", ".join(state.sets)
        return Check("trust", OK, f"{name} is trusted ({keys} apply)", details=details)
    why = "changed since it was trusted" if state.state == "changed" else "is not trusted"
    return Check(
        "trust",
        NOTE,
        f"{name} {why}: ignoring {', '.join(state.ignored)}",
        f"review {state.file}, then run 'memcli trust'",
        details,
    )


# -- the index --------------------------------------------------------------------------------
def check_index(ctx: dict[str, Any]) -> Check:
    ws = ctx.get("ws")
    if ws is None:
        return Check("index", NOTE, "no workspace, no index", details={"path": None})
    settings = ctx["settings"]
    path = ws.index_path
    auto = bool(settings.get("index.sync_on_search"))
    stale_status = NOTE if auto else PROBLEM
    details: dict[str, Any] = {"path": str(path), "exists": path.is_file()}
    if not path.is_file():
        return Check("index", stale_status, "not built yet", "run 'memcli index'", details)
    try:
        conn = db.connect(path, readonly=True)
    except db.database_errors() as exc:
        return Check(
            "index",
            PROBLEM,
            f"cannot open the index: {exc}",
            "run 'memcli index --force' (the index is rebuilt from the Markdown)",
            details,
        )
    try:
        return index_checks(ctx, conn, details, stale_status)
    except db.database_errors() as exc:
        return Check(
            "index",
            PROBLEM,
            f"the index is unreadable: {exc}",
            "run 'memcli index --force' (the index is rebuilt from the Markdown)",
            details,
        )
    finally:
        conn.close()


def index_checks(
    ctx: dict[str, Any], conn: Any, details: dict[str, Any], stale_status: str
) -> Check:
    ws, settings = ctx["ws"], ctx["settings"]
    rebuild = "run 'memcli index --force' (the index is rebuilt from the Markdown)"
    rows = [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]
    details["integrity"] = "ok" if rows == ["ok"] else rows[:5]
    if rows != ["ok"]:
        return Check("index", PROBLEM, f"integrity check failed: {rows[0]}", rebuild, details)
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    details["schema"] = version
    if version > SCHEMA_VERSION:
        return Check(
            "index",
            PROBLEM,
            f"schema {version} is newer than this memcli ({SCHEMA_VERSION})",
            "upgrade memcli",
            details,
        )
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    if not {"files", "chunks", "chunks_fts"} <= names:
        return Check("index", stale_status, "not built yet", "run 'memcli index'", details)
    if version < SCHEMA_VERSION:  # read-only here; any other command migrates it
        return Check(
            "index",
            NOTE,
            f"schema {version} is older than this memcli's ({SCHEMA_VERSION})",
            "run 'memcli index' to upgrade it",
            details,
        )
    objects = conn.execute("SELECT type, name FROM sqlite_master").fetchall()
    marks = conn.execute("SELECT key, value FROM meta WHERE key IN (?, ?)", (INDEX_ID, SEAL))
    why = untrusted(objects, dict(marks.fetchall()), create=False)  # doctor makes nothing
    if why is not None:  # read no further: any other command rebuilds it from the Markdown
        return Check(
            "index",
            NOTE,
            f"the index {why}: memcli never reads it",
            "any command rebuilds it from the Markdown ('memcli index' does)",
            details,
        )

    def count(sql: str) -> int:
        return int(conn.execute(sql).fetchone()[0])

    details["files"] = count("SELECT count(*) FROM files")
    details["chunks"] = count("SELECT count(*) FROM chunks")
    details["fts_rows"] = count("SELECT count(*) FROM chunks_fts")
    orphans = count("SELECT count(*) FROM chunks_fts WHERE rowid NOT IN (SELECT id FROM chunks)")
    if details["fts_rows"] != details["chunks"] or orphans:
        return Check(
            "index",
            PROBLEM,
            f"full-text rows ({details['fts_rows']}) do not match chunks ({details['chunks']})",
            rebuild,
            details,
        )
    store = Store(ws.index_path, conn)  # read-only: no migration, no lock
    check = Freshness(ws, store, settings, settings.get("index.include"))
    found = scan(ws, check.include)
    dirty = check.dirty(found)
    details["files_on_disk"] = len(found.files)
    details["dirty"] = dirty
    details["scan_warnings"] = list(found.warnings)
    details["skipped"] = {path: why for path, (_, _, why) in sorted(store.skipped().items())}
    details["freshness"] = settings.get("index.freshness")
    details["quick_check"] = check.uses_quick_check()
    summary = f"{details['files']} files, {details['chunks']} chunks, integrity ok"
    if dirty:
        when = (
            "the next search re-indexes them"
            if stale_status == NOTE
            else ("index.sync_on_search is off")
        )
        return Check(
            "index",
            stale_status,
            f"{summary}; {len(dirty)} file(s) changed since the last index ({when})",
            "run 'memcli index'",
            details,
        )
    return Check("index", OK, f"{summary}, up to date; {freshness(check)}", details=details)


def freshness(check: Freshness) -> str:
    """How a search (without an engine) checks that the index is current."""
    settings = check.settings
    if not settings.get("index.sync_on_search"):
        return "searches trust the index (index.sync_on_search is off)"
    if not check.uses_quick_check():
        return "searches compare every file with it"
    if check.mode == "recent":
        return "searches run the quick check (index.freshness = recent)"
    return (
        "searches run the quick check and compare every file every"
        f" {settings.get('index.full_check_secs')} s (index.full_check_files ="
        f" {settings.get('index.full_check_files')})"
    )
