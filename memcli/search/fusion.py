"""Combining keyword and vector candidates into one score in [0, 1].

Two methods, chosen by the ``search.fusion`` setting:

``rrf``
    Reciprocal rank fusion: ``sum(w_i / (rrf_k + rank_i))`` over the lists a chunk appears in,
    divided by the best possible value (rank 1 in every list), so a chunk ranked first by both
    signals scores 1.0. Only ranks matter: robust when the two scores are not comparable.

``weighted``
    Weighted score fusion: ``(w_k * keyword + w_v * vector) / (w_k + w_v)``, where ``keyword``
    is the saturated BM25 score and ``vector`` the cosine similarity, both in [0, 1]. A keyword
    candidate outside the vector top-k gets its exact similarity (read for that row only); a
    vector candidate without a keyword match has keyword score 0.

Weights are ``search.keyword_weight`` and ``search.vector_weight``; ``search.rrf_k`` damps how
much the top ranks dominate in RRF.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memcli.errors import BadInput
from memcli.index import vectors
from memcli.index.store import Store

METHODS = ("rrf", "weighted")


@dataclass(frozen=True)
class FusionParams:
    method: str = "rrf"
    rrf_k: int = 60
    keyword_weight: float = 0.5
    vector_weight: float = 0.5

    def check(self) -> FusionParams:
        method = self.method.lower()
        if method not in METHODS:
            raise BadInput(
                f"search.fusion must be one of {', '.join(METHODS)}, got {self.method!r}"
            )
        if self.rrf_k < 0:
            raise BadInput("search.rrf_k must be 0 or more")
        if self.keyword_weight < 0 or self.vector_weight < 0:
            raise BadInput("search.keyword_weight and search.vector_weight must be 0 or more")
        if self.keyword_weight + self.vector_weight <= 0:
            raise BadInput("search.keyword_weight and search.vector_weight cannot both be 0")
        return FusionParams(method, self.rrf_k, self.keyword_weight, self.vector_weight)


@dataclass
class Fused:
    """One fused candidate: its score and the signals that made it (for ``scores``)."""

    score: float
    signals: dict[str, Any] = field(default_factory=dict)


def ranks(scores: dict[int, float]) -> dict[int, int]:
    """1-based ranks, best score first; ties broken by id for a stable order."""
    order = sorted(scores, key=lambda cid: (-scores[cid], cid))
    return {cid: i for i, cid in enumerate(order, start=1)}


def rrf(keyword: dict[int, float], vector: dict[int, float], p: FusionParams) -> dict[int, float]:
    """Normalised reciprocal rank fusion of two candidate lists (scores only give the order)."""
    best = p.keyword_weight / (p.rrf_k + 1) + p.vector_weight / (p.rrf_k + 1)
    out: dict[int, float] = {}
    for weight, scores in ((p.keyword_weight, keyword), (p.vector_weight, vector)):
        for cid, rank in ranks(scores).items():
            out[cid] = out.get(cid, 0.0) + weight / (p.rrf_k + rank)
    return {cid: s / best for cid, s in out.items()}


def weighted(
    keyword: dict[int, float], vector: dict[int, float], p: FusionParams
) -> dict[int, float]:
    """Weighted mean of the two scores (a missing score counts as 0)."""
    total = p.keyword_weight + p.vector_weight
    return {
        cid: (p.keyword_weight * keyword.get(cid, 0.0) + p.vector_weight * vector.get(cid, 0.0))
        / total
        for cid in {*keyword, *vector}
    }


def hybrid_candidates(
    store: Store,
    keyword: dict[int, float],
    query_vector: Sequence[float],
    mode: str,
    params: FusionParams,
    pool: int,
    filter_sql: tuple[str, Sequence[Any]] = ("", ()),
) -> dict[int, Fused]:
    """Vector candidates for ``query_vector`` fused with the ``keyword`` ones.

    ``keyword`` maps chunk id -> keyword score in [0, 1]. In ``vector`` mode the keyword list
    is ignored and the score is the cosine similarity. Nearest neighbours with a similarity of
    0 or less (orthogonal or opposite) are dropped. Returns chunk id -> :class:`Fused`.
    """
    p = params.check()
    extra, args = filter_sql
    # a neighbour at cosine <= 0 shares nothing with the query: it is not a candidate
    near = vectors.knn(store, query_vector, pool, extra, args)
    vec = {cid: s for cid, s in near.items() if s > 0.0}
    vec_ranks = ranks(vec)
    if mode == "vector":
        return {
            cid: Fused(s, {"vector": round(s, 4), "vector_rank": vec_ranks[cid]})
            for cid, s in vec.items()
        }
    kw_ranks = ranks(keyword)
    outside = [cid for cid in keyword if cid not in vec]
    exact = {**vectors.similarities(store, query_vector, outside), **vec}
    if p.method == "weighted":
        fused = weighted(keyword, exact, p)
    else:
        fused = rrf(keyword, vec, p)
    out: dict[int, Fused] = {}
    for cid, score in fused.items():
        signals: dict[str, Any] = {"fusion": round(score, 4)}
        if cid in exact:
            signals["vector"] = round(exact[cid], 4)
        if cid in vec_ranks:
            signals["vector_rank"] = vec_ranks[cid]
        if cid in kw_ranks:
            signals["keyword_rank"] = kw_ranks[cid]
        out[cid] = Fused(score, signals)
    return out
