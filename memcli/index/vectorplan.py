"""Whether the index's vectors can serve a search: their state and the mode.

:func:`choose_mode` is the one place that decides keyword, vector or hybrid, and why; a
search (:func:`memcli.search.plan.plan_search`), ``memcli status`` and ``memcli doctor``
(:func:`status_info`) all read it. No provider is called here.
"""

# No `from __future__ import annotations` here: typing compiles each string annotation of a
# NamedTuple at import (typing.ForwardRef), on every search and prompt hook.
from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

from memcli.config.registry import lookup
from memcli.errors import BadInput
from memcli.index.embedder import Fingerprint
from memcli.index.store import Store


class VectorState(NamedTuple):  # NamedTuples: cheap to define on every search's start-up
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
    from memcli.index import vectors  # vectors matter only with a model: keyword search skips it

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


class ModeChoice(NamedTuple):
    """The mode a search runs in (keyword, vector or hybrid), why, and what a search tells the
    user about it (``warnings``; status and doctor show the reason instead)."""

    mode: str
    reason: str
    warnings: tuple[str, ...] = ()


def chunks_label(n: int) -> str:
    return f"{n} chunk" if n == 1 else f"{n} chunks"


def strategy_choices() -> tuple[str, ...]:
    """The values ``search.strategy`` and ``--strategy`` accept (from the settings registry)."""
    return lookup("search.strategy").choices


def check_strategy(strategy: str | None) -> str:
    """``strategy`` in lower case (empty: ``auto``); BadInput naming the choices if unknown."""
    name = (strategy or "auto").lower()
    choices = strategy_choices()
    if name not in choices:
        listed = f"{', '.join(choices[:-1])} or {choices[-1]}"
        raise BadInput(f"unknown search strategy {name!r}", hint=f"use {listed}")
    return name


def choose_mode(
    strategy: str,
    fingerprint: Fingerprint | None,
    state_of: Callable[[Fingerprint], VectorState],
    *,
    query: str | None = None,
    strict: bool = False,
) -> ModeChoice:
    """Decide keyword / vector / hybrid from the strategy (setting or flag, already checked),
    the configured model's ``fingerprint`` (None: no ``embedding.model``) and the index's
    vectors (``state_of(fingerprint)``, asked only when the answer depends on it).

    ``query`` (a search's; None for status) leaves a blank query to keyword search. With
    ``strict`` (a search), a strategy that needs vectors and no model is a BadInput.
    """
    if query is not None and not query.strip():
        return ModeChoice("keyword", "nothing to embed in the query")
    if fingerprint is None:
        if strict and strategy not in ("auto", "keyword"):
            raise BadInput(
                f"{{strategy}} {strategy} needs an embedding model",
                hint="set embedding.model (or MEMCLI_EMBEDDING_MODEL), or use {strategy} keyword",
                fields=("strategy",),
            )
        return ModeChoice("keyword", "no embedding model configured")
    if strategy == "keyword":
        return ModeChoice("keyword", "search.strategy is keyword")
    state = state_of(fingerprint)
    if not state.usable:
        warning = f"vector search is off: {state.reason}; keyword results only"
        return ModeChoice("keyword", state.reason, (warning,))
    warnings: tuple[str, ...] = ()
    if state.vectors < state.chunks:
        missing = state.chunks - state.vectors
        warnings = (
            f"{missing} of {chunks_label(state.chunks)} without vectors yet"
            " (found by keyword only); run 'memcli index' to back-fill",
        )
    return ModeChoice("vector" if strategy == "vector" else "hybrid", state.reason, warnings)


def status_info(store: Store, strategy: str, fingerprint: Fingerprint | None) -> dict[str, Any]:
    """``mode``, ``mode_reason``, ``embedding`` and ``cache`` for ``memcli status`` (no network).

    ``fingerprint`` is the configured embedder's, None when no ``embedding.model`` is set.
    """
    from memcli.index import vectors  # status only: a search does not read the cache's size
    from memcli.index.embedcache import cache_stats  # with vectors above (status only)

    cache = cache_stats()
    files_chunks = store.counts()[1]
    if fingerprint is None:
        choice = choose_mode(strategy.lower(), None, partial(vector_state, store))
        return {
            "mode": choice.mode,
            "mode_reason": choice.reason,
            "embedding": {"model": None, "vectors": 0, "coverage": 0.0},
            "cache": cache,
        }
    state = vector_state(store, fingerprint)
    choice = choose_mode(strategy.lower(), fingerprint, lambda _fp: state)
    embedding: dict[str, Any] = {
        "model": fingerprint.model,
        "dimensions": vectors.index_dims(store) if state.usable else None,
        "vectors": state.vectors,
        "chunks": state.chunks or files_chunks,
        "coverage": state.coverage,
    }
    if state.index_model and state.index_model != fingerprint.model:
        embedding["index_model"] = state.index_model
    return {
        "mode": choice.mode,
        "mode_reason": choice.reason,
        "embedding": embedding,
        "cache": cache,
    }
