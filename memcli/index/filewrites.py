"""Writing files into the index: a file's rows as the parser gives them, and the one batched
write of many files with their chunks, full-text rows, facts and links."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from itertools import chain, groupby, repeat
from typing import Any, NamedTuple

from memcli.index.schema import CHUNK_IDS

#: A chunk's ``chunks`` columns as the parser gives them: start_line, end_line, heading,
#: types, tags, hash, then, only for a chunk with status lines (memcli.notes.lifecycle),
#: state, expires, confirmed, corroborated, fact_id and tail (the status lines ending the
#: entry: shown with it, not searched). A plain tuple: the parse process sends them with
#: ``marshal``, which takes no named tuple.
ChunkValues = tuple[Any, ...]
#: A chunk's full-text columns: text, heading and grams (memcli.index.bigrams: pieces of
#: scripts written without spaces, '' for other text, stored as NULL).
TextValues = tuple[str, str, str]
_CHUNK_COLUMNS = "id, file_id, start_line, end_line, heading, types, tags, hash"
_STATUS_COLUMNS = "state, expires, confirmed, corroborated, fact_id, tail"
#: The insert of a chunk row (:data:`ChunkValues` after its id and file id) by its length:
#: without and with the status columns. Binding the six status values for every chunk cost
#: as much as the rest of the row (benchmarks/write_cost.py): they keep their defaults.
CHUNK_INSERTS = {
    8: f"INSERT INTO chunks ({_CHUNK_COLUMNS}) VALUES ({', '.join('?' * 8)})",
    14: f"INSERT INTO chunks ({_CHUNK_COLUMNS}, {_STATUS_COLUMNS}) VALUES ({', '.join('?' * 14)})",
}
#: The insert of a full-text row (:data:`TextValues` after its id). Grams are bound as ''
#: and stored as NULL: a NULL bound costs more than a string (the driver looks for an
#: adapter of None for each).
TEXT_INSERT = "INSERT INTO chunks_fts (rowid, text, heading, grams) VALUES (?, ?, ?, nullif(?, ''))"
#: ``a + b`` of two tuples, mapped over a batch's rows without a Python call per row.
_join = tuple.__add__


class FileWrite(NamedTuple):
    """One file for :meth:`Store.write_files`: its stat and hash, what the index says of it,
    its chunks and facts; ``file_id`` when it replaces a file the index holds."""

    path: str
    mtime_ns: int
    size: int
    sha256: str
    date: str | None
    source: str
    evergreen: bool
    chunks: list[ChunkValues]
    texts: list[TextValues]  # one a chunk, in the same order
    facts: list[tuple[str, int]]
    file_id: int | None = None
    links: list[tuple[int, str | None, str]] | None = None  # (line, since, name)


def write_files(
    conn: Any, writes: Sequence[FileWrite], delete_rows: Callable[[int], None]
) -> list[int]:
    """Insert or replace many files with all their chunks and facts (inside the caller's
    write transaction); their file ids, in order.

    Each table takes one ``executemany`` for the whole batch: per file, three statements
    and three batched inserts cost more than the rows themselves (a 10k-file index made
    60k calls). Ids are given, not read back: a new file gets the id SQLite would give
    (one above the largest), chunks the next ids above :data:`CHUNK_IDS`, in order, so the
    rows are those a file-by-file write makes."""
    if not writes:
        return []
    now = time.time()
    file_ids: list[int] = []
    updated = [w for w in writes if w.file_id is not None]
    dated = _known_dates(conn, updated)
    for w in updated:
        assert w.file_id is not None
        delete_rows(w.file_id)
    if updated:
        conn.executemany(
            "UPDATE files SET mtime_ns=?, size=?, sha256=?, date=?, source=?, evergreen=?,"
            " indexed_at=? WHERE id=?",
            [(*_file_values(w), now, w.file_id) for w in updated],
        )
    added: list[tuple[Any, ...]] = []
    next_id = 0
    for w in writes:
        if w.file_id is not None:
            file_ids.append(w.file_id)
            continue
        if not next_id:
            next_id = int(conn.execute("SELECT coalesce(max(id), 0) + 1 FROM files").fetchone()[0])
        file_ids.append(next_id)
        added.append((next_id, w.path, *_file_values(w), now))
        next_id += 1
    if added:
        conn.executemany(
            "INSERT INTO files (id, path, mtime_ns, size, sha256, date, source, evergreen,"
            " indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            added,
        )
    _insert_chunks(conn, file_ids, writes)
    conn.executemany(
        "INSERT INTO facts (hash, line, file_id) VALUES (?, ?, ?)",
        chain.from_iterable(
            map(_join, w.facts, repeat((file_id,)))
            for file_id, w in zip(file_ids, writes, strict=True)
        ),
    )
    conn.executemany(
        "INSERT INTO links (line, since, name, file_id) VALUES (?, ?, ?, ?)",
        chain.from_iterable(
            map(_join, _dated(w, dated) if dated else w.links or (), repeat((file_id,)))
            for file_id, w in zip(file_ids, writes, strict=True)
        ),
    )
    return file_ids


def _known_dates(conn: Any, updated: Sequence[FileWrite]) -> dict[tuple[Any, ...], str]:
    """The dates the refresh of the links gave facts of ``updated`` files that have none of
    their own (an evergreen file's: :func:`memcli.git.changes.date_undated`), by (file id,
    fact hash, name): a fact the new text keeps keeps its date, and its stale mark, until
    the next refresh, instead of losing them to a write of its file."""
    ids = [w.file_id for w in updated if w.file_id is not None and w.evergreen]
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        "SELECT l.file_id, f.hash, l.name, l.since FROM links l JOIN facts f"
        " ON f.file_id = l.file_id AND f.line = l.line"
        f" WHERE l.file_id IN ({marks}) AND l.since IS NOT NULL",
        ids,
    )
    return {(file_id, fact, name): since for file_id, fact, name, since in rows}


def _dated(w: FileWrite, dated: dict[tuple[Any, ...], str]) -> list[tuple[int, str | None, str]]:
    """``w``'s links, those without a date given the one their fact had (:func:`_known_dates`)."""
    facts = {line: fact for fact, line in w.facts}
    return [
        (line, since or dated.get((w.file_id, facts.get(line), name)), name)
        for line, since, name in w.links or ()
    ]


