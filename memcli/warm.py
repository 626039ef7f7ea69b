"""A workspace's :class:`~memcli.memory.Memory` kept warm between requests, for the processes
that live long: ``memcli serve``'s engine (:mod:`memcli.engine.engine`) and ``memcli mcp``'s
server (:mod:`memcli.agent.mcp_server`), which are adapters over it.

:class:`WarmMemory` owns what both keep warm and the one rule for letting it go:

- the Memory, opened on first use, one per thread (a Memory holds a SQLite connection, used
  only on the thread that opened it), strict or lenient (a bad setting an error, or a
  warning as the agents' hooks take it);
- the reload rule: a thread's Memory is opened anew when a config file changed (the
  workspace's memcli.toml, or the user config.toml, which also holds the trust records) or
  the workspace was replaced (deleted and made again at the same path), so that a
  ``memcli config set`` or a ``memcli trust`` is honoured by the next request, as a command
  run in process would honour it;
- one embedder shared by every thread (a local model is loaded once), made anew when the
  ``embedding.*`` settings change;
- the learner of score bounds (:mod:`memcli.search.bounds`), started once;
- closing.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memcli.memory import Memory

__all__ = ["WarmMemory"]


class WarmMemory:
    """The workspace at (or above) ``workspace`` (None: ``$MEMCLI_WORKSPACE`` or the current
    folder's), its Memory opened on each thread's first use and kept while no config file
    changes."""

    def __init__(self, workspace: str | Path | None) -> None:
        self.workspace = workspace
        self._root: Path | None = None  # found on first use
        self._local = threading.local()
        self._embedder_lock = threading.Lock()
        self._embedder: Any = None
        self._embedder_of: tuple[Any, ...] | None = None  # the embedding settings it was made of
        self._learner_lock = threading.Lock()
        #: memcli.search.bounds.Learner, started by :meth:`start_learner`
        self.learner: Any = None

    # -- the Memory ---------------------------------------------------------------------------
    def memory(self, lenient: bool = False) -> Memory:
        """This thread's Memory, opened anew when a config file changed or the workspace was
        replaced; ``lenient``: a bad setting is a warning, not an error. Its warnings are
        cleared and it prunes with the learnt bounds, if any."""
        from memcli.memory import Memory  # on first use: the MCP server starts without it

        root = self._workspace_root()
        stamp = _stamp(root)
        slot = "lenient" if lenient else "strict"
        held = getattr(self._local, slot, None)
        if held is None or held[1] != stamp:
            if held is not None:  # a config changed, or the workspace was made anew
                held[0].close()
            opened = Memory.open(root, embedder_factory=self.shared_embedder, lenient=lenient)
            held = (opened, stamp)
            setattr(self._local, slot, held)
        mem: Memory = held[0]
        mem.warnings.clear()
        mem.use_bounds(self.learner.bounds if self.learner is not None else None)
        return mem

    def _workspace_root(self) -> Path:
        if self._root is None:
            from memcli.notes.workspace import find_workspace

            self._root = find_workspace(self.workspace).root
        return self._root

    # -- the embedder ---------------------------------------------------------------------------
    def shared_embedder(self, settings: Any) -> Any:
        """One embedder for every thread, made anew when the ``embedding.*`` settings change,
        as a command in process would take the new ones."""
        from memcli.config.registry import REGISTRY

        made_of = tuple(settings.get(key) for key in REGISTRY if key.startswith("embedding."))
        with self._embedder_lock:
            if self._embedder_of != made_of:
                from memcli.service.core import configured_embedder

                self._embedder = configured_embedder(settings)
                self._embedder_of = made_of
            return self._embedder

    @property
    def embedder_loaded(self) -> bool:
        return self._embedder is not None

    # -- the score bounds -----------------------------------------------------------------------
    def start_learner(self) -> None:
        """Learn the score bounds of the index's common terms in the background (once): a
        keyword search then scores only the chunks that can rank (memcli.search.pruning)."""
        with self._learner_lock:
            if self.learner is None:
                from memcli.search.bounds import start_learner

                self.learner = start_learner(self.memory(lenient=True))

    def bounds_info(self) -> dict[str, Any]:
        """How many terms have a learnt score bound, whether the common ones all do, and how
        many keyword queries they pruned."""
        if self.learner is None:
            return {"terms": 0, "ready": False, "pruned": 0}
        known = self.learner.bounds
        return {"terms": len(known), "ready": known.ready.is_set(), "pruned": known.pruned}

    def stop_learner(self) -> None:
        """Stop learning (a scan under way is interrupted); the bounds learnt stay in use."""
        if self.learner is not None:
            self.learner.close()

    # -- the end --------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop the learner and release the shared embedder; the threads' Memories end with
        their threads."""
        self.stop_learner()
        with self._embedder_lock:
            if self._embedder is not None:
                self._embedder.close()


def _stamp(root: Path) -> tuple[Any, ...]:
    """What a thread's Memory was opened for: the config files' times and sizes, and the
    identity (device, inode) of the workspace folder, its memory folder and its index file."""
    from memcli.config.layers import user_config_path, workspace_config_path

    def written(p: Path) -> tuple[int, int]:
        try:
            st = p.stat()
        except OSError:
            return (0, -1)
        return (st.st_mtime_ns, st.st_size)

    def identity(p: Path) -> tuple[int, int]:
        try:
            st = p.stat()
        except OSError:
            return (0, 0)
        return (st.st_dev, st.st_ino)

    return (
        written(workspace_config_path(root)),
        written(user_config_path()),
        identity(root),
        identity(root / "memory"),
        identity(root / ".memcli" / "index.db"),
    )
