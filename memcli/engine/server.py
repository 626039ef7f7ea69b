"""``memcli serve``: one warm engine per workspace, answering over a Unix socket.

It keeps the index open and the embedder loaded (a local model loads once, not on every
call), and answers requests (search, add, get, files, status, and an agent's hooks: recall
and briefing) from several clients at once (:class:`~memcli.engine.engine.Engine`): each
runs on one of a few worker threads, each with its own :class:`~memcli.memory.Memory` (its
own SQLite connection), all sharing one embedder. A watcher runs in the engine too
(unless turned off): while it is established, a search runs only the quick freshness check
(folders' times and the files changed last) and the watcher re-indexes the rest as it
changes; without it, a search checks as in process (``index.freshness``). The engine answers
only clients of its own memcli version and with the same ``MEMCLI_*`` settings in their
environment (and the same home, config and cache folders and time zone); others answer in
process. It stops on ``memcli serve --stop``, on SIGINT/SIGTERM, or after
``engine.idle_timeout`` minutes without a request; one runs per workspace (a lock beside the
socket), and a stale socket left by a killed engine is replaced. It listens only in a runtime
folder of its user's that no one else can enter (:func:`check_runtime_folder`).
"""

from __future__ import annotations

import json
import os
import signal
import socketserver
import threading
import time
from pathlib import Path
from typing import Any

from memcli.engine.engine import Engine
from memcli.enginelink import MAX_REQUEST, engine_files, folder_problem
from memcli.errors import AlreadyRunning, MemcliError
from memcli.locks import ProcessLock

__all__ = ["Engine", "serve"]


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        engine: Engine = self.server.engine  # type: ignore[attr-defined]
        try:
            line = self.rfile.readline(MAX_REQUEST + 1)
            request = json.loads(line)
        except (OSError, ValueError):
            return
        answer = engine.answer(request)
        try:
            self.wfile.write(json.dumps(answer).encode() + b"\n")
        except OSError:
            pass  # the client went away


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def serve(
    root: Path,
    idle_timeout: float,
    on_ready: Any = None,
    *,
    watch: bool = True,
    on_event: Any = None,
    debounce_ms: int | None = None,
) -> dict[str, Any]:
    """Run the engine of the workspace at ``root`` until stopped or idle; returns its info.
    AlreadyRunning when another engine serves this workspace. With ``watch``, a watcher
    (``memcli watch``) runs in the same process and stops with it; its events go to
    ``on_event``, by default its errors and warnings to ``.memcli/engine.log``."""
    sock_path, lock_path = engine_files(root)
    check_runtime_folder(sock_path.parent)
    lock = ProcessLock(lock_path, what=f"the engine of {root}")
    if not lock.try_acquire():
        pid = lock.holder_pid()
        raise AlreadyRunning(
            f"an engine already serves {root} (pid {pid or '?'}, socket {sock_path})",
            hint="memcli serve --status, or --stop",
        )
    try:
        sock_path.unlink(missing_ok=True)  # a socket left by an engine that was killed
        engine = Engine(root, idle_timeout)
        server = _Server(str(sock_path), _Handler)
        server.engine = engine  # type: ignore[attr-defined]
        os.chmod(sock_path, 0o600)
        stop = threading.Event()

        def idle_check() -> None:
            while not stop.wait(0.2):
                idle = time.monotonic() - engine.last
                if engine.stopping.is_set() or (engine.idle_timeout and idle > engine.idle_timeout):
                    server.shutdown()
                    return

        threading.Thread(target=idle_check, name="memcli-engine-idle", daemon=True).start()
        previous = _handle_signals(engine)
        engine.warm()  # first: its connection stays open (see warm)
        watcher = _start_watcher(engine, stop, on_event, debounce_ms) if watch else None
        if on_ready is not None:
            on_ready(engine.info())
        try:
            server.serve_forever(poll_interval=0.2)
        finally:
            stop.set()
            server.server_close()
            if watcher is not None:
                watcher.join(timeout=10)  # its last sync and its "stopped" event
            sock_path.unlink(missing_ok=True)
            engine.close()
            _restore_signals(previous)
        return engine.info()
    finally:
        lock.release()


def check_runtime_folder(folder: Path) -> None:
    """Make the engine's runtime ``folder`` (mode 0700) if it is missing, and refuse to
    listen there (MemcliError) unless it is safe (:func:`memcli.enginelink.folder_problem`):
    another local user must not be able to put a socket of theirs in place of ours."""
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise MemcliError(
            f"cannot make the engine's runtime folder {folder}: {exc.strerror}"
        ) from None
    problem = folder_problem(folder)
    if problem is not None:
        raise MemcliError(
            f"the engine's runtime folder is not safe: {problem}",
            hint="use a folder of yours with mode 0700: set XDG_RUNTIME_DIR or"
            " MEMCLI_RUNTIME_DIR (searches answer in process meanwhile)",
        )


def _start_watcher(
    engine: Engine, stop: threading.Event, on_event: Any, debounce_ms: int | None
) -> threading.Thread:
    """``memcli watch`` on a thread of the engine, until ``stop``; its events go to
    ``on_event``, or (None) its errors and warnings are logged. While it is established and
    its last sync succeeded, searches trust it and run the quick freshness check."""
    from memcli.memory import Memory
    from memcli.service.datatypes import WatchOptions
    from memcli.statedir import append_text, state_path

    log = state_path(engine.root, "engine.log")

    def emit(event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind in ("ready", "sync"):
            engine.watch_live.set()
        elif kind in ("error", "stopped"):
            engine.watch_live.clear()  # a failed sync is retried: full checks until then
        if on_event is not None:
            on_event(event)
        elif kind in ("error", "warning", "ready", "stopped"):
            try:
                append_text(log, json.dumps(event) + "\n")
            except OSError:
                pass

    def run() -> None:
        try:
            with Memory.open(engine.root, lenient=True) as mem:
                opts = WatchOptions(debounce_ms=debounce_ms, handle_signals=False)
                mem.watch(opts, emit, stop)
        except Exception as exc:  # e.g. another watcher runs: logged, the engine serves on
            emit({"event": "error", "message": getattr(exc, "message", str(exc))})
        engine.watch_live.clear()
        engine.watching = False

    engine.watching = True
    thread = threading.Thread(target=run, name="memcli-engine-watch", daemon=True)
    thread.start()
    return thread


def _handle_signals(engine: Engine) -> dict[int, Any]:
    if threading.current_thread() is not threading.main_thread():
        return {}
    previous: dict[int, Any] = {}
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        previous[sig] = signal.signal(sig, lambda *_: engine.stopping.set())
    return previous


def _restore_signals(previous: dict[int, Any]) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)


def stop_engine(root: Path, timeout: float = 10.0) -> dict[str, Any] | None:
    """Ask the engine of ``root`` to stop and wait until its socket is gone; its info, or
    None when none answered."""
    from memcli.enginelink import ask

    answer = ask(root, "stop", {}, timeout=timeout)
    if not answer or not answer.get("ok"):
        return None
    sock_path, _ = engine_files(root)
    deadline = time.monotonic() + timeout
    while sock_path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    info: dict[str, Any] = answer["result"]
    return info
