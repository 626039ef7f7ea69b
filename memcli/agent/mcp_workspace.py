"""The MCP tools' access to the workspace (:class:`Engine`): one warm process per workspace.
When the workspace's engine (``memcli serve``) answers, each operation the table
(:data:`memcli.operations.OPERATIONS`) declares for it goes there; otherwise it runs in
process, on a warm Memory (:class:`memcli.warm.WarmMemory`, opened on first use, reopened
when a config file changes, as the engine's is) used only on one thread. A flush (an LLM round
trip) runs on a thread of its own with a Memory opened for it, so that calls are not held up
behind it. A library error becomes a tool error of one line naming the tools' parameters."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from mcp.server.mcpserver.exceptions import ToolError

import memcli.operations as operations
from memcli.agent.mcp_search import parameter_name
from memcli.agent.mcp_text import one_line
from memcli.errors import MemcliError

if TYPE_CHECKING:
    from memcli.memory import Memory

__all__ = ["Engine"]

T = TypeVar("T")
log = logging.getLogger("memcli.mcp")


def _get(mem: Memory, asked: operations.GetAsk) -> dict[str, Any]:
    return {"result": mem.get(asked.location, cwd=Path(asked.cwd) if asked.cwd else None).as_dict()}


#: Each operation the MCP tools ask, answered in process: the result the engine sends.
IN_PROCESS: dict[str, Callable[[Memory, Any], Any]] = {
    "context": operations.context_of,
    "get": _get,
    "status": lambda mem, asked: {"result": mem.status()},
    "add": lambda mem, asked: {"result": mem.add(**asked._asdict()).as_dict()},
    "supersede": lambda mem, asked: {"result": mem.supersede(asked.fact, asked.text).as_dict()},
    "forget": lambda mem, asked: {"result": mem.forget(asked.fact, reason=asked.reason).as_dict()},
    "confirm": lambda mem, asked: {"result": mem.confirm(asked.fact).as_dict()},
}


class Engine:
    """The MCP tools' access to the workspace: its engine when one answers, else a warm
    Memory of this process."""

    def __init__(self, workspace: str | None) -> None:
        from memcli.warm import WarmMemory

        self.workspace = workspace
        self.warm = WarmMemory(workspace)  # opens nothing until a call runs in process
        self._root: Path | None = None
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="memcli-engine")
        self._flush_pool = ThreadPoolExecutor(1, thread_name_prefix="memcli-flush")

    @property
    def learner(self) -> Any:
        """Learns score bounds in the background, so that keyword searches score only the
        chunks that can rank (memcli.search.bounds), as `memcli serve` does."""
        return self.warm.learner

    def _memory(self) -> Memory:
        self.warm.start_learner()  # on first use
        return self.warm.memory(lenient=True)

    def _served_root(self) -> Path | None:
        """The workspace's root, when it has one (its engine is asked there)."""
        if self._root is None:
            from memcli.notes.workspace import find_workspace

            try:
                self._root = find_workspace(self.workspace).root
            except MemcliError:
                return None  # the call in process reports it
        return self._root

    async def ask(self, name: str, asked: Any) -> dict[str, Any]:
        """The answer to operation ``name`` (its request ``asked``): the workspace's engine's
        when one answers, else this process's."""
        op = operations.by_name(name)

        def job() -> dict[str, Any]:
            root = self._served_root()
            if root is not None and operations.ENGINE in op.adapters:
                from memcli.enginelink import engine_result, framed

                got = engine_result(root, name, operations.payload(asked))
                if got is not None and (name != "context" or framed(got.get("text"))):
                    return got
            answer: dict[str, Any] = IN_PROCESS[name](self._memory(), asked)
            return answer

        return await _run(self._pool, job)

    async def call(self, fn: Callable[[Memory], T]) -> T:
        """``fn(memory)`` on this process's warm Memory, on its thread."""
        return await _run(self._pool, lambda: fn(self._memory()))

    async def flush(self, fn: Callable[[Memory], T]) -> T:
        """``fn(memory)`` on the flush thread, with a Memory opened for this call."""

        def job() -> T:
            from memcli.memory import Memory

            with Memory.open(self.workspace, lenient=True) as mem:
                return fn(mem)

        return await _run(self._flush_pool, job)

    def close(self) -> None:
        for pool in (self._pool, self._flush_pool):
            pool.shutdown(wait=False, cancel_futures=True)
        self.warm.close()


async def _run(pool: ThreadPoolExecutor, job: Callable[[], T]) -> T:
    try:
        return await asyncio.wrap_future(pool.submit(job))
    except MemcliError as exc:
        message, hint = exc.worded(parameter_name)  # the fields as the tools' parameters
        raise ToolError(one_line(message + (f" ({hint})" if hint else ""))) from None
    except ToolError:
        raise
    except Exception as exc:
        log.exception("tool failed")
        raise ToolError(one_line(f"{type(exc).__name__}: {exc}")) from None
