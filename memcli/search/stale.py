"""A hit's "may be stale" mark: a repository path its facts name changed after them.

Read from the index only (``links`` and ``link_paths``, which ``memcli index`` refreshes with
one ``git log``): no git call on a search or a hook.
"""

from __future__ import annotations

from typing import Any

_QUERY = (
    "SELECT p.path, p.changed, p.commit_id FROM links l"
    " JOIN files f ON f.id = l.file_id JOIN link_paths p ON p.name = l.name"
    " WHERE f.path = ? AND l.line BETWEEN ? AND ? AND p.changed > l.since"
    " ORDER BY p.changed DESC, p.path LIMIT 1"
)


def stale_mark(conn: Any, path: str, start: int, end: int) -> dict[str, str] | None:
    """``{"path", "date", "commit"}`` of the latest change to a path linked from an entry
    on lines ``start..end`` of the memory file ``path`` after that entry was last known
    true; None when there is none (or the index predates links)."""
    try:
        row = conn.execute(_QUERY, (path, start, end)).fetchone()
    except Exception as exc:  # an index read as it is, from before links (schema 7)
        if "no such table" in str(exc):
            return None
        raise
    if row is None:
        return None
    return {"path": row[0], "date": row[1][:10], "commit": row[2]}


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
