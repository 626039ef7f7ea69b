"""Search operations: the options a search runs with and the search itself."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

import memcli.service.indexing as indexing
from memcli.errors import BadInput
from memcli.search.options import Filters, SearchOptions, SearchRequest
from memcli.search.pipeline import run_search
from memcli.search.plan import plan_search
from memcli.search.request_fields import REQUEST_FIELDS
from memcli.search.results import SearchResult
from memcli.service.core import MemoryCore

if TYPE_CHECKING:
    from memcli.service.search_answers import BatchAnswer, Context


def search(
    core: MemoryCore,
    query: str,
    opts: SearchOptions,
    *,
    sync: bool = True,
    wider: str | None = None,
) -> SearchResult:
    """Search for ``query``. ``wider``: the keyword query to run instead when the search
    uses vectors, whose vector stays ``query``'s (recall's prompt with its related words,
    :mod:`memcli.search.related`)."""
    run = partial(_search, core, query, opts, wider)
    return core._with_repair(lambda: run(sync), retry=lambda: run(True))


def _search(
    core: MemoryCore, query: str, opts: SearchOptions, wider: str | None, sync: bool
) -> SearchResult:
    stale, warnings = indexing.sync_before_search(core) if sync else (False, [])
    plan = plan_search(core.store, core.embedder, opts.strategy, query)
    warnings = [*warnings, *plan.warnings]
    embed = None
    if plan.vector is not None and core.embedder is not None:
        embed = partial(core.embedder.embed, quick=True)
        query = wider or query
    result = run_search(
        core.store, query, opts, mode=plan.mode, query_vector=plan.vector, embed=embed
    )
    result.stale = stale
    result.warnings[:0] = [*core.warnings, *warnings]
    core.warnings.clear()
    return result


def search_options(core: MemoryCore, request: SearchRequest | None = None) -> SearchOptions:
    """The options of a search: the settings, with what ``request`` sets on top."""
    req = (request or SearchRequest()).checked()
    options: dict[str, Any] = {}
    filters: dict[str, Any] = {}
    for field in REQUEST_FIELDS:  # each to its option or its filter, as declared
        value = getattr(req, field.name)
        if field.filter is not None:
            filters[field.filter] = tuple(value) if field.kind == "list" else value
        elif value is not None:
            options[field.name] = value
    if req.mmr_lambda is not None:
        options["mmr"] = req.mmr is not False  # a trade-off given means MMR, unless turned off
    return SearchOptions.from_settings(core.settings, filters=Filters(**filters), **options)


def context(
    core: MemoryCore, query: str, opts: SearchOptions, max_tokens: int | None = None
) -> Context:
    """The results of ``query`` as one Markdown block for a prompt, within ``max_tokens``
    (default ``search.max_tokens``), with ``path:start-end`` citations."""
    from memcli.search.context import render  # only --format context builds a block
    from memcli.service.search_answers import Context  # (with the block)

    budget = core.settings.get("search.max_tokens") if max_tokens is None else max_tokens
    if budget < 1:
        raise BadInput("{max_tokens} must be at least 1", fields=("max_tokens",))
    result = search(core, query, opts)
    return Context(result, render(result.query, result.hits, budget), budget)


def search_batch(
    core: MemoryCore, queries: Iterable[str], opts: SearchOptions
) -> Iterator[BatchAnswer]:
    """One answer per line, in order, from one open index: the changed-files check runs
    once, before the first. A blank line or a query that cannot run answers with its
    error, so answer N is always line N's."""
    from memcli.service.search_answers import BatchAnswer  # batches only

    stale, warnings = indexing.sync_before_search(core)
    lines = list(queries)
    _embed_queries(core, [q.strip() for q in lines if q.strip()], opts)
    for raw in lines:
        query = raw.rstrip("\n")
        if not query.strip():
            yield BatchAnswer(query, None, "empty query")
            continue
        try:
            result = search(core, query, opts, sync=False)
        except BadInput as exc:
            yield BatchAnswer(query, None, exc.message)
            continue
        result.stale = stale
        result.warnings[:0] = warnings
        yield BatchAnswer(query, result, None)


def _embed_queries(core: MemoryCore, queries: list[str], opts: SearchOptions) -> None:
    """Embed a batch's queries in one call (each search then finds its vector in the
    cache), when the searches would embed them; a failure is left to each search."""
    if not queries or opts.strategy == "keyword" or core.embedder is None:
        return
    from memcli.errors import ProviderError

    try:
        core.embedder.embed(list(dict.fromkeys(queries)), quick=True)
    except ProviderError:
        pass  # each search falls back to keyword and says why
