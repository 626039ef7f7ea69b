"""The search pipeline.

candidates (FTS5 BM25 over chunks; vector KNN) -> fusion -> filters -> passages and their
scores (memcli.search.ranking) -> decay -> --min-score on final scores -> MMR -> top n -> snippets
(memcli.search.snippets).

Chunks are what the index stores and embeds; results are *passages* of them (a list item, a
paragraph) with a little context, so an agent pays for the lines that answer, not whole chunks.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field, fields
from datetime import date
from typing import Any

from memcli.config.registry import default
from memcli.errors import BadInput
from memcli.index.store import Store
from memcli.notes.scan import glob_to_regex
from memcli.search import fusion, ranking
from memcli.search.fusion import FusionParams
from memcli.search.query import ParsedQuery, parse_query
from memcli.search.snippets import FileText, Passage, assemble, span_lines

HIGHLIGHT_OPEN, HIGHLIGHT_CLOSE = "\x01", "\x02"
KEYWORD_WEIGHTS = (1.0, 0.3)  # bm25 column weights of the candidate query: text, heading


@dataclass
class Filters:
    """Restrictions applied to candidates (all optional)."""

    sources: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    path_glob: str | None = None


def _setting(key: str) -> Any:
    """A field whose default is the setting ``key``'s (see :meth:`SearchOptions.from_settings`)."""
    return field(default=default(key), metadata={"setting": key})


@dataclass
class SearchOptions:
    limit: int = _setting("search.limit")
    min_score: float = _setting("search.min_score")
    strategy: str = _setting("search.strategy")
    candidates: int = _setting("search.candidates")
    decay: bool = _setting("decay.enabled")
    half_life_days: float = _setting("decay.half_life_days")
    snippet_lines: int = _setting("search.snippet_lines")  # context passages after/before a match
    filters: Filters = field(default_factory=Filters)
    today: date | None = None
    # fusion of keyword and vector candidates (memcli.search.fusion; settings search.fusion etc.)
    fusion: str = _setting("search.fusion")
    rrf_k: int = _setting("search.rrf_k")
    keyword_weight: float = _setting("search.keyword_weight")
    vector_weight: float = _setting("search.vector_weight")
    # passages, snippets, diversity (memcli.search.ranking, memcli.search.snippets)
    snippet_chars: int = _setting("search.snippet_chars")
    neighbour_weight: float = _setting("search.neighbour_weight")
    heading_weight: float = _setting("search.heading_weight")
    mmr: bool = _setting("search.mmr")
    mmr_lambda: float = _setting("search.mmr_lambda")
    explain: bool = False

    @classmethod
    def from_settings(cls, settings: Any) -> SearchOptions:
        """Every field that a setting sets, from ``settings`` (a memcli.config.Settings)."""
        return cls(
            **{f.name: settings.get(f.metadata["setting"]) for f in fields(cls) if f.metadata}
        )

    def fusion_params(self) -> FusionParams:
        return FusionParams(self.fusion, self.rrf_k, self.keyword_weight, self.vector_weight)


@dataclass
class Hit:
    chunk_id: int
    path: str
    chunk_start: int
    chunk_end: int
    heading: str
    text: str  # the whole chunk (chunk_start is its first line)
    source: str
    date: str | None
    evergreen: bool
    score: float = 0.0
    scores: dict[str, Any] = field(default_factory=dict)
    highlighted: str | None = None
    snippet: str = ""
    start_line: int = 0
    end_line: int = 0
    explain: dict[str, Any] | None = None
    passage: Passage | None = None
    signal: ranking.KeywordSignal | None = None
    terms: ranking.QueryTerms | None = None

    def as_dict(self) -> dict[str, Any]:
        out = {
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
        if self.explain is not None:
            out["explain"] = self.explain
        return out


@dataclass
class SearchResult:
    query: str
    mode: str
    stale: bool | None = False  # None: not checked (index.sync_on_search is off)
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


def check_options(opts: SearchOptions) -> None:
    """Refuse option values that make no sense (exit 2)."""
    if opts.limit < 1:
        raise BadInput("-n/--limit must be at least 1")
    if not 0.0 <= opts.mmr_lambda <= 1.0:
        raise BadInput(f"--mmr-lambda must be between 0 and 1, got {opts.mmr_lambda}")
    if opts.min_score < 0.0 or opts.min_score > 1.0:
        raise BadInput(f"--min-score must be between 0 and 1, got {opts.min_score}")
    if opts.snippet_lines < 0 or opts.snippet_chars < 1:
        raise BadInput("search.snippet_lines must be 0 or more and search.snippet_chars positive")
    if opts.half_life_days <= 0:
        raise BadInput("decay.half_life_days must be positive")


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
) -> dict[int, tuple[float, str | None]]:
    """Chunk id -> (FTS5 BM25 magnitude, None) for the best ``limit`` matching chunks."""
    extra, args = _filter_sql(filters, store)
    if extra:
        sql = (
            "SELECT c.id, -bm25(chunks_fts, ?, ?) AS s"
            " FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid"
            " JOIN files f ON f.id = c.file_id"
            f" WHERE chunks_fts MATCH ?{extra} ORDER BY s DESC LIMIT ?"
        )
    else:  # no filter: no join for every match (half the time of a common-word query)
        sql = (
            "SELECT rowid, -bm25(chunks_fts, ?, ?) AS s FROM chunks_fts"
            " WHERE chunks_fts MATCH ? ORDER BY s DESC LIMIT ?"
        )
    rows = store.conn.execute(sql, (*KEYWORD_WEIGHTS, parsed.fts(), *args, limit))
    return {int(r[0]): (float(r[1]), None) for r in rows}


