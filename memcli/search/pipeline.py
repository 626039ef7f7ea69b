"""The search pipeline.

candidates (FTS5 BM25 over chunks; vector KNN) -> fusion -> filters -> passages and their
scores (memcli.search.ranking) -> decay -> --min-score on final scores -> MMR -> top n -> snippets
(memcli.search.snippets).

Chunks are what the index stores and embeds; results are *passages* of them (a list item, a
paragraph) with a little context, so an agent pays for the lines that answer, not whole chunks.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from datetime import date
from typing import Any

from memcli.errors import BadInput
from memcli.index.store import Store
from memcli.notes import instructions
from memcli.notes.lifecycle import without_status
from memcli.search import ranking, timewords
from memcli.search.analyzer import Analyzer
from memcli.search.candidates import filter_sql, keyword_candidates, keyword_score, load_hits
from memcli.search.options import Filters, SearchOptions, check_options
from memcli.search.query import ParsedQuery, parse_query
from memcli.search.results import Hit, SearchResult
from memcli.search.snippets import FileText, Passage, assemble, clip, span_lines
from memcli.search.stale import stale_marks

#: Chunk states a search leaves out unless asked (memcli.notes.lifecycle).
HIDDEN = frozenset({"superseded", "retracted", "expired"})
#: The flag a result carries for its state.
STATE_FLAGS = {"review": "needs-review"}
#: Vectors of passages' texts, in order (the workspace's embedder, cached).
Embed = Callable[[Sequence[str]], list[list[float]]]
#: Chunks found by vectors, beyond ``--limit``, whose entries are compared with the query
#: one by one (:func:`memcli.search.nearest.nearest_passages`).
NEAREST_EXTRA = 5


def run_search(
    store: Store,
    query: str,
    opts: SearchOptions,
    mode: str = "keyword",
    query_vector: list[float] | None = None,
    embed: Embed | None = None,
) -> SearchResult:
    """Search an open store; ``mode`` vector/hybrid needs ``query_vector`` (see Memory.search).
    ``embed`` (with vectors): a chunk the vectors rank is quoted by its entry nearest the
    query, embedded alone; without it, by its first passage."""
    check_options(opts)
    result = SearchResult(query=query, mode=mode)
    pool = max(opts.candidates, opts.limit)
    # -- candidate chunks: keyword (FTS5), or vector KNN with their similarity ----------
    sims: dict[int, float | None] | None = None
    if mode in ("vector", "hybrid") and query_vector is not None:
        from memcli.search import fusion  # vectors only: a keyword search never fuses

        params = opts.fusion_params().check()
        kw = _hybrid_keyword(store, query, opts.filters, pool) if mode == "hybrid" else {}
        sims = fusion.vector_candidates(
            store,
            {cid: keyword_score(raw) for cid, (raw, _) in kw.items()},
            query_vector,
            mode,
            params,
            pool,
            filter_sql(opts.filters, store),
        )
    else:
        kw = keyword_candidates(store, parse_query(query), opts.filters, pool)
    today = opts.today or date.today()
    chunks = load_hits(store, list(sims) if sims is not None else list(kw), today.isoformat())
    shown = opts.filters.include_inactive
    if not shown:  # superseded, retracted and expired facts are left out
        chunks = {cid: h for cid, h in chunks.items() if h.state not in HIDDEN}
    ft = FileText(store, opts.snippet_chars, hide=None if shown else today.isoformat())
    nearest = (embed, query_vector) if embed is not None and query_vector is not None else None
    hits = _passage_hits(store, ft, query, chunks, sims, mode, opts, nearest)
    hits = [h for h in hits if _entry_filter(ft, h, opts.filters)]
    window = _time_window(store, query, opts)
    for h in hits:
        ranking.apply_trust(h, opts)
        if window is not None and window.holds(h.date):
            h.score += opts.time_boost * (1.0 - h.score)  # toward 1, never past it
            h.scores["time"] = round(opts.time_boost, 4)
        if opts.decay:
            factor = ranking.decay_factor(h.date, h.evergreen, today, opts.half_life_days)
            h.scores["decay"] = round(factor, 4)
            h.score *= factor
    hits = ranking.threshold(hits, lambda h: h.score, opts.min_score)
    hits.sort(key=lambda h: (-h.score, h.path, h.passage.start if h.passage else 0))
    if opts.mmr:
        hits = _diversify(store, ft, hits[:pool], opts)
    spans = assemble(
        ft,
        ((h.passage, h) for h in hits if h.passage is not None),  # every hit here has one
        opts.limit,
        opts.snippet_lines,
        opts.snippet_chars,
        opts.hybrid_snippet_before_chars if mode == "hybrid" else opts.snippet_before_chars,
    )
    for span in spans:
        hit: Hit = span.payload
        hit.start_line, hit.end_line, snippet = span_lines(ft, span)
        hit.point(span.merged)
        states = hit.show(snippet, today.isoformat())
        hit.snippet = clip(hit.snippet, query, opts.snippet_chars)  # after: no secret half-cut
        phrase = instructions.detect(hit.snippet)
        hit.flags = [instructions.INSTRUCTION_LIKE] if phrase else []
        hit.flags += [STATE_FLAGS.get(s, s) for s in states]  # superseded, under review...
        if opts.explain:
            hit.explain = _explain(hit, span.merged, opts, phrase, window)
        result.hits.append(hit)
    quoted: list[tuple[str, int, int]] = [(h.path, h.start_line, h.end_line) for h in result.hits]
    for hit, mark in zip(result.hits, stale_marks(store.conn, quoted), strict=True):
        hit.stale = mark
    return result


def _explain(
    hit: Hit,
    merged: list[Hit],
    opts: SearchOptions,
    phrase: str | None,
    window: timewords.Window | None,
) -> dict[str, Any]:
    """``--explain``: how the hit's score came to be, its passage and those merged into it,
    its flags, trust, state and the query's time window."""
    out = ranking.explain(
        hit.signal,
        hit.terms,
        hit.scores,
        _params(opts),
        hit.score,
        opts.fusion if "fusion" in hit.scores else None,
    )
    out["passage"] = [hit.passage.start, hit.passage.end] if hit.passage else None
    out["merged"] = [[m.passage.start, m.passage.end] for m in merged if m.passage]
    out["flags"] = {instructions.INSTRUCTION_LIKE: phrase} if phrase else {}
    if "trust" in hit.scores:
        out["trust"] = ranking.trust_reasons(hit)
    if hit.state:
        out["state"] = hit.state
    if window is not None:
        out["time_window"] = window.as_dict()
    return out


