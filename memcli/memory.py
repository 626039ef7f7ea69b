"""The library facade: one object per workspace that every adapter (CLI, fast path) drives.

Each operation is a method; the methods live in :mod:`memcli.service`, one module per kind of
work, and :class:`Memory` is their union.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcli.service.agent import AgentSetup
from memcli.service.core import SEARCH_EMBED_LIMIT
from memcli.service.doctor import DoctorService
from memcli.service.filecontext import FileContextService
from memcli.service.flush import FlushService
from memcli.service.git import GitService
from memcli.service.lifecycle import LifecycleService
from memcli.service.notes import NotesService, parse_get_spec
from memcli.service.searching import SearchService
from memcli.service.settings import SettingsService
from memcli.service.setup import SetupService
from memcli.service.watch import WatchService

if TYPE_CHECKING:
    from memcli.service.datatypes import SyncOptions, SyncReport

__all__ = [
    "SEARCH_EMBED_LIMIT",
    "Memory",
    "parse_get_spec",
]


class Memory(
    AgentSetup,
    FileContextService,
    SetupService,
    LifecycleService,
    NotesService,
    SearchService,
    FlushService,
    GitService,
    WatchService,
    SettingsService,
    DoctorService,
):
    """A workspace with its settings and (lazily) its index: every memcli operation."""

    def sync(self, opts: SyncOptions | None = None) -> SyncReport:
        """Finish a supersede a killed process left half done (a sync never commits and
        pushes half of one), then commit pending memory, pull, push and re-index."""
        self.finish_left_pending()
        return self._sync_git(opts)
