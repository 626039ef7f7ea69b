"""The index's rows about facts and what they link to, read and written on the store's
connection: a fact by its hash or by a prefix of its id, the facts under review, the newest
chunks, the names facts link to and the paths they resolve to, the facts linked to a file and
those whose linked path changed since."""

from __future__ import annotations

from typing import Any, NamedTuple

from memcli.index.schema import CHUNK_TEXT, TEXT_JOIN


class RecentChunk(NamedTuple):
    """A chunk as :meth:`Store.recent_chunks` gives it."""

    path: str
    start_line: int
    text: str  # the chunk's lines (start_line is its first)
    date: str | None


def find_fact(conn: Any, fact_hash: str) -> tuple[str, int] | None:
    row = conn.execute(
        "SELECT f.path, x.line FROM facts x JOIN files f ON f.id = x.file_id"
        " WHERE x.hash = ? LIMIT 1",
        (fact_hash,),
    ).fetchone()
    return (row[0], int(row[1])) if row else None


def facts_by_prefix(conn: Any, prefix: str) -> list[tuple[str, str, int]]:
    """(key, path, line) of every fact whose key starts with ``prefix`` (a fact id)."""
    rows = conn.execute(
        "SELECT x.hash, f.path, x.line FROM facts x JOIN files f ON f.id = x.file_id"
        " WHERE x.hash >= ? AND x.hash < ? ORDER BY f.path, x.line LIMIT 50",
        (prefix, prefix + "g"),  # a range: the hash index answers it
    )
    return [(r[0], r[1], int(r[2])) for r in rows]


def chunks_needing_review(
    conn: Any, day: str
) -> list[tuple[str, int, str, str, str | None, str | None]]:
    """(path, line, text, state, expires, fact id) of facts under review or expired
    before ``day`` (chunks of one entry with status lines)."""
    rows = conn.execute(
        f"SELECT f.path, c.start_line, {CHUNK_TEXT} || c.tail, c.state, c.expires,"
        f" c.fact_id FROM chunks c JOIN files f ON f.id = c.file_id {TEXT_JOIN}"
        " WHERE c.state = 'review' OR (c.state = '' AND c.expires < ?)"
        " ORDER BY f.path, c.start_line",
        (day,),
    )
    return [(r[0], int(r[1]), r[2], r[3], r[4], r[5]) for r in rows]


def recent_chunks(
    conn: Any, limit: int, types: tuple[str, ...] = (), today: str = ""
) -> list[RecentChunk]:
    """The newest chunks, evergreen files first, then by file date and line, newest
    first; with ``types``, only chunks holding an entry of one of them; without, only
    chunks of dated files (the latest entries). Superseded and retracted facts, and
    those expired before ``today``, are left out."""
    where = "f.date IS NOT NULL"
    args: list[Any] = []
    if types:
        where = "(" + " OR ".join("(' ' || c.types || ' ') LIKE ?" for _ in types) + ")"
        args = [f"% {t.lower()} %" for t in types]
    where += " AND c.state NOT IN ('superseded', 'retracted') AND coalesce(c.expires, '9') >= ?"
    args.append(today)
    rows = conn.execute(
        f"SELECT f.path, c.start_line, {CHUNK_TEXT}, f.date FROM chunks c"
        f" JOIN files f ON f.id = c.file_id {TEXT_JOIN}"
        f" WHERE {where}"
        " ORDER BY f.evergreen DESC, f.date DESC, f.path DESC, c.start_line DESC LIMIT ?",
        (*args, limit),
    )
    return [RecentChunk(r[0], int(r[1]), r[2], r[3]) for r in rows]


def link_names(conn: Any) -> tuple[list[str], str | None]:
    """The names facts link to (:mod:`memcli.index.links`) and the earliest ``since``."""
    names = [r[0] for r in conn.execute("SELECT DISTINCT name FROM links ORDER BY 1")]
    first = conn.execute("SELECT min(since) FROM links").fetchone()[0]
    return names, first


def set_link_paths(conn: Any, rows: list[tuple[str, str, str | None, str | None]]) -> None:
    """Replace what each name resolves to: (name, path, last changed, commit) rows."""
    conn.execute("DELETE FROM link_paths")
    conn.executemany("INSERT OR REPLACE INTO link_paths VALUES (?, ?, ?, ?)", rows)


