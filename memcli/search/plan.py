"""A search's plan: the mode it runs in (:func:`memcli.index.vectorplan.choose_mode`) and
the query's vector, embedded through the :class:`~memcli.index.embedder.Embedder` the caller
hands in; a provider that fails makes it a keyword search, with a warning."""

# No `from __future__ import annotations` here: typing compiles each string annotation of a
# NamedTuple at import (typing.ForwardRef), on every search and prompt hook.
from functools import partial
from typing import NamedTuple

from memcli.errors import ProviderError
from memcli.index.embedder import Embedder
from memcli.index.store import Store
from memcli.index.vectorplan import check_strategy, choose_mode, vector_state


class SearchPlan(NamedTuple):
    """The mode a search runs in, why, and the query vector when vectors take part."""

    mode: str
    reason: str
    vector: list[float] | None
    warnings: list[str]


def plan_search(store: Store, embedder: Embedder | None, strategy: str, query: str) -> SearchPlan:
    """Choose the mode (:func:`choose_mode`) and embed the query (cached); degrade to keyword
    search with a warning when the provider fails."""
    choice = choose_mode(
        check_strategy(strategy),
        embedder.fingerprint if embedder is not None else None,
        partial(vector_state, store),
        query=query,
        strict=True,
    )
    if embedder is None or choice.mode == "keyword":
        return SearchPlan("keyword", choice.reason, None, list(choice.warnings))
    try:
        vector = embedder.embed_query(query)
    except ProviderError as exc:
        reason = f"{exc.message}; fell back to keyword search"
        return SearchPlan("keyword", reason, None, [reason, *embedder.warnings()])
    return SearchPlan(choice.mode, choice.reason, vector, [*embedder.warnings(), *choice.warnings])
