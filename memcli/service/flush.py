"""Flush: a conversation (its text or a file) turned into new facts in the daily file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcli.errors import BadInput
from memcli.service.git import GitService

if TYPE_CHECKING:
    from memcli.flush.facts import FlushResult
    from memcli.service.datatypes import (
        FlushOptions,  # the flush modules load on a flush, not with every command
    )

__all__ = ["FlushService"]


class FlushService(GitService):
    def flush(self, opts: FlushOptions) -> FlushResult:
        """Extract durable facts from a conversation (LLM), skip known ones, append the rest
        under a provenance heading; see :mod:`memcli.flush.pipeline`."""
        # imported on use: every search imports this module, only a flush needs the pipeline
        from memcli.flush.pipeline import flush as run_flush
        from memcli.flush.source import read_conversation  # flush code: only a flush needs it

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
            agent=opts.agent,
        )
