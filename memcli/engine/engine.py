"""What a running engine keeps warm (the index open, the embedder loaded, one Memory per
worker thread) and the requests it answers (:class:`Engine`): the operations
:data:`memcli.operations.OPERATIONS` declares for it, each decoded into its request's type;
:mod:`memcli.engine.server` puts it on a socket."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import memcli.operations as operations
from memcli.enginelink import PROTOCOL, client_env, engine_files
from memcli.errors import MemcliError
from memcli.operations import (
    AddAsk,
    ContextAsk,
    FactAsk,
    FileContextAsk,
    ForgetAsk,
    GetAsk,
    NoArgs,
    RecallAsk,
    SearchAsk,
    SupersedeAsk,
)
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
        #: Each operation the table declares for the engine, and its handler: ``_<name>``.
        self._ops: dict[str, tuple[operations.Operation, Callable[[Any], Any]]] = {
            op.name: (op, getattr(self, f"_{op.name}"))
            for op in operations.exposed(operations.ENGINE)
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
        declared = self._ops.get(str(op))
        if declared is None:
            return {"ok": False, "mismatch": True, "why": f"unknown request {op!r}"}
        operation, work = declared
        try:
            asked = operations.decoded(operation, args)
        except TypeError as exc:  # not this version's request: the caller answers in process
            return {"ok": False, "mismatch": True, "why": f"{op}: {exc}"}
        if op != "status":  # a status reports the count: it leaves it as a ping would
            self.requests += 1
        pool = self._pool if operation.read_only else self._writes
        future = pool.submit(work, asked)
        try:
            return {"ok": True, "result": future.result()}
        except MemcliError as exc:
            return {
                "ok": False,
                "error": {
                    "message": exc.template,  # the fields marked, for the client to word
                    "hint": exc.hint_template,
                    "fields": list(exc.fields),
                    "code": int(exc.exit_code),
                },
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

    def _add(self, asked: AddAsk) -> dict[str, Any]:
        mem = self._memory()
        notices = self._notices(mem)
        result = mem.add(**asked._asdict())
        return {
            "notices": notices,
            "result": result.as_dict(),
            "warnings": list(result.warnings),
            "shown": {"entry": result.entry, "commit": result.commit},
        }

    def _get(self, asked: GetAsk) -> dict[str, Any]:
        mem = self._memory()
        notices = self._notices(mem)
        result = mem.get(asked.location, cwd=Path(asked.cwd) if asked.cwd else None)
        return {"notices": notices, "result": result.as_dict(), "lines": result.lines}

    def _files(self, asked: NoArgs) -> dict[str, Any]:
        mem = self._memory()
        notices = self._notices(mem)
        rows = mem.files()
        return {"notices": notices, "result": rows, "warnings": list(mem.warnings)}

    def _status(self, asked: NoArgs) -> dict[str, Any]:
        mem = self._memory()
        notices = self._notices(mem)
        info = mem.status(engine=self.info())  # what a status in process learns by asking
        return {"notices": notices, "result": info}

    def _recall(self, asked: RecallAsk) -> dict[str, Any]:
        """An agent's prompt hook: the recalled block's text ("" when nothing is) and the
        entries it quotes, which the hook records as given to its session once it has the
        answer (a hook that stopped waiting answers in process, and gives them itself)."""
        session = asked.session if isinstance(asked.session, str) else None
        mem = self._memory(lenient=True)
        ctx = mem.recall(str(asked.prompt), session=session, record=False)
        if ctx is None:
            return {"text": "", "given": []}
        return {"text": ctx.block.text, "given": ctx.block.quoted}

    def _briefing(self, asked: NoArgs) -> dict[str, Any]:
        """An agent's session-start hook: the briefing block's text."""
        return {"text": self._memory(lenient=True).briefing().block.text}

    def _file_context(self, asked: FileContextAsk) -> dict[str, Any]:
        """An agent's file hook: the facts linked to the files a tool call touched, and the
        entries quoted, which the hook records as given (as for :meth:`_recall`)."""
        session, cwd = asked.session, asked.cwd
        blocks = self._memory(lenient=True).touched_blocks(
            [str(p) for p in asked.paths],
            session=session if isinstance(session, str) else None,
            cwd=Path(cwd) if isinstance(cwd, str) else None,
            record=False,
        )
        text = "\n".join(b.text for b in blocks)
        return {"text": text, "given": [quoted for b in blocks for quoted in b.quoted]}

    def _search(self, asked: SearchAsk) -> dict[str, Any]:
        from memcli.search.options import SearchRequest

        mem = self._memory()
        notices = self._notices(mem)
        opts = mem.search_options(SearchRequest.from_payload(asked.request))
        if asked.fmt == "context":
            ctx = mem.context(asked.query, opts, asked.max_tokens)
            return {"notices": notices, **ctx.view()}
        return {"notices": notices, **mem.search(asked.query, opts).view()}

    # -- what the MCP tools ask of the engine that serves their workspace (lenient, as the
    # -- MCP server's own Memory is) ---------------------------------------------------------
    def _context(self, asked: ContextAsk) -> operations.ContextAnswer:
        return operations.context_of(self._memory(lenient=True), asked)

    def _supersede(self, asked: SupersedeAsk) -> dict[str, Any]:
        return {"result": self._memory(lenient=True).supersede(asked.fact, asked.text).as_dict()}

    def _forget(self, asked: ForgetAsk) -> dict[str, Any]:
        mem = self._memory(lenient=True)
        return {"result": mem.forget(asked.fact, reason=asked.reason).as_dict()}

    def _confirm(self, asked: FactAsk) -> dict[str, Any]:
        return {"result": self._memory(lenient=True).confirm(asked.fact).as_dict()}

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
            if embedder is not None:  # and what recall with vectors reads: the everyday
                import memcli.search.background as background  # requests it compares
                import memcli.search.related as related  # prompts with, the related words

                embedder.embed(list(background.requests()), quick=True)
                related.named("")

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
