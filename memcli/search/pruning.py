"""Exact pruning of a keyword query: which chunks it must score to find its best ones.

A query's words are OR-ed, so FTS5 scores every chunk that holds any of them: at a million
chunks, tens of thousands for two common words. With the engine's learnt bounds
(:mod:`memcli.search.bounds`), a term held by many chunks (a *common* term) can give one
chunk at most ``idf x sat``. A chunk that holds one common term and nothing else of the
query then scores below the largest such bound, the *floor*. So the chunks worth scoring
are those holding a rarer part of the query (a rare word, a phrase, a prefix), or two common
terms, or newer than a bound: the *essential* chunks. If the k-th best of those scores at
least the floor, they hold the k best of all, in the same order; if not, the caller runs
the whole query.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, NamedTuple

from memcli.index.bookkeeping import totals
from memcli.index.store import Store
from memcli.search import bounds as bounds_mod
from memcli.search.query import ParsedQuery

#: The most common terms a query is pruned with: their pairs grow as their square, and past
#: a few they cost more than the whole query (benchmarks/RESULTS.md: on 120,000 rows, 31
#: against 42 ms with 4, 110 against 74 with 8; recall's query may hold dozens of words).
MAX_COMMON = 6


class Plan(NamedTuple):
    """How to prune one query (see the module's text)."""

    essential: str  # an FTS5 expression: the chunks to score
    newer: int  # and every chunk above this id
    floor: float  # no other chunk scores this much
    version: int  # SQLite's data version the plan was made at

    def holds(self, rows: list[Any], limit: int) -> bool:
        """Whether ``rows``, the best (id, score) rows of the essential chunks by score, are
        the best ``limit`` of all: there are ``limit`` of them and the last scores at least
        the floor."""
        return len(rows) == limit and rows[-1][1] >= self.floor


def plan(store: Store, parsed: ParsedQuery, weights: tuple[float, ...], limit: int) -> Plan | None:
    """The pruning plan of ``parsed`` on ``store``, or None when the query cannot be pruned:
    no bounds, fewer than two parts one of them common, more than :data:`MAX_COMMON` common
    terms, or fewer than ``limit`` essential chunks."""
    known = store.bounds
    if known is None or store.index_id is None or known.index_id != store.index_id:
        return None  # none learnt, or learnt of another file
    if known.weights != weights:
        return None
    if len(parsed.terms) + len(parsed.phrases) + len(parsed.prefixes) < 2:
        return None
    conn = store.conn
    version = int(conn.execute("PRAGMA data_version").fetchone()[0])
    counts = totals(conn)
    if counts is None or counts.rows < known.common_from:  # no term can be common
        return None
    from memcli.search.analyzer import Analyzer, doc_freqs

    stems = Analyzer(conn).tokens(list(parsed.terms))
    single = {w: toks[0] for w, toks in zip(parsed.terms, stems, strict=True) if len(toks) == 1}
    freqs = store.term_freqs()
    missing = [s for s in single.values() if s not in freqs]
    if missing:
        freqs.update(doc_freqs(conn, missing)[1])
    top = int(conn.execute("SELECT coalesce(max(id), 0) FROM chunks").fetchone()[0])
    common: dict[str, bounds_mod.Bound] = {}
    for word, stem in single.items():
        if freqs.get(stem, 0) < known.common_from:
            continue
        bound = known.get(stem)
        if bounds_mod.stale(bound, top, counts.rows):
            known.want(stem, word)
        if bound is not None:
            common[word] = bound
    if not common or len(common) > MAX_COMMON:
        return None
    newer = min(b.top for b in common.values())
    if top - newer > counts.rows // 2:  # mostly newer chunks (a full re-index): no gain
        return None
    floor = max(
        bounds_mod.fts_idf(counts.rows, freqs[single[w]])
        * b.sat
        * max(1.0, counts.avgdl / b.avgdl if b.avgdl else 1.0)
        for w, b in common.items()
    )
    parts = [_phrase((t,)) for t in parsed.terms if t not in common]
    parts += [_phrase(p) for p in parsed.phrases]
    parts += [_phrase((p,)) + "*" for p in parsed.prefixes]
    parts += [f"({_phrase((a,))} AND {_phrase((b,))})" for a, b in combinations(common, 2)]
    if not parts:  # one common term alone
        return None
    essential = " OR ".join(parts)
    found = conn.execute(
        "SELECT count(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)",
        (essential, limit),
    ).fetchone()[0]
    if found < limit:
        return None
    return Plan(essential, newer, floor, version)


def _phrase(words: tuple[str, ...]) -> str:
    return '"' + " ".join(words) + '"'
