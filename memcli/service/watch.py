"""Watch: keep the index in step with the Markdown while files change, until stopped."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from memcli.errors import GitError
from memcli.notes.workspace import find_git_root
from memcli.service.core import MemoryCore

if TYPE_CHECKING:
    from collections.abc import Callable

    from memcli.index.store import Store
    from memcli.index.watching.events import Emit, WatchSummary
    from memcli.service.datatypes import (
        WatchOptions,  # the watcher's modules load on a watch, not with every command
    )

__all__ = ["watch"]


def watch(
    core: MemoryCore,
    opts: WatchOptions,
    emit: Emit,
    stop: threading.Event | None = None,
) -> WatchSummary:
    """Re-index memory files as they change until ``stop`` is set or a signal arrives,
    reporting through ``emit`` (see :mod:`memcli.index.watching.events`); one watcher
    per workspace (AlreadyRunning otherwise)."""
    # imported on use: every search imports this module, only a watch needs the loop
    from memcli.index.watching.session import run_watch

    return run_watch(
        core.ws,
        core.settings,
        emit,
        debounce_ms=opts.debounce_ms,
        stop_event=stop,
        handle_signals=opts.handle_signals,
        embedder_factory=core._embedder.factory,
        after_sync=_links_refresher(core),
    )


def _links_refresher(core: MemoryCore) -> Callable[[Store], None] | None:
    """What refreshes the links' last changes after a watched sync (git's), if in git."""
    from memcli.git.changes import refresh_links  # the git room: a watch only

    top = find_git_root(core.ws.root)
    if top is None:
        return None

    def refresh(store: Store) -> None:
        try:
            refresh_links(store, top, core.ws.root)
        except GitError:  # no git to run: the marks wait for 'memcli index'
            pass

    return refresh