def _time_window(store: Store, query: str, opts: SearchOptions) -> timewords.Window | None:
    """The window of a time expression in ``query``, counted from the newest file date (or
    ``opts.today``, else today, when no file is dated); None without one or when off."""
    if opts.time_boost <= 0 or not timewords.may_hold_time(query):
        return None
    newest = store.conn.execute("SELECT max(date) FROM files").fetchone()[0]
    try:
        anchor = date.fromisoformat(newest[:10]) if newest else (opts.today or date.today())
    except ValueError:
        anchor = opts.today or date.today()
    return timewords.find_window(query, anchor)


def _params(opts: SearchOptions) -> ranking.KeywordParams:
    return ranking.KeywordParams(
        heading_weight=opts.heading_weight,
        neighbour_weight=opts.neighbour_weight,
        proximity_weight=opts.proximity_weight,
        chunk_weight=opts.chunk_weight,
    )


def _passage_hits(
    store: Store,
    ft: FileText,
    query: str,
    chunks: dict[int, Hit],
    sims: dict[int, float | None] | None,
    mode: str,
    opts: SearchOptions,
    nearest: tuple[Embed, list[float]] | None = None,
) -> list[Hit]:
    """Score the passages of the candidate chunks; one hit per passage that qualifies.

    ``sims`` holds the candidates' vector similarity (None: a keyword search); ``nearest``
    the embedder and query vector that choose the entry quoting a chunk vectors found."""
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
                cand.setdefault((p.path, p.pos), (p, c))
                first_of_chunk.setdefault(cid, (p.path, p.pos))
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
        analyzer = Analyzer(store.conn)
        q = ranking.query_terms(
            store.conn,
            analyzer,
            parsed.terms,
            parsed.prefixes,
            parsed.names,
            opts.name_weight,
            parsed.phrases,
            store.term_freqs(),
        )
        cids = sorted({cand[k][1].chunk_id for k in keys})
        headings = sorted({cand[k][0].heading for k in keys} | {chunks[c].heading for c in cids})
        texts = [without_status(ft.passage_text(cand[k][0])) for k in keys]
        texts += [without_status(chunks[c].text) for c in cids]
        positions, lengths = analyzer.positions(texts + headings, q.lookups())
        tfs = [ranking.unit_counts(q, found) for found in positions]
        htf = dict(zip(headings, tfs[len(texts) :], strict=True))
        n = len(keys)
        scored = ranking.bm25_scores(
            q, tfs[:n], lengths[:n], [htf[cand[k][0].heading] for k in keys], params
        )
        whole = ranking.bm25_scores(
            q,
            tfs[n : len(texts)],
            lengths[n : len(texts)],
            [htf[chunks[c].heading] for c in cids],
            params,
        )
        chunk_bm25 = {c: bm for c, (bm, _) in zip(cids, whole, strict=True)}
        own: dict[tuple[str, int], tuple[float, dict[str, float], float, dict[str, int]]] = {}
        for k, (bm, terms), found in zip(keys, scored, positions, strict=False):
            close = ranking.near_pairs(q, found, ranking.PROXIMITY_WINDOW) if bm > 0 else {}
            bonus = ranking.proximity_bonus(q, close, params)
            own[k] = (bm + bonus, terms, bonus, close)
        for k in keys:
            score, terms, bonus, close = own[k]
            if score <= 0.0:
                continue
            p = cand[k][0]
            near = 0.0
            ps = ft.passages(p.path)
            for j in (p.pos - 1, p.pos + 1):
                nk = (p.path, j)
                if nk in own and 0 <= j < len(ps) and ps[j].section == p.section:
                    near += own[nk][0]
            signals[k] = ranking.KeywordSignal(
                score - bonus,
                params.neighbour_weight * near,
                terms,
                bonus,
                close,
                params.chunk_weight * chunk_bm25.get(cand[k][1].chunk_id, 0.0),
            )
    hits: list[Hit] = []
    if sims is None:
        for k, sig in signals.items():
            p, c = cand[k]
            kw = ranking.normalise(sig.total, ranking.ideal_total(q, params))
            h = _passage_hit(c, p, sig, q, kw)
            h.scores = {
                "keyword": round(kw, 4),
                "bm25": round(sig.bm25, 4),
                "neighbours": round(sig.neighbours, 4),
            }
            if sig.proximity:
                h.scores["proximity"] = round(sig.proximity, 4)
            if sig.chunk:
                h.scores["chunk"] = round(sig.chunk, 4)
            hits.append(h)
        return hits
    if nearest is not None:
        from memcli.search.nearest import entry_similarities  # vectors only

        texts_of: dict[int, list[tuple[Passage, str]]] = {}
        for p, c in cand.values():
            texts_of.setdefault(c.chunk_id, []).append((p, ft.passage_text(p)))
        top = opts.limit + NEAREST_EXTRA
        entries = entry_similarities(texts_of, sims, nearest[1], nearest[0], top)
    else:
        entries = {}
    return _fused_passages(cand, signals, q, sims, first_of_chunk, entries, mode, opts)


