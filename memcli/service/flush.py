"""Flush: a conversation (its text or a file) turned into new facts in the daily file."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from memcli.errors import BadInput
from memcli.service.git import GitService

if TYPE_CHECKING:  # the flush modules load on a flush, not with every command
    from memcli.flush.facts import FlushResult

__all__ = ["FlushOptions", "FlushService"]


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


class FlushService(GitService):
    def flush(self, opts: FlushOptions) -> FlushResult:
        """Extract durable facts from a conversation (LLM), skip known ones, append the rest
        under a provenance heading; see :mod:`memcli.flush.pipeline`."""
        # imported on use: every search imports this module, only a flush needs the pipeline
        from memcli.flush.pipeline import flush as run_flush
        from memcli.flush.source import read_conversation

        if opts.path is not None and opts.text is None:
            text = read_conversation(opts.path)
        elif opts.text is not None and opts.path is None:
            text = opts.text
        else:
            raise BadInput("give the conversation either as text or as a file path")
        return run_flush(
            self,
            text,
            namespace=opts.namespace,
            dry_run=opts.dry_run,
            prompt_file=opts.prompt_file,
            commit=opts.commit,
            now=opts.now,
        )
