"""Human views of command results (tables on a terminal, plain text when piped)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from memcli.cli.output import Output

if TYPE_CHECKING:
    from memcli.doctor.report import DoctorReport
    from memcli.git.sync import SyncResult
    from memcli.index.indexer import IndexReport


def init_result(out: Output, payload: dict[str, Any]) -> None:
    if payload["created"]:
        out.styled(f"Initialised memcli workspace in {payload['workspace']}", "green")
        for item in payload["created"]:
            out.line(f"  created {item}")
    else:
        out.styled(f"Workspace {payload['workspace']} is already set up", "green")


def local_models(out: Output, rows: list[dict[str, Any]]) -> None:
    """The local models ``init --local --local-model NAME`` can set, with what each costs."""
    out.table(
        [
            "model",
            "languages",
            "size",
            "load",
            "per text indexed",
            "per query",
            "recall floor, margin",
        ],
        [
            [
                r["short"] + (" (default)" if r["default"] else ""),
                r["languages"],
                f"{r['size_mb']} MB",
                f"{r['load_s']} s",
                f"{r['passage_ms']:g} ms",
                f"{r['query_ms']:g} ms",
                f"{r['recall_rule']['floor']:g}, {r['recall_rule']['margin']:+g}",
            ]
            for r in rows
        ],
        right=["size", "load", "per text indexed", "per query", "recall floor, margin"],
    )
    out.info("memcli init --local --local-model NAME --model-path FOLDER sets one up")


class Added(Protocol):
    """A fact ``memcli add`` added or found: an ``AddResult`` in process, or what the engine
    answered (:class:`memcli.cli.via_engine.Added`)."""

    @property
    def added(self) -> bool: ...
    @property
    def path(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def entry(self) -> str: ...
    @property
    def duplicate_of(self) -> str | None: ...
    @property
    def redactions(self) -> list[str]: ...
    @property
    def commit(self) -> str | None: ...


def add_result(out: Output, result: Added) -> None:
    """What ``memcli add`` prints of a fact it added (in process, or by the engine)."""
    if result.added:
        out.styled(f"Added to {result.path}:{result.line}", "green")
        out.line(result.entry.rstrip("\n"))
    else:
        out.styled(f"Skipped: already in {result.duplicate_of}", "yellow")
    for kind in result.redactions:
        out.info(f"redacted a secret ({kind})")
    if result.commit:
        out.line(f"committed {result.commit[:10]}")


def index_report(out: Output, report: IndexReport) -> None:
    d = report.as_dict()
    out.table(
        ["added", "updated", "removed", "unchanged", "files", "chunks", "seconds"],
        [
            [
                d["added"],
                d["updated"],
                d["removed"],
                d["unchanged"],
                d["files"],
                d["chunks"],
                f"{d['seconds']:.2f}",
            ]
        ],
        right=["added", "updated", "removed", "unchanged", "files", "chunks", "seconds"],
    )


def status(out: Output, info: dict[str, Any]) -> None:
    """``key: value`` lines when piped, a two-column table on a terminal."""
    pairs: list[tuple[str, Any]] = [
        ("workspace", info["workspace"]),
        ("index", info["index"]),
        ("files", info["files"]),
        ("chunks", info["chunks"]),
        ("mode", f"{info['mode']} ({info['mode_reason']})"),
        ("last indexed", info["last_indexed"] or "never"),
        ("dirty", len(info["dirty"])),
    ]
    embedding = info.get("embedding") or {}
    if embedding.get("model"):
        pairs.append(("embedding", _embedding_line(embedding)))
        pairs.append(("cache", _cache_line(info.get("cache") or {})))
    else:
        pairs.append(("embedding", "off (keyword search only)"))
    if info.get("git") is not None:
        pairs.append(("git", _git_line(info["git"])))
    pairs.append(("engine", _engine_line(info.get("engine"))))
    if info.get("sessions") is not None:
        pairs.append(("sessions", _sessions_line(info["sessions"])))
    out.kv(pairs, title="memcli status")
    for path in info["dirty"][:20]:
        out.line(f"  changed: {path}")


def _sessions_line(s: dict[str, Any]) -> str:
    """What saves the agents' sessions as facts (``status --json``: ``sessions``)."""
    if s["backend"] == "agent":
        return f"saved by the agent's own CLI ({', '.join(s['agents'])})"
    if s["on"]:
        return f"saved by {s['model']}"
    return "not saved (no llm.model, no agent CLI)"