def _insert_chunks(conn: Any, file_ids: list[int], writes: Sequence[FileWrite]) -> None:
    """Insert the chunks of files written (:meth:`write_files`), with their full-text rows:
    the ids above :data:`CHUNK_IDS`, in order, each row its values after its ids."""
    count = sum(len(w.chunks) for w in writes)
    if not count:
        return
    first = conn.execute(
        "SELECT max(coalesce(max(id), 0),"
        " coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?), 0)) + 1"
        " FROM chunks",
        (CHUNK_IDS,),
    ).fetchone()[0]
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (CHUNK_IDS, str(first + count - 1)))
    rows: list[tuple[Any, ...]] = []
    texts: list[tuple[Any, ...]] = []
    for file_id, w in zip(file_ids, writes, strict=True):
        ids = range(first, first + len(w.chunks))
        rows += map(_join, zip(ids, repeat(file_id)), w.chunks)
        texts += map(_join, zip(ids), w.texts)
        first = ids.stop
    for width, run in groupby(rows, len):  # runs of each width keep the ids in order
        conn.executemany(CHUNK_INSERTS[width], run)
    conn.executemany(TEXT_INSERT, texts)


def _file_values(w: FileWrite) -> tuple[Any, ...]:
    """A file write's values for the columns mtime_ns, size, sha256, date, source, evergreen."""
    return (w.mtime_ns, w.size, w.sha256, w.date, w.source, int(w.evergreen))
