"""``memcli serve``: one warm engine per workspace, answering over a Unix socket.

It keeps the index open and the embedder loaded (a local model loads once, not on every
call), and answers requests (search, add, get, files, status, and an agent's hooks: recall
and briefing) from several clients at once:
each runs on one of a few worker threads, each with its own :class:`~memcli.memory.Memory`
(its own SQLite connection), all sharing one embedder. A watcher runs in the engine too
(unless turned off): while it is established, a search runs only the quick freshness check
(folders' times and the files changed last) and the watcher re-indexes the rest as it
changes; without it, a search checks as in process (``index.freshness``). The engine answers
only clients of its own memcli version and with the same ``MEMCLI_*`` settings in their
environment (and the same home, config and cache folders and time zone); others answer in
process. It stops on ``memcli serve --stop``, on SIGINT/SIGTERM, or after
``engine.idle_timeout`` minutes without a request; one runs per workspace (a lock beside the
socket), and a stale socket left by a killed engine is replaced.
"""

from __future__ import annotations

import json
import os
import signal
import socketserver
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from memcli import __version__
from memcli.engine.client import MAX_REQUEST, PROTOCOL, client_env
from memcli.engine.paths import engine_files
from memcli.errors import AlreadyRunning, MemcliError
from memcli.locks import ProcessLock

__all__ = ["Engine", "serve"]

#: Worker threads for reads (each with its own index connection); writes (add) run on one
#: more thread of their own, so a search never waits in line behind adds waiting for the
#: writer lock.
WORKERS = 4


