"""Search operations: the options a search runs with and the search itself."""

from __future__ import annotations

from typing import Any

from memcli.errors import BadInput
from memcli.index.vectorplan import plan_search
from memcli.search.pipeline import SearchOptions, SearchResult, run_search
from memcli.service.indexing import IndexService


class SearchService(IndexService):
    def search(self, query: str, opts: SearchOptions, *, sync: bool = True) -> SearchResult:
        return self._with_repair(
            lambda: self._search(query, opts, sync=sync),
            retry=lambda: self._search(query, opts, sync=True),
        )

    def _search(self, query: str, opts: SearchOptions, *, sync: bool = True) -> SearchResult:
        stale, warnings = self.sync_before_search() if sync else (False, [])
        mode, vector = "keyword", None
        if self.embedder is not None or opts.strategy not in ("auto", "keyword"):
            plan = plan_search(self.store, self.embedder, opts.strategy, query)
            mode, vector = plan.mode, plan.vector
            warnings = [*warnings, *plan.warnings]
        result = run_search(self.store, query, opts, mode=mode, query_vector=vector)
        result.stale = stale
        result.warnings[:0] = [*self.warnings, *warnings]
        self.warnings = []
        return result

    def search_options(self, **flags: Any) -> SearchOptions:
        """SearchOptions from settings, with non-None ``flags`` on top."""
        s = self.settings
        opts = SearchOptions(
            limit=s.get("search.limit"),
            min_score=s.get("search.min_score"),
            strategy=s.get("search.strategy"),
            candidates=s.get("search.candidates"),
            decay=s.get("decay.enabled"),
            half_life_days=s.get("decay.half_life_days"),
            snippet_lines=s.get("search.snippet_lines"),
            fusion=s.get("search.fusion"),
            rrf_k=s.get("search.rrf_k"),
            keyword_weight=s.get("search.keyword_weight"),
            vector_weight=s.get("search.vector_weight"),
        )
        for key, value in flags.items():
            if value is not None:
                setattr(opts, key, value)
        if opts.limit < 1:
            raise BadInput("-n/--limit must be at least 1")
        return opts
