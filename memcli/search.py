"""The search pipeline: candidates -> fusion -> filters -> threshold/decay -> top n -> snippets."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from memcli.chunking import split_lines
from memcli.errors import BadInput
from memcli.query import ParsedQuery, parse_query
from memcli.scan import glob_to_regex
from memcli.store import Store

HIGHLIGHT_OPEN, HIGHLIGHT_CLOSE = "\x01", "\x02"
KEYWORD_WEIGHTS = (1.0, 0.3)  # bm25 column weights: text, heading
STRATEGIES = ("auto", "keyword", "vector", "hybrid")


@dataclass
class Filters:
    """Restrictions applied to candidates (all optional)."""

    sources: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    path_glob: str | None = None


@dataclass
class SearchOptions:
    limit: int = 8
    min_score: float = 0.0
    strategy: str = "auto"
    candidates: int = 50
    decay: bool = False
    half_life_days: float = 30.0
    snippet_lines: int = 1
    filters: Filters = field(default_factory=Filters)
    today: date | None = None
    # fusion of keyword and vector candidates (memcli.fusion; settings search.fusion etc.)
    fusion: str = "rrf"
    rrf_k: int = 60
    keyword_weight: float = 0.5
    vector_weight: float = 0.5


@dataclass
class Hit:
    chunk_id: int
    path: str
    chunk_start: int
    chunk_end: int
    heading: str
    text: str
    source: str
    date: str | None
    evergreen: bool
    score: float = 0.0
    scores: dict[str, Any] = field(default_factory=dict)
    highlighted: str | None = None
    snippet: str = ""
    start_line: int = 0
    end_line: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "score": round(self.score, 4),
            "snippet": self.snippet,
            "heading": self.heading,
            "source": self.source,
            "date": self.date,
            "evergreen": self.evergreen,
            "scores": self.scores,
        }


@dataclass
class SearchResult:
    query: str
    mode: str
    stale: bool = False
    warnings: list[str] = field(default_factory=list)
    hits: list[Hit] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "stale": self.stale,
            "warnings": list(self.warnings),
            "results": [h.as_dict() for h in self.hits],
        }


def check_date(value: str | None, flag: str) -> str | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        raise BadInput(f"{flag} expects a date YYYY-MM-DD, got {value!r}") from None


def _filter_sql(filters: Filters, store: Store) -> tuple[str, list[Any]]:
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
        rx = glob_to_regex(filters.path_glob)
        store.conn.create_function("memcli_glob", 1, lambda p: 1 if rx.match(p) else 0)
        where.append("memcli_glob(f.path)")
    return ("".join(f" AND {w}" for w in where)), args


def keyword_candidates(
    store: Store, parsed: ParsedQuery, filters: Filters, limit: int
) -> dict[int, tuple[float, str]]:
    """Chunk id -> (BM25 magnitude, highlighted text) for the best ``limit`` matches."""
    extra, args = _filter_sql(filters, store)
    sql = (
        "SELECT c.id, -bm25(chunks_fts, ?, ?) AS s,"
        " highlight(chunks_fts, 0, char(1), char(2))"
        " FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid"
        " JOIN files f ON f.id = c.file_id"
        f" WHERE chunks_fts MATCH ?{extra} ORDER BY s DESC LIMIT ?"
    )
    rows = store.conn.execute(sql, (*KEYWORD_WEIGHTS, parsed.fts(), *args, limit))
    return {int(r[0]): (float(r[1]), r[2]) for r in rows}


def keyword_score(raw: float) -> float:
    """Map a BM25 magnitude (0..inf) to (0, 1): saturating, order-preserving."""
    raw = max(raw, 0.0)
    return raw / (raw + 1.0)


def load_hits(store: Store, ids: list[int]) -> dict[int, Hit]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = store.conn.execute(
        "SELECT c.id, f.path, c.start_line, c.end_line, c.heading, t.text, f.source, f.date,"
        " f.evergreen FROM chunks c JOIN files f ON f.id = c.file_id"
        f" JOIN chunks_fts t ON t.rowid = c.id WHERE c.id IN ({marks})",
        ids,
    )
    return {int(r[0]): Hit(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6], r[7], bool(r[8])) for r in rows}


def decay_factor(file_date: str | None, evergreen: bool, today: date, half_life: float) -> float:
    """exp(-ln2 * age / half_life); evergreen and undated files do not decay."""
    if evergreen or not file_date or half_life <= 0:
        return 1.0
    try:
        age = (today - date.fromisoformat(file_date)).days
    except ValueError:
        return 1.0
    return math.exp(-math.log(2) * max(age, 0) / half_life)


def make_snippet(hit: Hit, context: int) -> None:
    """Trim a hit to its best-matching line(s) plus ``context`` lines around them."""
    lines = split_lines(hit.text)
    marked = split_lines(hit.highlighted) if hit.highlighted else []
    first = hit.chunk_start
    if not marked or len(marked) != len(lines):
        lo, hi = 0, len(lines) - 1
        best = None
    else:
        counts = [len(set(_marked_words(m))) for m in marked]
        best = max(range(len(lines)), key=lambda i: (counts[i], -i))
        if counts[best] == 0:
            best = None
        lo, hi = (0, len(lines) - 1) if best is None else (best, best)
    if best is not None:
        lo = max(0, best - context)
        hi = min(len(lines) - 1, best + context)
    while lo > 0 and not lines[lo].strip():
        lo += 1
    while hi > lo and not lines[hi].strip():
        hi -= 1
    hit.start_line = first + lo
    hit.end_line = first + hi
    hit.snippet = "\n".join(lines[lo : hi + 1])


def _marked_words(line: str) -> list[str]:
    out = []
    start = line.find(HIGHLIGHT_OPEN)
    while start >= 0:
        end = line.find(HIGHLIGHT_CLOSE, start)
        if end < 0:
            break
        out.append(line[start + 1 : end].lower())
        start = line.find(HIGHLIGHT_OPEN, end)
    return out


def run_search(
    store: Store,
    query: str,
    opts: SearchOptions,
    mode: str = "keyword",
    query_vector: list[float] | None = None,
) -> SearchResult:
    """Search an open store; ``mode`` vector/hybrid needs ``query_vector`` (see Memory.search)."""
    result = SearchResult(query=query, mode=mode)
    pool = max(opts.candidates, opts.limit)
    # -- vector candidates and fusion (memcli.vectors, memcli.fusion) ----------------------
    fused: dict[int, Any] | None = None
    if mode in ("vector", "hybrid") and query_vector is not None:
        from memcli import fusion

        kw = {}
        if mode == "hybrid":
            kw = _hybrid_keyword(store, query, opts.filters, pool)
        params = fusion.FusionParams(
            opts.fusion, opts.rrf_k, opts.keyword_weight, opts.vector_weight
        )
        fused = fusion.hybrid_candidates(
            store,
            {cid: keyword_score(raw) for cid, (raw, _) in kw.items()},
            query_vector,
            mode,
            params,
            pool,
            _filter_sql(opts.filters, store),
        )
    else:
        kw = keyword_candidates(store, parse_query(query), opts.filters, pool)
    # -- end of vector candidates and fusion ---------------------------------------------
    hits = load_hits(store, list(fused) if fused is not None else list(kw))
    today = opts.today or date.today()
    for cid, hit in hits.items():
        raw, highlighted = kw.get(cid, (0.0, None))
        hit.highlighted = highlighted
        base = keyword_score(raw)
        hit.scores = {"keyword": round(base, 4), "bm25": round(raw, 4)}
        if fused is not None:
            base = fused[cid].score
            hit.scores.update(fused[cid].signals)
        score = base
        if opts.decay:
            factor = decay_factor(hit.date, hit.evergreen, today, opts.half_life_days)
            hit.scores["decay"] = round(factor, 4)
            score *= factor
        hit.score = score
    ranked = sorted(hits.values(), key=lambda h: (-h.score, h.path, h.chunk_start))
    ranked = [h for h in ranked if h.score >= opts.min_score][: opts.limit]
    for h in ranked:
        make_snippet(h, opts.snippet_lines)
    result.hits = ranked
    return result


def _hybrid_keyword(
    store: Store, query: str, filters: Filters, pool: int
) -> dict[int, tuple[float, str]]:
    """Keyword candidates for hybrid search; a query of stop words alone leaves it to vectors."""
    if not query.strip():
        parse_query(query)  # raises "empty query"
    try:
        parsed = parse_query(query)
    except BadInput:
        return {}
    return keyword_candidates(store, parsed, filters, pool)
