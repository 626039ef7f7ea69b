"""One watch from start to finish: the watcher lock, signals, the loop and its ``stopped``."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any

from memcli.config import Settings
from memcli.index.embedder import EmbedderFactory
from memcli.index.store import Store
from memcli.index.watching.events import Emit, WatchSummary, stopped_event
from memcli.index.watching.loop import Watcher
from memcli.index.watching.signals import stop_on_signals
from memcli.index.watching.watch_locks import acquire_watch_lock
from memcli.notes.workspace import Workspace


def run_watch(
    ws: Workspace,
    settings: Settings,
    emit: Emit,
    *,
    debounce_ms: int | None = None,
    stop_event: threading.Event | None = None,
    handle_signals: bool = True,
    embedder_factory: EmbedderFactory,
    after_sync: Callable[[Store], None] | None = None,
) -> WatchSummary:
    """Watch a workspace until a signal (or ``stop_event``); emits ``stopped`` at the end.

    Raises AlreadyRunning when another watcher holds the workspace, and
    KeyboardInterrupt after a second signal (the current batch is abandoned,
    its transaction rolled back; locks are released either way). Signals are
    handled only in the main thread.
    """
    stop = stop_event or threading.Event()
    ws.ensure_state_dir()
    lock = acquire_watch_lock(ws)
    watcher = Watcher(
        ws,
        settings,
        emit,
        stop,
        debounce_ms=debounce_ms,
        embedder_factory=embedder_factory,
        after_sync=after_sync,
    )
    in_main = threading.current_thread() is threading.main_thread()
    signals: contextlib.AbstractContextManager[dict[str, Any]] = (
        stop_on_signals(stop) if handle_signals and in_main else contextlib.nullcontext({})
    )
    reason = "stopped"
    try:
        with signals as seen:
            try:
                summary = watcher.run()
            except KeyboardInterrupt:
                reason = "interrupted"
                raise
            finally:
                if reason != "interrupted" and seen and seen.get("signal"):
                    reason = seen["signal"]
                watcher.close()
                lock.release()
                emit(stopped_event(reason, watcher.syncs))
    finally:
        lock.release()
    summary.reason = reason
    return summary
