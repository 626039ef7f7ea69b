"""Combining keyword and vector scores into one score in [0, 1]: the one fusion of a search.

Vector search finds candidate *chunks* (:func:`vector_candidates`); results are *passages*
(memcli.search.pipeline), and :func:`fuse` combines each passage's keyword score with its
chunk's similarity, once. Two methods, chosen by the ``search.fusion`` setting:

``rrf``
    Reciprocal rank fusion: ``sum(w_i / (rrf_k + rank_i))`` over the lists a passage appears
    in, divided by the best possible value (rank 1 in every list), so a passage ranked first by
    both signals scores 1.0. Only ranks matter: robust when the two scores are not comparable.

``weighted``
    Weighted score fusion: ``(w_k * keyword + w_v * vector) / (w_k + w_v)``, where ``keyword``
    is the normalised BM25 score and ``vector`` the cosine similarity, both in [0, 1]. A keyword
    candidate outside the vector top-k gets its exact similarity (read for that row only); a
    vector candidate without a keyword match has keyword score 0.

Weights are ``search.keyword_weight`` and ``search.vector_weight``; ``search.rrf_k`` damps how
much the top ranks dominate in RRF. The defaults are the registry's (memcli.config.registry).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from memcli.config.registry import coerce, default
from memcli.errors import BadInput

if TYPE_CHECKING:
    from memcli.index.store import Store

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class FusionParams:
    method: str = default("search.fusion")
    rrf_k: int = default("search.rrf_k")
    keyword_weight: float = default("search.keyword_weight")
    vector_weight: float = default("search.vector_weight")

    def check(self) -> FusionParams:
        """The parameters checked against the registry (a bad one is exit 2)."""
        method = coerce("search.fusion", self.method)
        rrf_k = coerce("search.rrf_k", self.rrf_k)
        keyword_weight = coerce("search.keyword_weight", self.keyword_weight)
        vector_weight = coerce("search.vector_weight", self.vector_weight)
        if keyword_weight + vector_weight <= 0:
            raise BadInput("search.keyword_weight and search.vector_weight cannot both be 0")
        return FusionParams(method, rrf_k, keyword_weight, vector_weight)


def ranks(scores: dict[K, float]) -> dict[K, int]:
    """1-based ranks, best score first; ties broken by key for a stable order."""
    order = sorted(scores, key=lambda k: (-scores[k], k))
    return {k: i for i, k in enumerate(order, start=1)}


def rrf(keyword: dict[K, float], vector: dict[K, float], p: FusionParams) -> dict[K, float]:
    """Normalised reciprocal rank fusion of two candidate lists (scores only give the order)."""
    best = p.keyword_weight / (p.rrf_k + 1) + p.vector_weight / (p.rrf_k + 1)
    out: dict[K, float] = {}
    for weight, scores in ((p.keyword_weight, keyword), (p.vector_weight, vector)):
        for k, rank in ranks(scores).items():
            out[k] = out.get(k, 0.0) + weight / (p.rrf_k + rank)
    return {k: s / best for k, s in out.items()}


def weighted(keyword: dict[K, float], vector: dict[K, float], p: FusionParams) -> dict[K, float]:
    """Weighted mean of the two scores (a missing score counts as 0)."""
    total = p.keyword_weight + p.vector_weight
    return {
        k: (p.keyword_weight * keyword.get(k, 0.0) + p.vector_weight * vector.get(k, 0.0)) / total
        for k in {*keyword, *vector}
    }


def fuse(
    keyword: dict[K, float], vector: dict[K, float], mode: str, params: FusionParams
) -> dict[K, float]:
    """The fused score of every candidate: in ``vector`` mode the similarity itself, else the
    ``params.method`` fusion of the keyword and vector scores."""
    if mode == "vector":
        return dict(vector)
    p = params.check()
    return weighted(keyword, vector, p) if p.method == "weighted" else rrf(keyword, vector, p)


def vector_candidates(
    store: Store,
    keyword: dict[int, float],
    query_vector: Sequence[float],
    mode: str,
    params: FusionParams,
    pool: int,
    filter_sql: tuple[str, Sequence[Any]] = ("", ()),
) -> dict[int, float | None]:
    """Candidate chunks and their cosine similarity to ``query_vector``.

    The ``pool`` nearest neighbours with a similarity above 0 (at 0 or less, orthogonal or
    opposite, a chunk shares nothing with the query) and, unless ``mode`` is ``vector``, the
    ``keyword`` candidates (chunk id -> keyword score) with their exact similarity (None for
    a chunk without a vector).

    The order matters: when two candidate chunks share the passage that represents them, the
    passage takes the similarity of the later one. It is the order in which the fusion method
    meets the chunks (keyword ranks then vector ranks for rrf), which keeps results as they
    were when chunks were fused before their passages.
    """
    from memcli.index import vectors  # and the embedding cache: not for keyword search (start-up)

    extra, args = filter_sql
    near = vectors.knn(store, query_vector, pool, extra, args)
    vec = {cid: s for cid, s in near.items() if s > 0.0}
    if mode == "vector":
        return dict(vec)
    outside = [cid for cid in keyword if cid not in vec]
    exact = {**vectors.similarities(store, query_vector, outside), **vec}
    if params.check().method == "weighted":
        order: Iterable[int] = {*keyword, *exact}
    else:
        order = {**ranks(keyword), **ranks(vec)}
    return {cid: exact.get(cid) for cid in order}