def link_rows(conn: Any, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
    """The rows of a query on the links tables; none from an index made before them
    (schema 7, read as it is when it cannot be written)."""
    try:
        return list(conn.execute(sql, args))
    except Exception as exc:
        if "no such table" in str(exc):
            return []
        raise


def undated_links(conn: Any) -> dict[str, list[int]]:
    """The lines of the linked facts with no ``since`` (undated), by memory file."""
    found: dict[str, list[int]] = {}
    for path, line in conn.execute(
        "SELECT DISTINCT f.path, l.line FROM links l JOIN files f ON f.id = l.file_id"
        " WHERE l.since IS NULL ORDER BY 1, 2"
    ):
        found.setdefault(path, []).append(int(line))
    return found


def date_undated_links(conn: Any, rows: list[tuple[str, str, int]]) -> None:
    """Set the ``since`` of the undated links of each (day, memory file, line)."""
    conn.executemany(
        "UPDATE links SET since = ? WHERE since IS NULL"
        " AND file_id = (SELECT id FROM files WHERE path = ?) AND line = ?",
        rows,
    )


def unresolved_link_names(conn: Any, files: list[str]) -> list[str]:
    """The names that facts of the memory ``files`` (or folders; ``""``: all) link to and
    no ``link_paths`` row holds."""
    under = " OR ".join(
        "? = '' OR f.path = ? OR substr(f.path, 1, length(?) + 1) = ? || '/'" for _ in files
    )
    rows = conn.execute(
        "SELECT DISTINCT l.name FROM links l JOIN files f ON f.id = l.file_id"
        f" WHERE ({under or '0'}) AND NOT EXISTS"
        " (SELECT 1 FROM link_paths p WHERE p.name = l.name) ORDER BY 1",
        [f for f in files for _ in range(4)],
    )
    return [r[0] for r in rows]


def add_link_paths(conn: Any, resolved: dict[str, list[str]]) -> None:
    """Record what more names resolve to, each path with the last change already known for
    it (a new fact is newer than any change :func:`memcli.git.changes.refresh_links`
    recorded; the next ``index`` looks again)."""
    for name, paths in resolved.items():
        conn.executemany(
            "INSERT OR REPLACE INTO link_paths VALUES (?1, ?2,"
            " (SELECT max(changed) FROM link_paths WHERE path = ?2),"
            " (SELECT commit_id FROM link_paths WHERE path = ?2"
            " ORDER BY changed DESC LIMIT 1))",
            [(name, path) for path in paths],
        )


def linked_facts(conn: Any, paths: list[str], limit: int, today: str = "") -> list[tuple[str, int]]:
    """(memory file, line) of the active facts linked to any of ``paths`` (a repository
    file and the folders holding it), those naming the longest path first, then the
    newest files; at most ``limit``. Superseded and retracted facts, and those expired
    before ``today``, are left out."""
    marks = ",".join("?" * len(paths))
    rows = link_rows(
        conn,
        "SELECT f.path, l.line FROM links l JOIN files f ON f.id = l.file_id"
        " JOIN link_paths p ON p.name = l.name"
        f" WHERE p.path IN ({marks}) AND NOT EXISTS (SELECT 1 FROM chunks c"
        " WHERE c.file_id = l.file_id AND c.start_line = l.line"
        " AND (c.state IN ('superseded', 'retracted') OR coalesce(c.expires, '9') < ?))"
        " GROUP BY f.path, l.line"
        " ORDER BY max(length(p.path)) DESC, f.evergreen DESC, f.date DESC, l.line DESC"
        " LIMIT ?",
        (*paths, today, limit),
    )
    return [(r[0], int(r[1])) for r in rows]


def stale_links(conn: Any) -> list[tuple[str, int, str, str, str]]:
    """(memory file, line, path, changed, commit) of each fact with a linked path that
    changed after it was last known true, the latest change of each; a superseded or
    retracted fact needs no decision: left out."""
    rows = link_rows(
        conn,
        "SELECT f.path, l.line, p.path, max(p.changed), p.commit_id FROM links l"
        " JOIN files f ON f.id = l.file_id JOIN link_paths p ON p.name = l.name"
        " WHERE p.changed > l.since AND NOT EXISTS (SELECT 1 FROM chunks c"
        " WHERE c.file_id = l.file_id AND c.start_line = l.line"
        " AND c.state IN ('superseded', 'retracted'))"
        " GROUP BY f.path, l.line ORDER BY f.path, l.line",
    )
    return [(r[0], int(r[1]), r[2], r[3], r[4]) for r in rows]
