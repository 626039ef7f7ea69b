"""The locks a watch deals with: its own (one watcher per workspace) and the index writer's."""

from __future__ import annotations

import threading
import time

from memcli.errors import AlreadyRunning
from memcli.index.watching.events import Emit, warning_event
from memcli.locks import ProcessLock
from memcli.notes.workspace import Workspace

LOCK_NOTICE_S = 2.0  # say so when another process has held the writer lock this long


def watch_lock(ws: Workspace) -> ProcessLock:
    """The one-watcher-per-workspace lock."""
    return ProcessLock(ws.state_dir / "watch.lock", "memcli watch")


def acquire_watch_lock(ws: Workspace) -> ProcessLock:
    """Take the watcher lock or raise AlreadyRunning naming the first watcher's pid."""
    lock = watch_lock(ws)
    try:
        return lock.acquire_or_fail()
    except AlreadyRunning:
        pid = lock.holder_pid()
        raise AlreadyRunning(
            f"memcli watch is already running for {ws.root} (pid {pid or '?'})",
            hint=f"stop it first (kill {pid})" if pid else "stop the other watcher first",
        ) from None


def wait_for_writer(lock: ProcessLock, stop: threading.Event, emit: Emit) -> bool:
    """Take the writer lock, waiting as long as needed; False when ``stop`` is set first.

    After :data:`LOCK_NOTICE_S` of waiting, one ``warning`` event names the holder.
    """
    started = time.monotonic()
    noticed = False
    while not lock.try_acquire():
        if stop.wait(0.05):
            return False
        if not noticed and time.monotonic() - started >= LOCK_NOTICE_S:
            noticed = True
            pid = lock.holder_pid()
            who = f" (pid {pid})" if pid else ""
            emit(warning_event(f"waiting for another process{who} to finish writing the index"))
    return True
