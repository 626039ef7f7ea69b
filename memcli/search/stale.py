"""A hit's "may be stale" mark: a repository path its facts name changed after them.

Read from the index only (``links`` and ``link_paths``, which ``memcli index`` refreshes with
one ``git log``): no git call on a search or a hook.
"""

from __future__ import annotations

from typing import Any

_FIRST = (
    "SELECT p.path, p.changed, p.commit_id FROM links l"
    " JOIN files f ON f.id = l.file_id JOIN link_paths p ON p.name = l.name"
    " WHERE f.path = ? AND l.line BETWEEN ? AND ? AND p.changed > l.since"
    " ORDER BY p.changed DESC, p.path LIMIT 1"
)


def _mark(row: Any) -> dict[str, str]:
    return {"path": row[0], "date": row[1][:10], "commit": row[2]}


def stale_mark(conn: Any, path: str, start: int, end: int) -> dict[str, str] | None:
    """``{"path", "date", "commit"}`` of the latest change to a path linked from an entry
    on lines ``start..end`` of the memory file ``path`` after that entry was last known
    true; None when there is none."""
    from memcli.index.factrows import link_rows  # with the index: not for stale_note

    rows = link_rows(conn, _FIRST, (path, start, end))
    return _mark(rows[0]) if rows else None


def stale_marks(conn: Any, spans: list[tuple[str, int, int]]) -> list[dict[str, str] | None]:
    """:func:`stale_mark` of each (memory file, first line, last line), in one query."""
    if not spans:
        return []
    values = ",".join("(?, ?, ?, ?)" for _ in spans)
    sql = (
        f"WITH s(i, path, lo, hi) AS (VALUES {values})"
        " SELECT p.path, p.changed, p.commit_id, s.i FROM s JOIN files f ON f.path = s.path"
        " JOIN links l ON l.file_id = f.id AND l.line BETWEEN s.lo AND s.hi"
        " JOIN link_paths p ON p.name = l.name WHERE p.changed > l.since"
        " ORDER BY s.i, p.changed DESC, p.path"
    )
    args = tuple(x for i, span in enumerate(spans) for x in (i, *span))
    marks: list[dict[str, str] | None] = [None] * len(spans)
    from memcli.index.factrows import link_rows  # with the index: not for stale_note

    for row in link_rows(conn, sql, args):
        if marks[row[3]] is None:
            marks[row[3]] = _mark(row)
    return marks


def stale_note(mark: dict[str, str] | None) -> str:
    """The words that show a mark: ``may be stale: `path` changed on DATE (`commit`)``."""
    if not mark:
        return ""
    path = shown_path(mark["path"])
    return f"may be stale: `{path}` changed on {mark['date']} (`{mark['commit']}`)"


def shown_path(path: str) -> str:
    """A repository path as a context block shows it between backticks: no character that
    does not print, and no backtick (a path a repository or a payload supplies)."""
    return "".join(c if c.isprintable() and c != "`" else "?" for c in path)
