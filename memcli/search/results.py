"""What a search returns: hits (passages of chunks with their scores) and the result envelope."""

from __future__ import annotations

from typing import Any

from memcli.notes.entryparse import entry_marks
from memcli.notes.redact import redact_lines
from memcli.search import ranking
from memcli.search.snippets import Passage


class Hit:
    """A chunk that matched and, once ranked, the passage of it that a result shows: its
    score, the scores behind it, the snippet and its lines."""

    __slots__ = (
        "chunk_id", "path", "chunk_start", "chunk_end", "heading", "text", "source", "date",
        "evergreen", "score", "scores", "snippet", "start_line", "end_line", "explain",
        "flags", "passage", "signal", "terms", "state", "confirmed", "corroborated", "ids",
        "match_line", "match_lines", "stale", "id_states",
    )  # fmt: skip

    def __init__(
        self,
        chunk_id: int,
        path: str,
        chunk_start: int,
        chunk_end: int,
        heading: str,
        text: str,  # the whole chunk (chunk_start is its first line)
        source: str,
        date: str | None,
        evergreen: bool,
        score: float = 0.0,
        *,
        passage: Passage | None = None,
        signal: ranking.KeywordSignal | None = None,
        terms: ranking.QueryTerms | None = None,
    ) -> None:
        self.chunk_id, self.path, self.heading, self.text = chunk_id, path, heading, text
        self.chunk_start, self.chunk_end = chunk_start, chunk_end
        self.source, self.date, self.evergreen = source, date, evergreen
        self.score = score
        self.scores: dict[str, Any] = {}
        self.snippet = ""
        self.start_line = self.end_line = 0
        self.explain: dict[str, Any] | None = None
        self.flags: list[str] = []  # "instruction-like": the snippet reads as an order
        self.passage, self.signal, self.terms = passage, signal, terms
        # the chunk's lifecycle (memcli.notes.lifecycle): state ('' active, superseded,
        # retracted, review, expired once past its date) and how often it was vouched for
        self.state, self.confirmed, self.corroborated = "", 0, 0
        self.ids: list[str] = []  # ids of the entries the snippet shows (lifecycle commands)
        self.id_states: list[str] = []  # the state of each (active, superseded...)
        # the first line of the passage that ranked it, and every line of the passages that
        # matched among the snippet's (it, and those merged into its result)
        self.match_line: int | None = None
        self.match_lines: list[int] = []
        # a repository path its facts name changed after them (memcli.search.stale)
        self.stale: dict[str, str] | None = None

    def __repr__(self) -> str:
        return f"Hit({self.path}:{self.start_line}-{self.end_line}, score={self.score:.4f})"

    def point(self, merged: list[Hit]) -> None:
        """Set the lines that matched: this hit's passage, then those ``merged`` into its
        result, as far as the snippet (``start_line``..``end_line``) shows them."""
        lines = {
            n
            for h in (self, *merged)
            if h.passage is not None
            for n in range(max(h.passage.start, self.start_line), h.passage.end + 1)
            if n <= self.end_line
        }
        self.match_lines = sorted(lines)
        start = self.passage.start if self.passage is not None else None
        if start in lines:
            self.match_line = start
        else:
            self.match_line = self.match_lines[0] if self.match_lines else None

    def show(self, text: str, today: str) -> list[str]:
        """Make ``text`` (lines of a file) this hit's snippet as a result shows it: redacted
        (as ``get`` shows it: no secret on screen), with the ids of the entries it holds;
        their states (superseded, under review...)."""
        self.ids, self.id_states = entry_marks(text, today)
        self.snippet = redact_lines(text).text
        return list(dict.fromkeys(s for s in self.id_states if s != "active"))

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
            "flags": self.flags,
            "ids": self.ids,
            "match_line": self.match_line,
            "match_lines": self.match_lines,
            "stale": self.stale,
        }
        if self.explain is not None:
            out["explain"] = self.explain
        return out


class SearchResult:
    """The envelope of a search: the query, the mode it ran in, whether the index may be
    stale (None: not checked, ``index.sync_on_search`` is off), warnings and the hits."""

    __slots__ = ("query", "mode", "stale", "warnings", "hits")

    def __init__(self, query: str, mode: str, stale: bool | None = False) -> None:
        self.query, self.mode, self.stale = query, mode, stale
        self.warnings: list[str] = []
        self.hits: list[Hit] = []

    def view(self) -> dict[str, Any]:
        """The result as ``memcli search``'s output forms print it, whoever ran the search
        (the workspace's engine sends this): its JSON, each hit's unrounded score (the text
        forms show three digits of it) and the query's stems each hit matched (what a
        terminal's table highlights)."""
        return {
            "result": self.as_dict(),
            "scores": [h.score for h in self.hits],
            "stems": [sorted(h.terms.stems) if h.terms is not None else None for h in self.hits],
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "stale": self.stale,
            "warnings": list(self.warnings),
            "results": [h.as_dict() for h in self.hits],
        }
