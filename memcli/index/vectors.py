"""The ``chunks_vec`` table: sqlite-vec ``vec0`` vectors of chunks, kept in step with them.

One vector per embedded chunk, stored under the chunk's id (``rowid``), compared with cosine
distance and queried with a KNN ``MATCH ... AND k = ?`` (sqlite-vec's own nearest-neighbour
scan, never a Python loop over rows). ``chunks.embedded`` records which chunks have a vector;
``meta`` records the fingerprint and dimension of the vectors so vectors of two models never
mix. Every function expects sqlite-vec to be loaded on the store (``store.ensure_vec()``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memcli.index.embedcache import pack
from memcli.index.schema import CHUNK_TEXT, TEXT_JOIN
from memcli.index.store import Store

TABLE = "chunks_vec"
META_FINGERPRINT = "embedding"
META_DIMS = "embedding_dims"
META_DIRTY = "vec_dirty"  # set when rows were deleted while sqlite-vec could not be loaded
#: sqlite-vec's largest k for a KNN query.
MAX_K = 4096
_STEP = 400
#: A KNN query reads every vector; through a memory map it does not copy them page by page.
_MMAP_BYTES = 256 * 1024 * 1024


def index_fingerprint(store: Store) -> str | None:
    """Fingerprint of the vectors in the index (None: no vectors yet)."""
    return store.get_meta(META_FINGERPRINT)


def index_dims(store: Store) -> int | None:
    value = store.get_meta(META_DIMS)
    return int(value) if value and store.has_table(TABLE) else None


def create(store: Store, fingerprint: str, dims: int) -> None:
    """Create the vec0 table for ``dims``-dimensional cosine vectors (inside a transaction)."""
    if dims < 1:
        raise ValueError("vectors need at least one dimension")
    store.conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {TABLE}"
        f" USING vec0(embedding float[{int(dims)}] distance_metric=cosine)"
    )
    store.set_meta(META_FINGERPRINT, fingerprint)
    store.set_meta(META_DIMS, str(int(dims)))


def drop(store: Store) -> None:
    """Forget every vector (fingerprint change): drop the table, mark all chunks unembedded."""
    store.conn.execute(f"DROP TABLE IF EXISTS {TABLE}")
    store.conn.execute("UPDATE chunks SET embedded = 0 WHERE embedded != 0")
    store.conn.execute(
        "DELETE FROM meta WHERE key IN (?, ?, ?)", (META_FINGERPRINT, META_DIMS, META_DIRTY)
    )


def insert(store: Store, ids: Sequence[int], vectors: Sequence[Sequence[float]]) -> None:
    """Store one vector per chunk id and mark those chunks embedded (inside a transaction).

    vec0 has no upsert, so an existing row under the same id is deleted first (point deletes:
    vec0 answers ``rowid IN (...)`` outside a KNN query with a scan of every vector).
    """
    conn = store.conn
    conn.executemany(f"DELETE FROM {TABLE} WHERE rowid = ?", [(int(i),) for i in ids])
    for start in range(0, len(ids), _STEP):
        part = list(ids[start : start + _STEP])
        marks = ",".join("?" * len(part))
        conn.execute(f"UPDATE chunks SET embedded = 1 WHERE id IN ({marks})", part)
    conn.executemany(
        f"INSERT INTO {TABLE} (rowid, embedding) VALUES (?, ?)",
        [(int(i), pack(v)) for i, v in zip(ids, vectors, strict=True)],
    )


def pending(store: Store, limit: int, after: int = 0) -> list[tuple[int, str]]:
    """Chunks without a vector, (id, text), in id order, ids above ``after``."""
    rows = store.conn.execute(
        f"SELECT c.id, {CHUNK_TEXT} FROM chunks c {TEXT_JOIN}"
        " WHERE c.embedded = 0 AND c.id > ? ORDER BY c.id LIMIT ?",
        (after, limit),
    )
    return [(int(r[0]), r[1]) for r in rows]


def still_pending(store: Store, todo: Sequence[tuple[int, str]]) -> list[bool]:
    """For each (id, text) of :func:`pending`: does that chunk still wait for a vector with
    that text? (Another process may have re-indexed its file meanwhile.)"""
    ids = [cid for cid, _ in todo]
    now: dict[int, str] = {}
    for start in range(0, len(ids), _STEP):
        part = ids[start : start + _STEP]
        rows = store.conn.execute(
            f"SELECT c.id, {CHUNK_TEXT} FROM chunks c {TEXT_JOIN}"
            f" WHERE c.embedded = 0 AND c.id IN ({','.join('?' * len(part))})",
            part,
        )
        now.update((int(r[0]), r[1]) for r in rows)
    return [now.get(cid) == text for cid, text in todo]


def pending_count(store: Store) -> int:
    return int(store.conn.execute("SELECT count(*) FROM chunks WHERE embedded = 0").fetchone()[0])


def coverage(store: Store) -> tuple[int, int]:
    """(chunks with a vector, all chunks)."""
    sql = "SELECT count(*), coalesce(sum(embedded != 0), 0) FROM chunks"
    row = store.conn.execute(sql).fetchone()
    return int(row[1]), int(row[0])


def purge_orphans(store: Store) -> int:
    """Delete vectors of chunks that are gone or unembedded (after deletes without sqlite-vec)."""
    if not store.get_meta(META_DIRTY) or not store.has_table(TABLE):
        return 0
    with store.transaction():
        cur = store.conn.execute(
            f"DELETE FROM {TABLE} WHERE rowid NOT IN (SELECT id FROM chunks WHERE embedded = 1)"
        )
        store.conn.execute("DELETE FROM meta WHERE key = ?", (META_DIRTY,))
    return max(int(cur.rowcount or 0), 0)


def knn(
    store: Store,
    vector: Sequence[float],
    k: int,
    filter_sql: str = "",
    filter_args: Sequence[Any] = (),
) -> dict[int, float]:
    """The ``k`` nearest chunks to ``vector`` as chunk id -> cosine similarity in [0, 1].

    ``filter_sql`` (`` AND ...`` over ``c`` = chunks and ``f`` = files, as for keyword search)
    restricts the candidates *before* the KNN scan (``rowid IN (...)``), so a filter never
    starves the result. Vectors of missing or unembedded chunks are never returned.
    """
    if not store.has_table(TABLE) or k < 1:
        return {}
    if not getattr(store, "_vec_mmap", False):
        store.conn.execute(f"PRAGMA mmap_size = {_MMAP_BYTES}")
        store._vec_mmap = True  # type: ignore[attr-defined]
    k = min(int(k), MAX_K)
    blob = pack(vector)
    if filter_sql:
        sql = (
            f"SELECT rowid, distance FROM {TABLE} WHERE embedding MATCH ? AND k = ?"
            " AND rowid IN (SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id"
            f" WHERE c.embedded = 1{filter_sql}) ORDER BY distance"
        )
        rows = store.conn.execute(sql, (blob, k, *filter_args)).fetchall()
    else:
        sql = (
            f"SELECT rowid, distance FROM {TABLE} WHERE embedding MATCH ? AND k = ?"
            " ORDER BY distance"
        )
        rows = store.conn.execute(sql, (blob, k)).fetchall()
        rows = _only_embedded(store, rows)
    return {int(r[0]): _similarity(r[1]) for r in rows}


def similarities(store: Store, vector: Sequence[float], ids: Sequence[int]) -> dict[int, float]:
    """Cosine similarity of ``vector`` to those chunks' vectors (only the given rows are read,
    one point query each: vec0 scans every vector for ``rowid IN (...)``)."""
    if not ids or not store.has_table(TABLE):
        return {}
    ok = _embedded_ids(store, ids)
    blob = pack(vector)
    sql = f"SELECT vec_distance_cosine(embedding, ?) FROM {TABLE} WHERE rowid = ?"
    out: dict[int, float] = {}
    for cid in ids:
        if cid in ok:
            row = store.conn.execute(sql, (blob, cid)).fetchone()
            if row is not None:
                out[cid] = _similarity(row[0])
    return out


def _only_embedded(store: Store, rows: list[Any]) -> list[Any]:
    ok = _embedded_ids(store, [int(r[0]) for r in rows])
    return [r for r in rows if int(r[0]) in ok]


def _embedded_ids(store: Store, ids: Sequence[int]) -> set[int]:
    """Those of ``ids`` that are chunks with a current vector."""
    out: set[int] = set()
    for start in range(0, len(ids), _STEP):
        part = list(ids[start : start + _STEP])
        rows = store.conn.execute(
            f"SELECT id FROM chunks WHERE embedded = 1 AND id IN ({','.join('?' * len(part))})",
            part,
        )
        out.update(int(r[0]) for r in rows)
    return out


def _similarity(distance: float | None) -> float:
    """Cosine distance (0..2) -> similarity clipped to [0, 1]."""
    if distance is None:
        return 0.0
    return min(1.0, max(0.0, 1.0 - float(distance)))