class Engine:
    """The requests an engine answers, and what it keeps warm between them."""

    def __init__(self, root: Path, idle_timeout: float) -> None:
        self.root = root
        self.idle_timeout = idle_timeout
        self.started = time.time()
        self.last = time.monotonic()
        self.requests = 0
        self.env = client_env()
        self._local = threading.local()
        self._embedder_lock = threading.Lock()
        self._embedder: Any = None
        self._embedder_of: tuple[Any, ...] | None = None  # the embedding settings it was made of
        self._pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="memcli-engine")
        self._writes = ThreadPoolExecutor(1, thread_name_prefix="memcli-engine-write")
        self.stopping = threading.Event()
        self.watching = False
        #: Set while the watcher is established and its last sync succeeded.
        self.watch_live = threading.Event()
        self._ops = {
            "search": self._search,
            "add": self._add,
            "get": self._get,
            "files": self._files,
            "status": self._status,
            "recall": self._recall,
            "briefing": self._briefing,
        }

    # -- memories --------------------------------------------------------------------------
    def _shared_embedder(self, settings: Any) -> Any:
        """One embedder for every worker (a local model is loaded once), made anew when the
        ``embedding.*`` settings change, as a command in process would take the new ones."""
        from memcli.config.registry import REGISTRY

        made_of = tuple(settings.get(key) for key in REGISTRY if key.startswith("embedding."))
        with self._embedder_lock:
            if self._embedder_of != made_of:
                from memcli.service.core import configured_embedder

                self._embedder = configured_embedder(settings)
                self._embedder_of = made_of
            return self._embedder

    def _memory(self, lenient: bool = False) -> Any:
        """This worker's Memory, opened anew when a config file changed; ``lenient``: a bad
        setting is a warning (as an agent's hooks open theirs in process), not an error."""
        from memcli.memory import Memory

        stamp = _config_stamp(self.root)
        slot = "lenient" if lenient else "strict"
        held = getattr(self._local, slot, None)
        if held is None or held[1] != stamp:
            opened = Memory.open(self.root, embedder_factory=self._shared_embedder, lenient=lenient)
            held = (opened, stamp)
            setattr(self._local, slot, held)
        mem = held[0]
        mem.warnings.clear()
        # a live watcher re-indexes what changes: the quick check is enough before a search
        mem.freshness = "recent" if self.watch_live.is_set() else None
        return mem

    # -- requests --------------------------------------------------------------------------
    def answer(self, request: Any) -> dict[str, Any]:
        """The answer to one decoded request."""
        self.last = time.monotonic()
        if not isinstance(request, dict) or request.get("v") != PROTOCOL:
            return {"ok": False, "mismatch": True, "why": "protocol"}
        if request.get("version") != __version__:
            return {"ok": False, "mismatch": True, "why": f"memcli {__version__} here"}
        op, args = request.get("op"), request.get("args") or {}
        if op == "ping":
            return {"ok": True, "result": self.info()}
        if op == "stop":
            self.stopping.set()
            return {"ok": True, "result": self.info()}
        if request.get("env", {}) != self.env:
            return {"ok": False, "mismatch": True, "why": "other MEMCLI_* settings"}
        work = self._ops.get(str(op))
        if work is None:
            return {"ok": False, "mismatch": True, "why": f"unknown request {op!r}"}
        if op != "status":  # a status reports the count: it leaves it as a ping would
            self.requests += 1
        future = (self._writes if op == "add" else self._pool).submit(work, args)
        try:
            return {"ok": True, "result": future.result()}
        except MemcliError as exc:
            return {
                "ok": False,
                "error": {"message": exc.message, "hint": exc.hint, "code": int(exc.exit_code)},
            }
        except Exception as exc:  # reported to the client, which answers in process
            return {"ok": False, "mismatch": True, "why": f"{type(exc).__name__}: {exc}"}
        finally:
            self.last = time.monotonic()

    def _notices(self, mem: Any) -> list[str]:
        """The warning an untrusted memcli.toml gives in process, to print the same."""
        from memcli.config.layers import untrusted_warning

        warning = untrusted_warning(mem.settings) if mem.settings.ignored else None
        return [warning] if warning else []

    def _add(self, args: dict[str, Any]) -> dict[str, Any]:
        mem = self._memory()
        notices = self._notices(mem)
        result = mem.add(**{**args, "tags": tuple(args.get("tags") or ())})
        return {
            "notices": notices,
            "result": result.as_dict(),
            "warnings": list(result.warnings),
            "shown": {"entry": result.entry, "commit": result.commit},
        }

    def _get(self, args: dict[str, Any]) -> dict[str, Any]:
        mem = self._memory()
        notices = self._notices(mem)
        result = mem.get(args["location"], cwd=Path(args["cwd"]))
        return {"notices": notices, "result": result.as_dict(), "lines": result.lines}

    def _files(self, args: dict[str, Any]) -> dict[str, Any]:
        mem = self._memory()
        notices = self._notices(mem)
        rows = mem.files()
        return {"notices": notices, "result": rows, "warnings": list(mem.warnings)}

    def _status(self, args: dict[str, Any]) -> dict[str, Any]:
        mem = self._memory()
        notices = self._notices(mem)
        info = mem.status(engine=self.info())  # what a status in process learns by asking
        return {"notices": notices, "result": info}

    def _recall(self, args: dict[str, Any]) -> dict[str, Any]:
        """An agent's prompt hook: the recalled block's text, "" when nothing is."""
        ctx = self._memory(lenient=True).recall(str(args["prompt"]))
        return {"text": ctx.block.text if ctx is not None else ""}

    def _briefing(self, args: dict[str, Any]) -> dict[str, Any]:
        """An agent's session-start hook: the briefing block's text."""
        return {"text": self._memory(lenient=True).briefing().block.text}

    def _search(self, args: dict[str, Any]) -> dict[str, Any]:
        from memcli.search.options import SearchRequest

        mem = self._memory()
        notices = self._notices(mem)
        opts = mem.search_options(SearchRequest(**args["request"]))
        if args.get("fmt") == "context":
            ctx = mem.context(args["query"], opts, args.get("max_tokens"))
            return {
                "notices": notices,
                "context": {
                    "text": ctx.block.text,
                    "warnings": list(ctx.result.warnings),
                    "overflow": ctx.overflow,
                    "found": bool(ctx.result.hits),
                },
            }
        result = mem.search(args["query"], opts)
        return {
            "notices": notices,
            "result": result.as_dict(),
            "scores": [h.score for h in result.hits],  # unrounded, for the text form
            # the query's stems per result: what the terminal table highlights
            "stems": [sorted(h.terms.stems) if h.terms is not None else None for h in result.hits],
        }

    def warm(self) -> None:
        """Open a worker's index and load the embedder now, so that the first search is fast
        (a local model takes most of a second to load). A failure here is left for the
        searches to report. The index stays open while the engine runs: the watcher's own
        connection, opened for each batch, is then never the last to close, which would take
        a lock that other processes wait on (and wait forever if this one is stopped then)."""

        def load() -> None:
            mem = self._memory()
            mem.store.counts()
            embedder = mem.embedder
            if embedder is not None:
                embedder.embed(["warm up"], quick=True)

        try:
            self._pool.submit(load).result()
        except Exception:  # reported by the searches that need it
            pass

    def info(self) -> dict[str, Any]:
        sock, _ = engine_files(self.root)
        return {
            "pid": os.getpid(),
            "workspace": str(self.root),
            "socket": str(sock),
            "version": __version__,
            "started": self.started,
            "requests": self.requests,
            "idle_timeout_s": self.idle_timeout,
            "embedder_loaded": self._embedder is not None,
            "watching": self.watching,
            "watch_ready": self.watch_live.is_set(),
        }

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._writes.shutdown(wait=True, cancel_futures=True)
        with self._embedder_lock:
            if self._embedder is not None:
                self._embedder.close()


def _config_stamp(root: Path) -> tuple[float, float]:
    from memcli.config.layers import user_config_path, workspace_config_path

    def mtime(p: Path) -> float:
        try:
            return p.stat().st_mtime
        except OSError:
            return 0.0

    return mtime(workspace_config_path(root)), mtime(user_config_path())


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
    sock_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
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


def _start_watcher(
    engine: Engine, stop: threading.Event, on_event: Any, debounce_ms: int | None
) -> threading.Thread:
    """``memcli watch`` on a thread of the engine, until ``stop``; its events go to
    ``on_event``, or (None) its errors and warnings are logged. While it is established and
    its last sync succeeded, searches trust it and run the quick freshness check."""
    from memcli.memory import Memory
    from memcli.service.options import WatchOptions

    log = engine.root / ".memcli" / "engine.log"

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
                with open(log, "a", encoding="utf-8") as f:
                    f.write(json.dumps(event) + "\n")
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
    from memcli.engine.client import ask

    answer = ask(root, "stop", {}, timeout=timeout)
    if not answer or not answer.get("ok"):
        return None
    sock_path, _ = engine_files(root)
    deadline = time.monotonic() + timeout
    while sock_path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    info: dict[str, Any] = answer["result"]
    return info
