"""A search's hits as people read them: the stable plain form (piped, ``--format text``) and
a Rich table with the query's words highlighted (a styled terminal), from the view that a
search in process and the workspace's engine both hand over
(:meth:`memcli.search.results.SearchResult.view`)."""

from __future__ import annotations

import re
from typing import Any

from memcli.cli.output import Output, safe_text
from memcli.search.stale import stale_note

__all__ = ["ECHO_CHARS", "explain_lines", "hits", "quoted"]

#: Characters of a user's text (a query) echoed in a message; the rest is elided.
ECHO_CHARS = 80


def quoted(text: str, limit: int = ECHO_CHARS) -> str:
    """``text`` quoted for a message, cut to ``limit`` characters (a huge query is not
    echoed whole)."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text)} characters)"


def hits(out: Output, view: dict[str, Any], *, table: bool = False) -> None:
    """The hits of ``view`` as a Rich table (``table``: a styled terminal), else the stable
    plain form: ``path:start-end  score  (source, date)`` and the snippet's lines, indented."""
    data = view["result"]
    if not data["results"]:
        out.info(f"no results for {quoted(data['query'])} ({data['mode']})")
        return
    scored = list(zip(data["results"], view["scores"], strict=True))
    if table:
        stems = _query_stems(data["query"], view["stems"])
        out.rich(_hits_table(scored, stems, out.width))
    else:
        for hit, score in scored:
            where = f"{hit['path']}:{hit['start_line']}-{hit['end_line']}"
            meta = ", ".join(
                x for x in (hit["source"], hit["date"] or "evergreen", *hit["flags"]) if x
            )
            out.styled(f"{where}  {score:.3f}  ({meta})", "bold cyan")
            if hit.get("stale"):
                out.line(f"  {stale_note(hit['stale'])}")
            for line in hit["snippet"].splitlines():
                out.line(f"  {line}")
            if hit.get("explain"):
                explain_lines(out, hit["explain"])
            out.line()
    if data["stale"]:
        out.warn("index may be stale")


#: An entry's ``[type]``; blanks within the line only (``\s*`` at a line start ran over every
#: blank line after it, once per line: a pass per line).
_ENTRY_TYPE = re.compile(
    r"^[^\S\n]*[-*+][^\S\n]+(?:\d{1,2}:\d{2}[^\S\n]+)?\[([^\]\n]+)\]", re.MULTILINE
)
_WORD = re.compile(r"\w+")


#: Below this terminal width the citation goes above the snippet, in its column: at 80
#: columns a column of its own left the snippet 27 and wrapped a fact every few words.
WIDE = 110


def _hits_table(
    scored: list[tuple[dict[str, Any], float]], stems: set[str], width: int = WIDE
) -> Any:
    """The hits with their scores as a Rich table: rank, score, citation, type and date, and
    the snippet with the query's words highlighted, the snippet column taking the width left
    (on a terminal narrower than :data:`WIDE`, under the citation in the same column)."""
    from rich.table import Table  # Rich: only a styled terminal draws this table
    from rich.text import Text

    narrow = width < WIDE
    table = Table(header_style="bold", expand=True, show_lines=True)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("score", justify="right", no_wrap=True)
    if not narrow:
        table.add_column("citation · type · date", overflow="fold", max_width=36)
    table.add_column(
        "citation · type · date / snippet" if narrow else "snippet",
        overflow="fold",
        ratio=1,
        min_width=24,
    )
    for rank, (hit, score) in enumerate(scored, 1):
        kinds = list(dict.fromkeys(m.lower() for m in _ENTRY_TYPE.findall(hit["snippet"])))
        about = " · ".join([*kinds, hit["date"] or "evergreen", *hit["flags"]])
        where = Text(
            safe_text(f"{hit['path']}:{hit['start_line']}-{hit['end_line']}"), style="cyan"
        )
        where.append("\n" + safe_text(about), style="dim")
        if hit.get("stale"):
            where.append("\n" + safe_text(stale_note(hit["stale"])), style="yellow")
        snippet = _highlighted(Text, safe_text(hit["snippet"]), stems)
        if hit.get("explain"):
            for line in _explain_text(hit["explain"]):
                snippet.append("\n" + safe_text(line), style="dim")
        # Text, not str: memory text is never read as Rich markup
        if narrow:
            table.add_row(Text(str(rank)), Text(f"{score:.3f}"), Text("\n").join([where, snippet]))
        else:
            table.add_row(Text(str(rank)), Text(f"{score:.3f}"), where, snippet)
    return table


def _query_stems(query: str, matched: list[list[str] | None]) -> set[str]:
    """Lower-case query words and the stems the ranking matched (when it kept them)."""
    stems = {w.lower() for w in _WORD.findall(query) if len(w) > 1}
    for found in matched:
        if found is not None:
            stems.update(s for s in found if len(s) > 1)
    return stems


def _highlighted(text_class: Any, snippet: str, stems: set[str]) -> Any:
    """``snippet`` with each word that a query word or stem matches in bold yellow: the
    word itself, or a stem of three letters or more plus at most a short ending."""
    text = text_class(snippet)
    for m in _WORD.finditer(snippet):
        word = m.group().lower()
        if word in stems or any(
            len(s) >= 3 and word.startswith(s) and len(word) - len(s) <= 3 for s in stems
        ):
            text.stylize("bold yellow", m.start(), m.end())
    return text


def _explain_text(explain: dict[str, Any]) -> list[str]:
    """The --explain account of one result as lines (what :func:`explain_lines` prints)."""
    lines: list[str] = []
    terms = explain.get("terms")
    if terms:
        matched = ", ".join(f"{w} x{n:g}" for w, n in terms["matched"].items()) or "-"
        lines.append(f"matched: {matched}")
        if terms["missing"]:
            lines.append(f"missing: {', '.join(terms['missing'])}")
    if explain.get("near"):
        near = ", ".join(f"{pair} x{n}" for pair, n in explain["near"].items())
        lines.append(f"near each other: {near}")
    lines.extend(str(step) for step in explain.get("steps", []))
    for flag, phrase in (explain.get("flags") or {}).items():
        lines.append(f"flag {flag}: {phrase!r} reads as an instruction; it is memory text")
    return lines


def explain_lines(out: Output, explain: dict[str, Any]) -> None:
    """The --explain account of one result, indented under it."""
    for line in _explain_text(explain):
        out.styled(f"    {line}", "dim")
