"""What a flush deals in: the facts the model returns and the report of what became of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Fact:
    """A validated fact from the model."""

    text: str
    type: str | None = None
    tags: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"text": self.text, "type": self.type, "tags": list(self.tags)}


@dataclass
class FactOutcome:
    """What happened to one fact: written (line set) or skipped (reason set)."""

    fact: Fact
    line: int | None = None
    reason: str | None = None  # duplicate | near-duplicate | repeated
    duplicate_of: str | None = None  # path:line of the existing fact
    similarity: float | None = None
    redactions: tuple[str, ...] = ()
    # how it was reconciled with what memory holds (memcli.flush.reconcile)
    decision: str = "add"  # add, update, duplicate, conflict, review or discard
    target: str | None = None  # id of the known fact it updates, repeats or contradicts
    by: str = "rule"  # rule or llm
    why: str | None = None
    status: tuple[str, ...] = ()  # status lines written under it

    def as_dict(self) -> dict[str, Any]:
        d = self.fact.as_dict()
        if self.reason is None:
            d["line"] = self.line
        else:
            d["reason"] = self.reason
            d["duplicate_of"] = self.duplicate_of
            if self.similarity is not None:
                d["similarity"] = round(self.similarity, 3)
        d.update(decision=self.decision, target=self.target, by=self.by, why=self.why)
        return d


@dataclass
class FlushResult:
    """Everything a flush did (or, with ``dry_run``, would do)."""

    conversation: str  # hash8
    path: str | None  # workspace-relative target file
    heading: str | None  # the provenance heading of this flush
    dry_run: bool = False
    already_flushed: str | None = None  # path:line of the earlier heading
    written: list[FactOutcome] = field(default_factory=list)
    skipped: list[FactOutcome] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # invalid candidates, with the reason
    messages: int = 0
    parts: int = 0
    requests: int = 0
    redactions: list[str] = field(default_factory=list)
    commit: str | None = None
    message: str = ""
    warnings: list[str] = field(default_factory=list)
    discarded: dict[str, int] = field(default_factory=dict)  # reason -> facts dropped
    model: str = ""  # the LLM asked (llm.model, or the agent CLI: claude-code, codex)
    calls: list[float] = field(default_factory=list)  # the seconds of each call that answered

    def as_dict(self) -> dict[str, Any]:
        return {
            "conversation": self.conversation,
            "path": self.path,
            "heading": self.heading if self.written else None,  # only when it was written
            "dry_run": self.dry_run,
            "already_flushed": self.already_flushed,
            "written": [o.as_dict() for o in self.written],
            "skipped": [o.as_dict() for o in self.skipped],
            "rejected": list(self.rejected),
            "messages": self.messages,
            "parts": self.parts,
            "requests": self.requests,
            "redactions": list(self.redactions),
            "commit": self.commit,
            "message": self.message,
            "warnings": list(self.warnings),
            "decisions": _count(o.decision for o in [*self.written, *self.skipped]),
            "discarded": dict(self.discarded),
        }


def _count(items: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return out