def _passage_hit(
    chunk: Hit,
    p: Passage,
    sig: ranking.KeywordSignal | None,
    q: ranking.QueryTerms | None,
    score: float,
) -> Hit:
    c = chunk
    hit = Hit(
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
    hit.state, hit.confirmed, hit.corroborated = c.state, c.confirmed, c.corroborated
    return hit


def _fused_passages(
    cand: dict[tuple[str, int], tuple[Passage, Hit]],
    signals: dict[tuple[str, int], ranking.KeywordSignal],
    q: ranking.QueryTerms | None,
    sims: dict[int, float | None],
    first_of_chunk: dict[int, tuple[str, int]],
    entries: dict[int, dict[Passage, float]],
    mode: str,
    opts: SearchOptions,
) -> list[Hit]:
    """Fuse passage keyword scores with their chunk's vector similarity (memcli.search.fusion).

    Passages that match the query carry their chunk's similarity. Of a chunk whose
    ``entries`` were compared with the query one by one (each one's own similarity in
    ``scores.entry``), the nearest carries it too, keyword match or not; any other chunk found
    only by vectors is represented by its first passage. In vector mode the similarity is
    the score. (Lowering the other passages' share by how far they are from the nearest cost
    LoCoMo 0.02 of recall and gained nothing across languages: docs/search.md.)
    """
    ideal = ranking.ideal_total(q, _params(opts))
    keyword = {k: ranking.normalise(s.total, ideal) for k, s in signals.items()}
    by_chunk: dict[int, list[tuple[str, int]]] = {}
    for k in signals:
        by_chunk.setdefault(cand[k][1].chunk_id, []).append(k)
    vector: dict[tuple[str, int], float] = {}
    for cid, sim in sims.items():
        if sim is None:
            continue
        for k in _vector_members(by_chunk.get(cid, []), entries.get(cid), first_of_chunk.get(cid)):
            # the similarity as results show it (4 places); equal similarities within a
            # chunk: the better keyword passage ranks first
            vector[k] = round(sim, 4) + 1e-6 * keyword.get(k, 0.0)
    from memcli.search import fusion  # vectors only (see run_search)

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
            if sig.chunk:
                h.scores["chunk"] = round(sig.chunk, 4)
        if k in vector:
            h.scores["vector"] = round(vector[k], 4)
        if p in entries.get(c.chunk_id, ()):
            h.scores["entry"] = round(entries[c.chunk_id][p], 4)
        if mode != "vector":
            h.scores["fusion"] = round(score, 4)
        hits.append(h)
    return hits


def _vector_members(
    matched: list[tuple[str, int]],
    own: dict[Passage, float] | None,
    first: tuple[str, int] | None,
) -> list[tuple[str, int]]:
    """The passages of a chunk that carry its vector similarity: those ``matched`` by
    keywords and its entry nearest the query (of ``own`` similarities); with neither, its
    ``first`` passage."""
    members = list(matched)
    if own:
        near = max(own, key=own.__getitem__)
        if (near.path, near.pos) not in members:
            members.append((near.path, near.pos))
    elif not members and first is not None:
        members = [first]
    return members


def _entry_filter(ft: FileText, hit: Hit, filters: Filters) -> bool:
    """--type/--tag hold for the passage itself, not only for its chunk."""
    if not (filters.types or filters.tags) or hit.passage is None:
        return True
    from memcli.notes.entries import parse_entries  # only --type/--tag filters parse entries

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
    from memcli.index.embedcache import unpack  # vectors code: not for keyword search

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
