"""What a running engine keeps warm (the index open, the embedder loaded, one Memory per
worker thread) and the requests it answers (:class:`Engine`); :mod:`memcli.engine.server`
puts it on a socket."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memcli.enginelink import PROTOCOL, client_env, engine_files
from memcli.errors import MemcliError
from memcli.version import __version__
from memcli.warm import WarmMemory

if TYPE_CHECKING:
    from memcli.memory import Memory

__all__ = ["Engine"]

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
        #: The workspace's Memory (one per worker), its embedder and its score bounds.
        self.warm_memory = WarmMemory(root)
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
    def _memory(self, lenient: bool = False) -> Memory:
        """This worker's Memory (:meth:`memcli.warm.WarmMemory.memory`: opened anew when a
        config file changed or the workspace was replaced); ``lenient``: a bad setting is a
        warning (as an agent's hooks open theirs in process), not an error."""
        mem = self.warm_memory.memory(lenient)
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

    def _notices(self, mem: Memory) -> list[str]:
        """The warning an untrusted memcli.toml gives in process, to print the same."""
        from memcli.config.layers import untrusted_warning

        warning = untrusted_warning(mem.settings)
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
        session = args.get("session")
        ctx = self._memory(lenient=True).recall(
            str(args["prompt"]), session=session if isinstance(session, str) else None
        )
        return {"text": ctx.block.text if ctx is not None else ""}

    def _briefing(self, args: dict[str, Any]) -> dict[str, Any]:
        """An agent's session-start hook: the briefing block's text."""
        return {"text": self._memory(lenient=True).briefing().block.text}

    def _search(self, args: dict[str, Any]) -> dict[str, Any]:
        from memcli.search.options import SearchRequest

        mem = self._memory()
        notices = self._notices(mem)
        opts = mem.search_options(SearchRequest.from_payload(args["request"]))
        if args.get("fmt") == "context":
            ctx = mem.context(args["query"], opts, args.get("max_tokens"))
            return {"notices": notices, **ctx.view()}
        return {"notices": notices, **mem.search(args["query"], opts).view()}

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

        for step in (load, self.warm_memory.start_learner):
            try:
                self._pool.submit(step).result()
            except Exception:  # noqa: S110 - reported by the searches that need it
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
            "embedder_loaded": self.warm_memory.embedder_loaded,
            "watching": self.watching,
            "watch_ready": self.watch_live.is_set(),
            "bounds": self.warm_memory.bounds_info(),
        }

    def close(self) -> None:
        self.warm_memory.stop_learner()  # a scan under way ends before the workers are waited for
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._writes.shutdown(wait=True, cancel_futures=True)
        self.warm_memory.close()
