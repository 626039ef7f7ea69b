"""Whether the index's vectors can serve a search: their state, the search plan, the status.

No provider is called here except to embed a search's query, through the
:class:`~memcli.index.embedder.Embedder` the caller hands in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memcli.errors import BadInput, ProviderError
from memcli.index import vectors
from memcli.index.backfill import chunks_label
from memcli.index.embedcache import cache_stats
from memcli.index.embedder import Embedder, Fingerprint
from memcli.index.store import Store


@dataclass
class VectorState:
    """Whether the index's vectors can serve this embedder, and why not."""

    usable: bool
    reason: str
    vectors: int = 0
    chunks: int = 0
    index_model: str | None = None

    @property
    def coverage(self) -> float:
        return round(self.vectors / self.chunks, 4) if self.chunks else 0.0


def vector_state(store: Store, fingerprint: Fingerprint) -> VectorState:
    """Check sqlite-vec, the fingerprint of the index and its coverage (no provider call)."""
    if not store.ensure_vec():
        return VectorState(False, f"sqlite-vec cannot be loaded: {store.vec_error}")
    index_fp = Fingerprint.parse(vectors.index_fingerprint(store))
    vecs, chunks = vectors.coverage(store)
    if index_fp is not None and index_fp != fingerprint:
        return VectorState(
            False,
            f"the index holds vectors of {index_fp.label()}, not {fingerprint.label()};"
            " run 'memcli index' to re-embed",
            0,
            chunks,
            index_fp.model,
        )
    if vecs == 0:
        why = "the index is empty" if chunks == 0 else "no vectors in the index yet"
        return VectorState(False, f"{why}; run 'memcli index'", 0, chunks, None)
    reason = f"embedding model {fingerprint.label()}"
    if vecs < chunks:
        reason += f"; {chunks - vecs} of {chunks_label(chunks)} without vectors yet"
    return VectorState(True, reason, vecs, chunks, fingerprint.model)


@dataclass
class SearchPlan:
    """The mode a search runs in, why, and the query vector when vectors take part."""

    mode: str
    reason: str
    vector: list[float] | None = None
    warnings: list[str] = field(default_factory=list)


def plan_search(store: Store, embedder: Embedder | None, strategy: str, query: str) -> SearchPlan:
    """Decide keyword / vector / hybrid and embed the query (cached); degrade with a warning."""
    strategy = (strategy or "auto").lower()
    if strategy not in ("auto", "keyword", "vector", "hybrid"):
        raise BadInput(
            f"unknown search strategy {strategy!r}", hint="use auto, keyword, vector or hybrid"
        )
    if strategy == "keyword" or not query.strip():
        return SearchPlan("keyword", "keyword strategy requested")
    if embedder is None:
        if strategy != "auto":
            raise BadInput(
                f"--strategy {strategy} needs an embedding model",
                hint="set embedding.model (or MEMCLI_EMBEDDING_MODEL), or use --strategy keyword",
            )
        return SearchPlan("keyword", "no embedding model configured")
    state = vector_state(store, embedder.fingerprint)
    if not state.usable:
        warning = f"vector search is off: {state.reason}; keyword results only"
        return SearchPlan("keyword", state.reason, None, [warning])
    warnings: list[str] = []
    try:
        vector = embedder.embed_query(query)
    except ProviderError as exc:
        reason = f"{exc.message}; fell back to keyword search"
        return SearchPlan("keyword", reason, None, [reason, *embedder.warnings()])
    warnings.extend(embedder.warnings())
    if state.vectors < state.chunks:
        missing = state.chunks - state.vectors
        warnings.append(
            f"{missing} of {chunks_label(state.chunks)} without vectors yet"
            " (found by keyword only); run 'memcli index' to back-fill"
        )
    mode = "vector" if strategy == "vector" else "hybrid"
    return SearchPlan(mode, state.reason, vector, warnings)


def status_info(store: Store, strategy: str, fingerprint: Fingerprint | None) -> dict[str, Any]:
    """``mode``, ``mode_reason``, ``embedding`` and ``cache`` for ``memcli status`` (no network).

    ``fingerprint`` is the configured embedder's, None when no ``embedding.model`` is set.
    """
    cache = cache_stats()
    files_chunks = store.counts()[1]
    strategy = strategy.lower()
    if fingerprint is None:
        return {
            "mode": "keyword",
            "mode_reason": "no embedding model configured",
            "embedding": {"model": None, "vectors": 0, "coverage": 0.0},
            "cache": cache,
        }
    state = vector_state(store, fingerprint)
    if strategy == "keyword":
        mode, reason = "keyword", "search.strategy is keyword"
    elif state.usable:
        mode, reason = ("vector" if strategy == "vector" else "hybrid"), state.reason
    else:
        mode, reason = "keyword", state.reason
    embedding: dict[str, Any] = {
        "model": fingerprint.model,
        "dimensions": vectors.index_dims(store) if state.usable else None,
        "vectors": state.vectors,
        "chunks": state.chunks or files_chunks,
        "coverage": state.coverage,
    }
    if state.index_model and state.index_model != fingerprint.model:
        embedding["index_model"] = state.index_model
    return {"mode": mode, "mode_reason": reason, "embedding": embedding, "cache": cache}
