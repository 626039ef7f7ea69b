"""Options and results of the operations that are not on the plain search path (add, get,
git history and sync, flush, watch, init). They live apart from the service modules so that a
search, which imports ``Memory`` and with it every service module, does not pay for creating these
classes. The context block's and a batch's results are in :mod:`memcli.service.search_answers`:
the prompt hook makes one."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memcli.errors import BadInput
from memcli.service.search_answers import BatchAnswer, Context  # noqa: F401  (their old home)

if TYPE_CHECKING:
    from memcli.git.sync import SyncResult
    from memcli.index.indexer import IndexReport


@dataclass(frozen=True)
class DiffOptions:
    """What to compare: ``rev_range`` (``A..B``, ``A...B``, ``REV``; None: the work tree
    against HEAD) or ``since`` a date (from the last commit before it to the work tree)."""

    rev_range: str | None = None
    since: str | None = None


@dataclass(frozen=True)
class LogOptions:
    """Which commits: from ``rev`` (None: HEAD), at most ``limit``, only ``since`` a date."""

    rev: str | None = None
    limit: int = 20
    since: str | None = None

    def __post_init__(self) -> None:
        if self.limit < 1:
            raise BadInput(f"{{limit}} must be at least 1, got {self.limit}", fields=("limit",))


@dataclass(frozen=True)
class SyncOptions:
    """``strategy`` rebase or merge (None: the setting ``git.sync_strategy``); ``commit``
    pending memory first (else refuse when there is some); ``push`` afterwards."""

    strategy: str | None = None
    commit: bool = True
    push: bool = True


@dataclass
class SyncReport:
    """A sync and the re-index that followed it (the ``sync --json`` payload)."""

    sync: SyncResult
    index: IndexReport

    @property
    def warnings(self) -> list[str]:
        return self.index.warnings

    def as_dict(self) -> dict[str, Any]:
        return {**self.sync.as_dict(), "index": self.index.as_dict()}


@dataclass(frozen=True)
class FlushOptions:
    """What to flush and how; give the conversation as ``text`` or as a file ``path``."""

    text: str | None = None  # the conversation: JSON messages, JSON Lines or a transcript
    path: str | Path | None = None  # a file holding it (relative: to the current directory)
    namespace: str | None = None  # write memory/NS/YYYY-MM-DD.md
    dry_run: bool = False  # report the facts that would be written; write nothing
    prompt_file: str | Path | None = None  # instructions (relative: to the workspace root)
    commit: bool = False  # git commit the memory file afterwards
    now: datetime | None = None  # the flush time (heading, entry times, daily file)
    agent: str | None = None  # the agent whose session it is: with no llm.model, its CLI asks


@dataclass(frozen=True)
class WatchOptions:
    """How to watch."""

    debounce_ms: int | None = None  # quiet time before a batch is indexed (None: the setting)
    handle_signals: bool = True  # SIGINT/SIGTERM/SIGHUP stop it (in the main thread only)

    def __post_init__(self) -> None:
        if self.debounce_ms is not None and self.debounce_ms < 0:
            raise BadInput("{debounce_ms} must be 0 or more milliseconds", fields=("debounce_ms",))


@dataclass
class InitResult:
    workspace: Path
    created: list[str] = field(default_factory=list)
    hooks: list[dict[str, Any]] | None = None  # set when hooks were asked for
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"workspace": str(self.workspace), "created": self.created}
        if self.hooks is not None:
            out["hooks"] = self.hooks
        return out


@dataclass
class AddResult:
    path: str
    line: int
    entry: str
    added: bool
    duplicate_of: str | None = None
    redactions: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    committed: bool = False  # a commit was asked for (``commit`` is then its sha, or None)
    commit: str | None = None

    @property
    def id(self) -> str:
        """The fact's id (the one lifecycle commands take): the same for a duplicate."""
        from memcli.notes.entryparse import entry_fields, fact_key  # ids of the entry
        from memcli.notes.lifecycle import ID_CHARS

        body = next(iter(entry_fields(self.entry)), None)
        return fact_key(body[0] if body else self.entry)[:ID_CHARS]

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "path": self.path,
            "line": self.line,
            "entry": self.entry.rstrip("\n"),
            "added": self.added,
            "duplicate_of": self.duplicate_of,
            "redactions": self.redactions,
        }
        if self.committed:
            out["commit"] = self.commit
        return out


@dataclass
class GetResult:
    path: str
    start_line: int
    end_line: int
    lines: list[str]

    def as_dict(self) -> dict[str, Any]:
        from memcli.notes.entryparse import entry_fields, fact_key  # ids of the entries shown
        from memcli.notes.lifecycle import ID_CHARS

        text = "\n".join(self.lines)
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "text": text,
            "ids": [fact_key(body)[:ID_CHARS] for body, *_ in entry_fields(text)],
        }
