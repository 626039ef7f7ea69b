"""What a search hands back besides its result: the context block made of it (the prompt
hook's, ``--format context``'s) and one query of a batch. NamedTuples, not dataclasses: a
dataclass would load ``inspect`` on every prompt an agent submits."""

# No `from __future__ import annotations` here: typing compiles each string annotation of a
# NamedTuple at import (typing.ForwardRef), on every search and prompt hook.
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from memcli.search.context import ContextBlock
    from memcli.search.results import SearchResult

__all__ = ["BatchAnswer", "Context"]


class Context(NamedTuple):
    """A search and the context block made of its results (``block.included`` of them fit)."""

    result: "SearchResult"
    block: "ContextBlock"
    budget: int

    @property
    def overflow(self) -> str | None:
        """Why the block is empty although results were found (the budget is too small)."""
        if self.result.hits and not self.block.included:
            return f"no result fits in {self.budget} tokens; raise --max-tokens"
        return None

    def view(self) -> dict[str, Any]:
        """The block as ``memcli search --format context`` prints it, whoever ran the search
        (the workspace's engine sends this): its text, the search's warnings, why nothing fit
        (None: something did) and whether anything was found."""
        return {
            "context": {
                "text": self.block.text,
                "warnings": list(self.result.warnings),
                "overflow": self.overflow,
                "found": bool(self.result.hits),
            }
        }

    def as_dict(self) -> dict[str, Any]:
        """The block for a program that hands it to a model (an MCP tool, a hook): its text,
        its sections with their citations and flags, and what the search said."""
        return {
            "query": self.result.query,
            "mode": self.result.mode,
            "stale": self.result.stale,
            "warnings": [*self.result.warnings, *([self.overflow] if self.overflow else [])],
            "budget": self.budget,
            "text": self.block.text,
            "included": self.block.included,
            "left_out": self.block.left_out,
            "sections": [s.as_dict() for s in self.block.sections],
        }


class BatchAnswer(NamedTuple):
    """One query of a batch: its result, or the one-line error that stopped it."""

    query: str
    result: "SearchResult | None"
    error: str | None

    def as_dict(self) -> dict[str, Any]:
        if self.result is None:
            return {"query": self.query, "error": self.error, "results": []}
        return self.result.as_dict()
