"""Keyword candidates: the FTS5 BM25 query over chunks, filters in SQL, loading hits."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memcli.index.parallel_rank import data_version, split_point
from memcli.index.schema import CHUNK_TEXT, TEXT_JOIN
from memcli.index.store import Store
from memcli.notes.scan import glob_to_regex
from memcli.notes.workspace import MEMORY_DIR
from memcli.search import ranking
from memcli.search.options import Filters
from memcli.search.query import KEYWORD_WEIGHTS, ParsedQuery
from memcli.search.results import Hit

if TYPE_CHECKING:
    from memcli.search import pruning


def filter_sql(filters: Filters, store: Store) -> tuple[str, list[Any]]:
    where: list[str] = []
    args: list[Any] = []
    if filters.sources:
        where.append(f"f.source IN ({','.join('?' * len(filters.sources))})")
        args.extend(filters.sources)
    for col, values in (("c.types", filters.types), ("c.tags", filters.tags)):
        if values:
            where.append("(" + " OR ".join(f"(' ' || {col} || ' ') LIKE ?" for _ in values) + ")")
            args.extend(f"% {v.lower().lstrip('#')} %" for v in values)
    if filters.since:
        where.append("f.date >= ?")
        args.append(filters.since)
    if filters.until:
        where.append("f.date <= ?")
        args.append(filters.until)
    if filters.path_glob:
        matches = path_matcher(filters.path_glob)
        store.conn.create_function("memcli_glob", 1, lambda p: 1 if matches(p) else 0)
        where.append("memcli_glob(f.path)")
    return ("".join(f" AND {w}" for w in where)), args


def path_matcher(pattern: str) -> Callable[[str], bool]:
    """What ``--path PATTERN`` keeps, given a workspace-relative path (``memory/...``).

    The pattern is a shell glob (``*`` and ``?`` within a folder, ``**`` across folders,
    ``[...]``) or a plain prefix (``memory/coder``), written from the workspace or from the
    memory folder (``coder/*`` is ``memory/coder/*``). A pattern without ``/`` also matches
    file names in any folder (``*.md``, ``2026-11-*``)."""
    pattern = pattern.strip().removeprefix("./")
    if not any(ch in pattern for ch in "*?["):
        prefix = pattern.rstrip("/")

        def under(path: str) -> bool:
            forms = _forms(path)
            if any(rel == prefix or rel.startswith(prefix + "/") for rel in forms):
                return True
            return "/" not in prefix and _name(path) == prefix

        return under
    rx = glob_to_regex(pattern)
    if "/" not in pattern.rstrip("/"):
        return lambda p: rx.match(_name(p)) is not None or any(rx.match(r) for r in _forms(p))
    return lambda p: any(rx.match(rel) for rel in _forms(p))


def _forms(path: str) -> tuple[str, ...]:
    """A path as given (from the workspace) and from inside the memory folder."""
    inner = path.removeprefix(f"{MEMORY_DIR}/")
    return (path, inner) if inner != path else (path,)


def _name(path: str) -> str:
    return path.rpartition("/")[2]


def keyword_candidates(
    store: Store, parsed: ParsedQuery, filters: Filters, limit: int
) -> dict[int, tuple[float, str | None]]:
    """Chunk id -> (FTS5 BM25 magnitude, None) for the best ``limit`` matching chunks (ties:
    the lower id first). With learnt score bounds (the engine's) only the chunks that can
    rank are scored (:mod:`memcli.search.pruning`); a large index is ranked in two halves at
    once (:mod:`memcli.index.parallel_rank`)."""
    extra, args = filter_sql(filters, store)
    prune = None
    if store.bounds is not None:  # the engine's: only it loads the pruning code
        from memcli.search import pruning

        prune = pruning.plan(store, parsed, KEYWORD_WEIGHTS, limit)
    rows = None
    if prune is not None:
        rows = _best(store, parsed, filters, limit, (extra, args), prune)
        if rows is None or not prune.holds(rows, limit) or data_version(store) != prune.version:
            rows = None  # a chunk left out could rank, or the index changed meanwhile
        else:
            store.bounds.count_pruned()
    if rows is None:
        rows = _best(store, parsed, filters, limit, (extra, args))
    return {int(r[0]): (float(r[1]), None) for r in rows or ()}


def _best(
    store: Store,
    parsed: ParsedQuery,
    filters: Filters,
    limit: int,
    where: tuple[str, list[Any]],
    prune: pruning.Plan | None = None,
) -> list[Any] | None:
    """The top ``limit`` (id, score) rows, ``where`` the filters' SQL; with ``prune``, of
    its essential chunks only, or None when a commit came between the halves."""
    extra, args = where
    if extra:
        head = (
            "SELECT c.id, -bm25(chunks_fts, ?, ?, ?) AS s"
            " FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid"
            " JOIN files f ON f.id = c.file_id"
        )
    else:  # no filter: no join for every match (half the time of a common-word query)
        head = "SELECT rowid, -bm25(chunks_fts, ?, ?, ?) AS s FROM chunks_fts"

    def query(op: str = "", at: int = 0) -> tuple[str, tuple[Any, ...]]:
        """The query, of the chunks with ids ``op`` ``at`` (``<=`` or ``>``) when ``op``."""
        half, halves = (f" AND chunks_fts.rowid {op} ?", (at,)) if op else ("", ())
        essential, within = "", ()
        if prune is not None:  # the essential chunks, and those newer than a bound
            inner = f" AND rowid {op} ?" if op else ""
            essential = (
                " AND (+chunks_fts.rowid IN (SELECT rowid FROM chunks_fts"
                f" WHERE chunks_fts MATCH ?{inner}) OR +chunks_fts.rowid > ?)"
            )
            within = (prune.essential, *halves, prune.newer)
        sql = f"{head} WHERE chunks_fts MATCH ?{essential}{half}{extra} ORDER BY s DESC, 1 LIMIT ?"
        return sql, (*KEYWORD_WEIGHTS, parsed.fts(), *within, *halves, *args, limit)

    # the path filter is a function of this connection's: such a query runs whole
    middle = None if filters.path_glob else split_point(store)
    if middle is not None:
        version = data_version(store)
        lower = store.second_reader().fetch(*query("<=", middle))
        upper = store.conn.execute(*query(">", middle)).fetchall()
        halves = [*lower.result(), *upper]
        if data_version(store) == version:  # else a commit came between: the halves may differ
            return sorted(halves, key=lambda r: (-r[1], r[0]))[:limit]
        if prune is not None:
            return None
    return list(store.conn.execute(*query()).fetchall())


def keyword_score(raw: float) -> float:
    """Map a chunk's FTS5 BM25 magnitude (0..inf) to (0, 1): saturating, order-preserving."""
    raw = max(raw, 0.0)
    return raw / (raw + 1.0)


def load_hits(store: Store, ids: list[int], today: str = "") -> dict[int, Hit]:
    """Chunk rows (as chunk-level hits) by id; an entry past its expiry date (before
    ``today``, YYYY-MM-DD) has the state ``expired``."""
    out: dict[int, Hit] = {}
    for start in range(0, len(ids), 400):
        part = ids[start : start + 400]
        marks = ",".join("?" * len(part))
        rows = store.conn.execute(
            f"SELECT c.id, f.path, c.start_line, c.end_line, c.heading, {CHUNK_TEXT}, f.source,"
            " f.date,"
            " f.evergreen, c.state, c.expires, c.confirmed, c.corroborated"
            " FROM chunks c JOIN files f ON f.id = c.file_id"
            f" {TEXT_JOIN} WHERE c.id IN ({marks})",
            part,
        )
        for r in rows:
            hit = Hit(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6], r[7], bool(r[8]))
            hit.state = r[9] or ("expired" if r[10] is not None and r[10] < today else "")
            hit.confirmed, hit.corroborated = r[11], r[12]
            out[hit.chunk_id] = hit
    return out


decay_factor = ranking.decay_factor
