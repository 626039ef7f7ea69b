"""Health checks behind ``memcli doctor``: the installation, the settings, the workspace.

Each check reports ``ok``, ``note`` (worth knowing, nothing to do) or ``problem`` (needs
attention, with a hint). Doctor reads and never repairs: the index is opened read-only and no
lock is taken. The only network access is one plain HTTP GET of ``{api_base}/models`` per
configured provider, with a short timeout (LiteLLM is not imported).
"""

from __future__ import annotations

import json
import os
import platform
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memcli import __version__
from memcli.index import db

OK, NOTE, PROBLEM = "ok", "note", "problem"
PROBE_TIMEOUT = 3.0

#: Environment variables LiteLLM reads for hosted providers (checked when no api_base is set).
PROVIDER_KEYS = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "voyage": "VOYAGE_API_KEY",
    "cohere": "COHERE_API_KEY",
    "mistral": "MISTRAL_API_KEY",
}


@dataclass
class Check:
    """The outcome of one check."""

    name: str
    status: str
    summary: str
    hint: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "summary": self.summary,
            "hint": self.hint,
            "details": self.details,
        }


@dataclass
class DoctorReport:
    checks: list[Check] = field(default_factory=list)

    @property
    def problems(self) -> list[Check]:
        return [c for c in self.checks if c.status == PROBLEM]

    def as_dict(self) -> dict[str, Any]:
        return {
            "version": __version__,
            "ok": not self.problems,
            "problems": len(self.problems),
            "checks": [c.as_dict() for c in self.checks],
        }


def run_doctor(
    workspace: str | Path | None = None,
    *,
    network: bool = True,
    timeout: float = PROBE_TIMEOUT,
) -> DoctorReport:
    """Run every check; never raises for what it finds (a crash in a check is a problem)."""
    report = DoctorReport()
    ctx: dict[str, Any] = {"network": network, "timeout": timeout}
    steps: list[tuple[str, Callable[[dict[str, Any]], Check]]] = [
        ("python", _python),
        ("sqlite", _sqlite),
        ("fts5", _fts5),
        ("workspace", lambda c: _workspace(c, workspace)),
        ("config", _config),
        ("sqlite_vec", _sqlite_vec),
        ("index", _index),
        ("embedding", lambda c: _provider(c, "embedding")),
        ("llm", lambda c: _provider(c, "llm")),
        ("hooks", _hooks),
        ("cache", _cache),
    ]
    for name, step in steps:
        try:
            check = step(ctx)
        except Exception as exc:  # a check that breaks is itself a finding
            check = Check(
                name,
                PROBLEM,
                f"the check failed: {type(exc).__name__}: {exc}",
                "run 'memcli --debug doctor' and report the error",
            )
        report.checks.append(check)
    return report


# -- the installation -------------------------------------------------------------------------
def _python(ctx: dict[str, Any]) -> Check:
    version = platform.python_version()
    details = {
        "version": version,
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
        "memcli": __version__,
    }
    return Check("python", OK, f"{details['implementation']} {version}", details=details)


def _sqlite(ctx: dict[str, Any]) -> Check:
    import sqlite3

    name = db.driver_name()
    details = {
        "driver": name,
        "version": db.sqlite_version(),
        "stdlib_version": sqlite3.sqlite_version,
        "stdlib_loads_extensions": hasattr(sqlite3.Connection, "enable_load_extension"),
    }
    why = "" if name == "sqlite3" else " (the stdlib sqlite3 cannot load extensions)"
    return Check("sqlite", OK, f"SQLite {details['version']} through {name}{why}", details=details)


def _memory_conn() -> Any:
    return db.driver().connect(":memory:")


def _fts5(ctx: dict[str, Any]) -> Check:
    from memcli.index.store import FTS_TOKENIZER

    conn = _memory_conn()
    try:
        conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{FTS_TOKENIZER}')")
        trigram = True
        try:
            conn.execute("CREATE VIRTUAL TABLE g USING fts5(x, tokenize='trigram')")
        except Exception:
            trigram = False
    except Exception as exc:
        return Check(
            "fts5",
            PROBLEM,
            f"FTS5 is not available: {exc}",
            "keyword search needs SQLite with FTS5: install sqlean.py "
            "(pip install sqlean.py) or use a Python built with FTS5",
            {"available": False, "trigram": False},
        )
    finally:
        conn.close()
    return Check(
        "fts5",
        OK,
        f"FTS5 available (tokenizer {FTS_TOKENIZER})",
        details={"available": True, "tokenizer": FTS_TOKENIZER, "trigram": trigram},
    )


def _sqlite_vec(ctx: dict[str, Any]) -> Check:
    conn = _memory_conn()
    try:
        error = db.load_vec(conn)
        version = None if error else conn.execute("SELECT vec_version()").fetchone()[0]
    finally:
        conn.close()
    details = {
        "loads": error is None,
        "version": version,
        "driver": db.driver_name(),
        "error": error,
    }
    if error is None:
        return Check(
            "sqlite_vec",
            OK,
            f"sqlite-vec {version} loads through {db.driver_name()}",
            details=details,
        )
    settings = ctx.get("settings")
    wanted = bool(settings and settings.get("embedding.model"))
    hint = "pip install sqlite-vec sqlean.py (in memcli's environment)"
    if wanted:
        return Check(
            "sqlite_vec",
            PROBLEM,
            f"sqlite-vec does not load ({error}): searches fall back to keyword",
            hint,
            details,
        )
    return Check(
        "sqlite_vec",
        NOTE,
        f"sqlite-vec does not load ({error}); only needed with an embedding model",
        hint,
        details,
    )


