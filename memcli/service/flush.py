"""Flush: a conversation (its text or a file) turned into new facts in the daily file."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import memcli.service.git as gitops
import memcli.service.indexing as indexing
from memcli.errors import BadInput
from memcli.service.core import MemoryCore

if TYPE_CHECKING:
    from memcli.config import Settings
    from memcli.flush.facts import FlushResult
    from memcli.flush.pipeline import FlushHost
    from memcli.index.indexer import IndexReport
    from memcli.index.store import Store
    from memcli.notes.workspace import Workspace
    from memcli.service.datatypes import (
        FlushOptions,  # the flush modules load on a flush, not with every command
    )

__all__ = ["FlushWorkspace", "flush"]


class FlushWorkspace:
    """What the flush pipeline runs for (its :class:`~memcli.flush.pipeline.FlushHost`): a
    workspace's core, with the index run, the sync before a search and the commit of this
    service, the same functions the CLI's commands reach through ``Memory``."""

    def __init__(self, core: MemoryCore) -> None:
        self.core = core
        self.ws: Workspace = core.ws
        self.settings: Settings = core.settings
        self.warnings: list[str] = core.warnings

    @property
    def store(self) -> Store:
        return self.core.store

    def sync_before_search(self) -> tuple[bool | None, list[str]]:
        return indexing.sync_before_search(self.core)

    def index(self, paths: list[str] | None = None) -> IndexReport:
        return indexing.index(self.core, paths)

    def commit(self, paths: list[Path], message: str) -> str | None:
        return gitops.commit(self.core, paths, message)


def host(core: MemoryCore) -> FlushHost:
    """The flush pipeline's host for ``core``."""
    return FlushWorkspace(core)


def flush(core: MemoryCore, opts: FlushOptions) -> FlushResult:
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
        host(core),
        text,
        namespace=opts.namespace,
        dry_run=opts.dry_run,
        prompt_file=opts.prompt_file,
        commit=opts.commit,
        now=opts.now,
        agent=opts.agent,
    )
