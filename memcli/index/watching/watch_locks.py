"""The locks a watch deals with: its own (one watcher per workspace) and the index writer's."""

from __future__ import annotations

import threading

from memcli.errors import AlreadyRunning
from memcli.index.watching.events import Emit, warning_event
from memcli.locks import LOCK_NOTICE_S, ProcessLock
from memcli.notes.workspace import Workspace


def watch_lock(ws: Workspace) -> ProcessLock:
    """The one-watcher-per-workspace lock."""
    return ProcessLock(ws.state_file("watch.lock"), "memcli watch")


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

    After :data:`~memcli.locks.LOCK_NOTICE_S` of waiting, one ``warning`` event names the holder.
    """

    def notice(pid: int | None) -> None:
        who = f" (pid {pid})" if pid else ""
        emit(warning_event(f"waiting for another process{who} to finish writing the index"))

    return lock.wait(stop=stop, on_wait=notice, notice_after=LOCK_NOTICE_S)