# -- settings and workspace -------------------------------------------------------------------
def _workspace(ctx: dict[str, Any], explicit: str | Path | None) -> Check:
    from memcli.errors import MemcliError
    from memcli.notes.workspace import find_workspace

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


def _config(ctx: dict[str, Any]) -> Check:
    from memcli.config import DEFAULTS, Settings, load_settings, user_config_path
    from memcli.errors import ConfigError

    ws = ctx.get("ws")
    user = user_config_path()
    wsfile = ws.root / "memcli.toml" if ws else None
    details: dict[str, Any] = {
        "user_file": str(user),
        "user_file_exists": user.is_file(),
        "workspace_file": str(wsfile) if wsfile else None,
        "workspace_file_exists": bool(wsfile and wsfile.is_file()),
    }
    try:
        settings = load_settings(ws.root if ws else None)
    except ConfigError as exc:
        ctx["settings"] = Settings(
            values={s: dict(v) for s, v in DEFAULTS.items()},
            origins={f"{s}.{n}": "default" for s, names in DEFAULTS.items() for n in names},
        )
        return Check(
            "config",
            PROBLEM,
            exc.message,
            exc.hint or "fix the file; 'memcli config path' shows where it is",
            details,
        )
    ctx["settings"] = settings
    changed = sorted(k for k, _, origin in settings.items() if origin != "default")
    details["changed"] = changed
    return Check(
        "config", OK, f"{len(changed)} setting(s) differ from the defaults", details=details
    )


# -- the index --------------------------------------------------------------------------------
def _index(ctx: dict[str, Any]) -> Check:
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
        return _index_checks(ctx, conn, details, stale_status)
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


def _index_checks(
    ctx: dict[str, Any], conn: Any, details: dict[str, Any], stale_status: str
) -> Check:
    from memcli.index.indexer import Indexer
    from memcli.index.store import SCHEMA_VERSION, Store

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
    indexer = Indexer(ws, store, settings)
    found = indexer.scan()
    dirty = indexer.dirty(found)
    details["files_on_disk"] = len(found.files)
    details["dirty"] = dirty
    details["scan_warnings"] = list(found.warnings)
    details["skipped"] = {path: why for path, (_, _, why) in sorted(store.skipped().items())}
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
    return Check("index", OK, f"{summary}, up to date", details=details)


# -- providers --------------------------------------------------------------------------------
def _provider(ctx: dict[str, Any], section: str) -> Check:
    from memcli.providers.remote import provider_name

    settings = ctx["settings"]
    model = str(settings.get(f"{section}.model") or "")
    api_base = str(settings.get(f"{section}.api_base") or "")
    key_env = str(settings.get(f"{section}.api_key_env") or "")
    details: dict[str, Any] = {
        "model": model or None,
        "api_base": api_base or None,
        "api_key_env": key_env or None,
        "api_key_set": bool(key_env and os.environ.get(key_env)),
        "reachable": None,
    }
    if section == "embedding" and ctx.get("ws") is not None and model:
        details["search"] = _search_mode(ctx)
    if not model:
        if section == "embedding":
            return Check(
                section, OK, "no model: keyword search (BM25), fully offline", details=details
            )
        return Check(
            section,
            NOTE,
            "no model: 'memcli flush' is not available",
            "memcli config set llm.model MODEL (and llm.api_base for a local server)",
            details,
        )
    provider = provider_name(model)
    details["provider"] = provider
    if key_env and not os.environ.get(key_env):
        return Check(
            section,
            PROBLEM,
            f"{section}.api_key_env names ${key_env}, which is not set",
            f"export {key_env}=... before running memcli",
            details,
        )
    if not api_base:
        needed = PROVIDER_KEYS.get(provider)
        if needed and not key_env:
            details["api_key_env"] = needed
            details["api_key_set"] = bool(os.environ.get(needed))
            if not details["api_key_set"]:
                return Check(
                    section,
                    PROBLEM,
                    f"{model}: ${needed} is not set",
                    f"export {needed}=... or set {section}.api_key_env",
                    details,
                )
        return Check(
            section,
            NOTE,
            f"{model}: reachability not checked (no {section}.api_base)",
            details=details,
        )
    if not ctx["network"]:
        return Check(
            section, NOTE, f"{model} at {api_base}: not checked (--offline)", details=details
        )
    key = os.environ.get(key_env) if key_env else None
    probe = probe_models(api_base, ctx["timeout"], key)
    details.update(probe)
    where = f"{model} at {api_base}"
    if not probe["reachable"]:
        return Check(
            section,
            PROBLEM,
            f"{where}: unreachable ({probe['error']})",
            f"start the server or fix {section}.api_base; 'memcli config' shows where it is set",
            details,
        )
    status = probe["status"]
    if status in (401, 403):
        return Check(
            section,
            PROBLEM,
            f"{where}: the server refused the credentials (HTTP {status})",
            f"check the key in ${key_env or 'the provider variable'}",
            details,
        )
    listed = probe["models"]
    if listed is not None and not _model_listed(model, listed):
        return Check(
            section,
            NOTE,
            f"{where}: reachable, but the server does not list this model",
            f"models offered: {', '.join(listed[:8]) or 'none'}",
            details,
        )
    return Check(section, OK, f"{where}: reachable (HTTP {status})", details=details)


