"""What a search returns: hits (passages of chunks with their scores) and the result envelope."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memcli.search import ranking
from memcli.search.snippets import Passage


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