def _engine_line(e: dict[str, Any] | None) -> str:
    if not e:
        return "not running (commands answer in process)"
    watch = "watching" if e.get("watch_ready") else "not watching"
    known = e.get("bounds") or {}
    if known.get("ready"):
        bounds = f"score bounds for {known.get('terms', 0)} terms"
    else:
        bounds = "learning score bounds"
    return f"pid {e['pid']}, {e['requests']} requests, {watch}, {bounds}"


def _embedding_line(e: dict[str, Any]) -> str:
    parts = [str(e["model"])]
    if e.get("dimensions"):
        parts.append(f"{e['dimensions']} dims")
    parts.append(f"{e.get('vectors', 0)} of {e.get('chunks', 0)} chunks have vectors")
    if e.get("index_model"):
        parts.append(f"index holds {e['index_model']} vectors")
    return ", ".join(parts)


def _cache_line(c: dict[str, Any]) -> str:
    entries = int(c.get("entries") or 0)
    size = _size(int(c.get("bytes") or 0))
    return f"{entries} vector{'s' if entries != 1 else ''}, {size} in {c.get('path', '-')}"


def _git_line(g: dict[str, Any]) -> str:
    parts = [f"branch {g['branch']}" if g.get("branch") else "detached HEAD"]
    dirty = g.get("dirty_memory_files") or []
    if dirty:
        shown = ", ".join(dirty[:3]) + (f" and {len(dirty) - 3} more" if len(dirty) > 3 else "")
        parts.append(
            f"{len(dirty)} uncommitted memory file{'s' if len(dirty) != 1 else ''} ({shown})"
        )
    else:
        parts.append("memory committed")
    if g.get("ahead") is None:
        parts.append("no upstream")
    else:
        parts.append(f"{g['ahead']} ahead, {g['behind']} behind upstream")
    return ", ".join(parts)


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def sync_result(out: Output, result: SyncResult, report: IndexReport, *, pushing: bool) -> None:
    """One line that says what the sync did, then the memory files the pull changed."""
    out.styled(sync_line(result, report, pushing=pushing), "green")
    for path in result.changed:
        out.line(f"  changed: {path}")


def sync_line(result: SyncResult, report: IndexReport, *, pushing: bool) -> str:
    """``main <-> origin/main: committed 3f2a..., pulled 2 commits (rebase), pushed 1 commit;
    re-indexed 1 file`` (``after 3 attempts`` when other clones pushed at the same time)."""

    def commits(n: int) -> str:
        return f"{n} commit{'s' if n != 1 else ''}"

    did: list[str] = []
    if result.committed:
        did.append(f"committed {result.committed[:10]}")
    if result.pulled:
        did.append(f"pulled {commits(result.pulled)} ({result.strategy})")
    if result.pushed:
        did.append(f"pushed {commits(result.pushed)}")
    if not did:
        did.append("already in step, nothing to pull" + (" or push" if pushing else ""))
    elif not pushing:
        did.append("push skipped")
    files = report.added + report.updated + report.removed
    indexed = f"re-indexed {files} file{'s' if files != 1 else ''}" if files else "index current"
    line = f"{result.branch} <-> {result.upstream}: {', '.join(did)}; {indexed}"
    if result.attempts > 1:
        line += f" (after {result.attempts} attempts in {result.seconds:.1f}s: other clones pushed)"
    return line


def files(out: Output, rows: list[dict[str, Any]]) -> None:
    out.table(
        ["path", "chunks", "source", "date", "evergreen"],
        [
            [
                r["path"],
                r["chunks"],
                r["source"],
                r["date"] or "-",
                "yes" if r["evergreen"] else "no",
            ]
            for r in rows
        ],
        right=["chunks"],
    )


def doctor_report(out: Output, report: DoctorReport) -> None:
    out.table(
        ["check", "status", "summary"],
        [[c.name, c.status, c.summary] for c in report.checks],
        title="memcli doctor",
    )
    for c in report.checks:
        if c.hint and c.status != "ok":
            out.line(f"{c.name}: {c.hint}")
    n = len(report.problems)
    if n:
        out.styled(
            f"{n} problem{'s' if n != 1 else ''} need{'s' if n == 1 else ''} attention", "bold red"
        )
    else:
        out.styled("no problems found", "green")