def _search_mode(ctx: dict[str, Any]) -> dict[str, Any] | None:
    """What ``memcli status`` would say about vectors (read-only, no provider call)."""
    ws = ctx["ws"]
    if not ws.index_path.is_file():
        return None
    from memcli.index.store import Store
    from memcli.providers.embeddings import status_info

    conn = db.connect(ws.index_path, readonly=True)
    try:
        info = status_info(Store(ws.index_path, conn), ctx["settings"])
    except Exception as exc:  # an index that cannot say: the index check reports why
        return {"error": str(exc)}
    finally:
        conn.close()
    return {
        "mode": info["mode"],
        "mode_reason": info["mode_reason"],
        "coverage": info["embedding"].get("coverage"),
    }


def _model_listed(model: str, listed: list[str]) -> bool:
    name = model.split("/", 1)[1] if "/" in model else model
    candidates = {model, name, f"{name}:latest"}
    return any(m in candidates or m.removesuffix(":latest") == name for m in listed)


def probe_models(api_base: str, timeout: float, key: str | None = None) -> dict[str, Any]:
    """GET ``{api_base}/models``: any HTTP answer means reachable; lists model ids if it can."""
    url = api_base.rstrip("/") + "/models"
    headers = {"User-Agent": f"memcli/{__version__}", "Accept": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    result: dict[str, Any] = {
        "url": url,
        "reachable": False,
        "status": None,
        "models": None,
        "error": None,
    }
    request = urllib.request.Request(url, headers=headers, method="GET")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            result["status"] = response.status
            body = response.read(1 << 20)
    except urllib.error.HTTPError as exc:
        result.update(reachable=True, status=exc.code)
        return result
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        result["error"] = str(reason) or type(reason).__name__
        if isinstance(reason, TimeoutError) or "timed out" in str(reason):
            result["error"] = f"no answer within {timeout:g}s"
        return result
    result["reachable"] = True
    try:
        data = json.loads(body)
        items = data.get("data") if isinstance(data, dict) else None
        if isinstance(items, list):
            result["models"] = [str(i.get("id")) for i in items if isinstance(i, dict)]
    except ValueError:
        pass
    return result


# -- git hooks and cache ----------------------------------------------------------------------
def _hooks(ctx: dict[str, Any]) -> Check:
    ws = ctx.get("ws")
    if ws is None:
        return Check("hooks", NOTE, "no workspace", details={"hooks": []})
    from memcli.git.gitops import find_git_root

    if find_git_root(ws.root) is None:
        return Check(
            "hooks",
            NOTE,
            "not a git repository: no hooks",
            "memcli init --git --hooks",
            {"hooks": []},
        )
    from memcli.git import hooks

    report = hooks.status(ws.root)
    states = {h.name: h.state for h in report.hooks}
    details = {"hooks_dir": report.hooks_dir, "hooks": [h.as_dict() for h in report.hooks]}
    broken = [
        h.name
        for h in report.hooks
        if h.state == "modified"
        or (h.state == "installed" and h.python and not os.access(h.python, os.X_OK))
    ]
    if broken:
        return Check(
            "hooks",
            PROBLEM,
            f"hooks need reinstalling: {', '.join(broken)} (edited, or their Python is gone)",
            "memcli hooks install",
            details,
        )
    installed = [n for n, s in states.items() if s == "installed"]
    if len(installed) == len(states):
        return Check("hooks", OK, f"installed: {', '.join(installed)}", details=details)
    missing = [n for n, s in states.items() if s != "installed"]
    what = "not installed" if not installed else f"missing: {', '.join(missing)}"
    return Check(
        "hooks",
        NOTE,
        f"{what} (the index is refreshed by the next command instead)",
        "memcli hooks install",
        details,
    )


def _cache(ctx: dict[str, Any]) -> Check:
    from memcli.index.embedcache import cache_stats

    stats = cache_stats()
    limit_mb = float(ctx["settings"].get("cache.max_mb"))
    details = {**stats, "max_mb": limit_mb}
    size_mb = stats["bytes"] / (1024 * 1024)
    summary = f"{stats['entries']} vectors, {size_mb:.1f} MiB of {limit_mb:g} MiB ({stats['path']})"
    if size_mb > limit_mb * 1.1:
        return Check(
            "cache", NOTE, summary + ": over the limit until the next write evicts", details=details
        )
    return Check("cache", OK, summary, details=details)
