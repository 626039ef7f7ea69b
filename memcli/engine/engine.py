"""What a running engine keeps warm (the index open, the embedder loaded, one Memory per
worker thread) and the requests it answers (:class:`Engine`); :mod:`memcli.engine.server`
puts it on a socket."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from memcli.enginelink import PROTOCOL, client_env, engine_files
from memcli.errors import MemcliError
from memcli.version import __version__

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
        self._local = threading.local()
        self._embedder_lock = threading.Lock()
        self._embedder: Any = None
        self._embedder_of: tuple[Any, ...] | None = None  # the embedding settings it was made of
        self._pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="memcli-engine")
        self._writes = ThreadPoolExecutor(1, thread_name_prefix="memcli-engine-write")
        self.stopping = threading.Event()
        self._learner: Any = None  # memcli.search.bounds.Learner, started by warm()
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
        """This worker's Memory, opened anew when a config file changed or the workspace was
        replaced (deleted and made again at the same path: another folder, another index
        file); ``lenient``: a bad setting is a warning (as an agent's hooks open theirs in
        process), not an error."""
        from memcli.memory import Memory

        stamp = _stamp(self.root)
        slot = "lenient" if lenient else "strict"
        held = getattr(self._local, slot, None)
        if held is None or held[1] != stamp:
            if held is not None:  # a config changed, or the workspace was made anew
                held[0].close()
            opened = Memory.open(self.root, embedder_factory=self._shared_embedder, lenient=lenient)
            held = (opened, stamp)
            setattr(self._local, slot, held)
        mem = held[0]
        mem.warnings.clear()
        mem.use_bounds(self._learner.bounds if self._learner is not None else None)
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

        for step in (load, self._start_learner):
            try:
                self._pool.submit(step).result()
            except Exception:  # reported by the searches that need it
                pass

    def _start_learner(self) -> None:
        """Learn the score bounds of the index's common terms in the background: a keyword
        search then scores only the chunks that can rank (memcli.search.pruning)."""
        from memcli.search.bounds import start_learner

        self._learner = start_learner(self._memory(lenient=True))

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
            "bounds": self._bounds_info(),
        }

    def _bounds_info(self) -> dict[str, Any]:
        """How many terms have a learnt score bound, whether the common ones all do, and how
        many keyword queries they pruned."""
        if self._learner is None:
            return {"terms": 0, "ready": False, "pruned": 0}
        known = self._learner.bounds
        return {"terms": len(known), "ready": known.ready.is_set(), "pruned": known.pruned}

    def close(self) -> None:
        if self._learner is not None:
            self._learner.close()
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._writes.shutdown(wait=True, cancel_futures=True)
        with self._embedder_lock:
            if self._embedder is not None:
                self._embedder.close()


def _stamp(root: Path) -> tuple[Any, ...]:
    """What a worker's Memory was opened for: the config files' times, and the identity
    (device, inode) of the workspace folder, its memory folder and its index file."""
    from memcli.config.layers import user_config_path, workspace_config_path

    def mtime(p: Path) -> float:
        try:
            return p.stat().st_mtime
        except OSError:
            return 0.0

    def identity(p: Path) -> tuple[int, int]:
        try:
            st = p.stat()
        except OSError:
            return (0, 0)
        return (st.st_dev, st.st_ino)

    return (
        mtime(workspace_config_path(root)),
        mtime(user_config_path()),
        identity(root),
        identity(root / "memory"),
        identity(root / ".memcli" / "index.db"),
    )
