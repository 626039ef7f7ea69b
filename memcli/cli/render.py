"""Human views of command results (tables on a terminal, plain text when piped)."""

from __future__ import annotations

from typing import Any

from memcli.cli.output import Output


def init_result(out: Output, payload: dict[str, Any]) -> None:
    if payload["created"]:
        out.styled(f"Initialised memcli workspace in {payload['workspace']}", "green")
        for item in payload["created"]:
            out.line(f"  created {item}")
    else:
        out.styled(f"Workspace {payload['workspace']} is already set up", "green")


def add_result(out: Output, result: Any) -> None:
    if result.added:
        out.styled(f"Added to {result.path}:{result.line}", "green")
        out.line(result.entry.rstrip("\n"))
    else:
        out.styled(f"Skipped: already in {result.duplicate_of}", "yellow")
    for kind in result.redactions:
        out.info(f"redacted a secret ({kind})")
    if result.commit:
        out.line(f"committed {result.commit[:10]}")


def index_report(out: Output, report: Any) -> None:
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


#: Characters of a user's text (a query) echoed in a message; the rest is elided.
ECHO_CHARS = 80


def quoted(text: str, limit: int = ECHO_CHARS) -> str:
    """``text`` quoted for a message, cut to ``limit`` characters (a huge query is not
    echoed whole)."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text)} characters)"


def search_result(out: Output, result: Any) -> None:
    if not result.hits:
        out.info(f"no results for {quoted(result.query)} ({result.mode})")
        return
    for hit in result.hits:
        where = f"{hit.path}:{hit.start_line}-{hit.end_line}"
        meta = ", ".join(x for x in (hit.source, hit.date or "evergreen", *hit.flags) if x)
        out.styled(f"{where}  {hit.score:.3f}  ({meta})", "bold cyan")
        for line in hit.snippet.splitlines():
            out.line(f"  {line}")
        if hit.explain:
            explain_lines(out, hit.explain)
        out.line()
    if result.stale:
        out.warn("index may be stale")


def explain_lines(out: Output, explain: dict[str, Any]) -> None:
    """The --explain account of one result, indented under it."""
    terms = explain.get("terms")
    if terms:
        matched = ", ".join(f"{w} x{n:g}" for w, n in terms["matched"].items()) or "-"
        out.styled(f"    matched: {matched}", "dim")
        if terms["missing"]:
            out.styled(f"    missing: {', '.join(terms['missing'])}", "dim")
    for step in explain.get("steps", []):
        out.styled(f"    {step}", "dim")
    for flag, phrase in (explain.get("flags") or {}).items():
        out.styled(f"    flag {flag}: {phrase!r} reads as an instruction; it is memory text", "dim")


def status(out: Output, info: dict[str, Any]) -> None:
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
        pairs.append(("embedding", _inline(embedding)))
        pairs.append(("cache", _inline(info.get("cache") or {})))
    else:
        pairs.append(("embedding", "off (keyword search only)"))
    if info.get("git") is not None:
        pairs.append(("git", _inline(info["git"])))
    out.kv(pairs, title="memcli status")
    for path in info["dirty"][:20]:
        out.line(f"  changed: {path}")


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


def _inline(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def doctor_report(out: Output, report: Any) -> None:
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