def keyword_score(raw: float) -> float:
    """Map a chunk's FTS5 BM25 magnitude (0..inf) to (0, 1): saturating, order-preserving."""
    raw = max(raw, 0.0)
    return raw / (raw + 1.0)


def load_hits(store: Store, ids: list[int]) -> dict[int, Hit]:
    """Chunk rows (as chunk-level hits) by id."""
    out: dict[int, Hit] = {}
    for start in range(0, len(ids), 400):
        part = ids[start : start + 400]
        marks = ",".join("?" * len(part))
        rows = store.conn.execute(
            "SELECT c.id, f.path, c.start_line, c.end_line, c.heading, t.text, f.source, f.date,"
            " f.evergreen FROM chunks c JOIN files f ON f.id = c.file_id"
            f" JOIN chunks_fts t ON t.rowid = c.id WHERE c.id IN ({marks})",
            part,
        )
        for r in rows:
            out[int(r[0])] = Hit(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6], r[7], bool(r[8]))
    return out


decay_factor = ranking.decay_factor


def run_search(
    store: Store,
    query: str,
    opts: SearchOptions,
    mode: str = "keyword",
    query_vector: list[float] | None = None,
) -> SearchResult:
    """Search an open store; ``mode`` vector/hybrid needs ``query_vector`` (see Memory.search)."""
    check_options(opts)
    result = SearchResult(query=query, mode=mode)
    pool = max(opts.candidates, opts.limit)
    # -- candidate chunks: keyword (FTS5), or vector KNN with their similarity ----------
    sims: dict[int, float | None] | None = None
    if mode in ("vector", "hybrid") and query_vector is not None:
        params = opts.fusion_params().check()
        kw = _hybrid_keyword(store, query, opts.filters, pool) if mode == "hybrid" else {}
        sims = fusion.vector_candidates(
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
    chunks = load_hits(store, list(sims) if sims is not None else list(kw))
    ft = FileText(store, opts.snippet_chars)
    hits = _passage_hits(store, ft, query, chunks, sims, mode, opts)
    hits = [h for h in hits if _entry_filter(ft, h, opts.filters)]
    today = opts.today or date.today()
    for h in hits:
        if opts.decay:
            factor = ranking.decay_factor(h.date, h.evergreen, today, opts.half_life_days)
            h.scores["decay"] = round(factor, 4)
            h.score *= factor
    hits = ranking.threshold(hits, lambda h: h.score, opts.min_score)
    hits.sort(key=lambda h: (-h.score, h.path, h.passage.start if h.passage else 0))
    if opts.mmr:
        hits = _diversify(store, ft, hits[:pool], opts)
    spans = assemble(
        ft, ((h.passage, h) for h in hits), opts.limit, opts.snippet_lines, opts.snippet_chars
    )
    for span in spans:
        hit: Hit = span.payload
        hit.start_line, hit.end_line, hit.snippet = span_lines(ft, span)
        if opts.explain:
            hit.explain = ranking.explain(
                hit.signal,
                hit.terms,
                hit.scores,
                _params(opts),
                hit.score,
                opts.fusion if "fusion" in hit.scores else None,
            )
            hit.explain["passage"] = [hit.passage.start, hit.passage.end] if hit.passage else None
            hit.explain["merged"] = [[m.passage.start, m.passage.end] for m in span.merged]
        result.hits.append(hit)
    return result


def _params(opts: SearchOptions) -> ranking.KeywordParams:
    return ranking.KeywordParams(
        heading_weight=opts.heading_weight, neighbour_weight=opts.neighbour_weight
    )


def _passage_hits(
    store: Store,
    ft: FileText,
    query: str,
    chunks: dict[int, Hit],
    sims: dict[int, float | None] | None,
    mode: str,
    opts: SearchOptions,
) -> list[Hit]:
    """Score the passages of the candidate chunks; one hit per passage that qualifies.

    ``sims`` holds the candidates' vector similarity (None: a keyword search)."""
    ft.prepare((c.path, cid) for cid, c in chunks.items())
    cand: dict[tuple[str, int], tuple[Passage, Hit]] = {}
    first_of_chunk: dict[int, tuple[str, int]] = {}
    for cid in sorted(chunks):
        c = chunks[cid]
        ps = ft.passages(c.path)
        starts = [p.start for p in ps]
        i = max(bisect.bisect_right(starts, c.chunk_start) - 1, 0)
        while i < len(ps) and ps[i].start <= c.chunk_end:
            p = ps[i]
            if p.end >= c.chunk_start:
                cand.setdefault((p.path, p.index), (p, c))
                first_of_chunk.setdefault(cid, (p.path, p.index))
            i += 1
    keys = list(cand)
    params = _params(opts)
    q: ranking.QueryTerms | None = None
    signals: dict[tuple[str, int], ranking.KeywordSignal] = {}
    try:
        parsed: ParsedQuery | None = parse_query(query)
    except BadInput:
        if sims is None:
            raise
        parsed = None
    if parsed is not None and keys:
        analyzer = ranking.Analyzer(store.conn)
        q = ranking.query_terms(store.conn, analyzer, parsed.words)
        headings = sorted({cand[k][0].heading for k in keys})
        texts = [ft.passage_text(cand[k][0]) for k in keys]
        tfs, lengths = analyzer.counts(texts + headings, list(q.idf))
        htf = dict(zip(headings, tfs[len(keys) :], strict=True))
        scored = ranking.bm25_scores(
            q,
            tfs[: len(keys)],
            lengths[: len(keys)],
            [htf[cand[k][0].heading] for k in keys],
            params,
        )
        own = {k: s for k, s in zip(keys, scored, strict=True)}
        for k in keys:
            bm, terms = own[k]
            if bm <= 0.0:
                continue
            p = cand[k][0]
            near = 0.0
            ps = ft.passages(p.path)
            for j in (p.index - 1, p.index + 1):
                nk = (p.path, j)
                if nk in own and 0 <= j < len(ps) and ps[j].section == p.section:
                    near += own[nk][0]
            signals[k] = ranking.KeywordSignal(bm, params.neighbour_weight * near, terms)
    hits: list[Hit] = []
    if sims is None:
        for k, sig in signals.items():
            p, c = cand[k]
            kw = ranking.normalise(sig.total, q.ideal if q else 1.0)
            h = _passage_hit(c, p, sig, q, kw)
            h.scores = {
                "keyword": round(kw, 4),
                "bm25": round(sig.bm25, 4),
                "neighbours": round(sig.neighbours, 4),
            }
            hits.append(h)
        return hits
    return _fused_passages(cand, signals, q, sims, first_of_chunk, mode, opts)


def _passage_hit(
    chunk: Hit,
    p: Passage,
    sig: ranking.KeywordSignal | None,
    q: ranking.QueryTerms | None,
    score: float,
) -> Hit:
    c = chunk
    return Hit(
        c.chunk_id,
        c.path,
        c.chunk_start,
        c.chunk_end,
        c.heading,
        c.text,
        c.source,
        c.date,
        c.evergreen,
        score,
        passage=p,
        signal=sig,
        terms=q,
    )


def _fused_passages(
    cand: dict[tuple[str, int], tuple[Passage, Hit]],
    signals: dict[tuple[str, int], ranking.KeywordSignal],
    q: ranking.QueryTerms | None,
    sims: dict[int, float | None],
    first_of_chunk: dict[int, tuple[str, int]],
    mode: str,
    opts: SearchOptions,
) -> list[Hit]:
    """Fuse passage keyword scores with their chunk's vector similarity (memcli.search.fusion).

    Passages that match the query carry their chunk's similarity; a chunk found only by
    vectors is represented by its first passage. In vector mode the similarity is the score.
    """
    ideal = q.ideal if q else 1.0
    keyword = {k: ranking.normalise(s.total, ideal) for k, s in signals.items()}
    by_chunk: dict[int, list[tuple[str, int]]] = {}
    for k in signals:
        by_chunk.setdefault(cand[k][1].chunk_id, []).append(k)
    vector: dict[tuple[str, int], float] = {}
    for cid, sim in sims.items():
        if sim is None:
            continue
        members = by_chunk.get(cid) or ([first_of_chunk[cid]] if cid in first_of_chunk else [])
        for k in members:
            # the similarity as results show it (4 places); equal similarities within a
            # chunk: the better keyword passage ranks first
            vector[k] = round(sim, 4) + 1e-6 * keyword.get(k, 0.0)
    combined = fusion.fuse(keyword, vector, mode, opts.fusion_params())
    hits: list[Hit] = []
    for k, score in combined.items():
        p, c = cand[k]
        sig = signals.get(k)
        h = _passage_hit(c, p, sig, q, min(max(score, 0.0), 1.0))
        h.scores = {}
        if sig is not None:
            h.scores.update(
                keyword=round(keyword[k], 4),
                bm25=round(sig.bm25, 4),
                neighbours=round(sig.neighbours, 4),
            )
        if k in vector:
            h.scores["vector"] = round(vector[k], 4)
        if mode != "vector":
            h.scores["fusion"] = round(score, 4)
        hits.append(h)
    return hits


def _entry_filter(ft: FileText, hit: Hit, filters: Filters) -> bool:
    """--type/--tag hold for the passage itself, not only for its chunk."""
    if not (filters.types or filters.tags) or hit.passage is None:
        return True
    from memcli.notes.entries import parse_entries

    found = parse_entries(ft.passage_text(hit.passage))
    types = {t.lower() for t in filters.types}
    tags = {t.lower().lstrip("#") for t in filters.tags}
    for e in found:
        if types and (e.type or "").lower() not in types:
            continue
        if tags and not tags & {t.lower() for t in e.tags}:
            continue
        return True
    return False


def _diversify(store: Store, ft: FileText, hits: list[Hit], opts: SearchOptions) -> list[Hit]:
    """Reorder by MMR; similarity is cosine of chunk vectors when both chunks have one
    (and differ), else the Jaccard similarity of the passages' word sets."""
    vecs = _chunk_vectors(store, {h.chunk_id for h in hits})
    words = {id(h): ranking.word_set(ft.passage_text(h.passage)) for h in hits if h.passage}

    def sim(a: Hit, b: Hit) -> float:
        va, vb = vecs.get(a.chunk_id), vecs.get(b.chunk_id)
        if va is not None and vb is not None and a.chunk_id != b.chunk_id:
            return max(0.0, ranking.cosine(va, vb))
        return ranking.jaccard(words.get(id(a), frozenset()), words.get(id(b), frozenset()))

    picked = ranking.mmr(hits, lambda h: h.score, sim, opts.mmr_lambda, len(hits))
    out = []
    for h, value, similar in picked:
        h.scores["mmr"] = round(value, 4)
        h.scores["mmr_similarity"] = round(similar, 4)
        out.append(h)
    return out


def _chunk_vectors(store: Store, ids: set[int]) -> dict[int, list[float]]:
    if not ids or not store.has_table("chunks_vec") or not store.ensure_vec():
        return {}
    from memcli.index.embedcache import unpack

    part = sorted(ids)
    rows = store.conn.execute(
        f"SELECT rowid, embedding FROM chunks_vec WHERE rowid IN ({','.join('?' * len(part))})",
        part,
    )
    return {int(r[0]): unpack(r[1]) for r in rows if r[1] is not None}


def _hybrid_keyword(
    store: Store, query: str, filters: Filters, pool: int
) -> dict[int, tuple[float, str | None]]:
    """Keyword candidates for hybrid search; a query of stop words alone leaves it to vectors."""
    if not query.strip():
        parse_query(query)  # raises "empty query"
    try:
        parsed = parse_query(query)
    except BadInput:
        return {}
    return keyword_candidates(store, parsed, filters, pool)
