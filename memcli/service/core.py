"""The service's core: a workspace, its settings, its index (opened lazily) and its embedder.

Every operation a caller can ask for is a function of a module of this package over a
:class:`MemoryCore`, bound as a method of :class:`memcli.memory.Memory`; the core holds what
they share: opening and repairing the index, the writer lock's timeout and the warnings
gathered on the way.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TypeVar

from memcli.config import Settings, load_settings
from memcli.errors import ConfigError
from memcli.index.embedder import Embedder, EmbedderFactory, LazyEmbedder
from memcli.index.indexer import Indexer
from memcli.index.indexfile import RepairedIndex
from memcli.index.store import Store
from memcli.locks import ProcessLock
from memcli.notes.workspace import Workspace, find_workspace

if TYPE_CHECKING:
    from memcli.search.bounds import TermBounds

T = TypeVar("T")

#: A search embeds chunks still without vectors only when at most this many wait.
SEARCH_EMBED_LIMIT = 256


def configured_embedder(settings: Settings) -> Embedder | None:
    """The embedder ``embedding.model`` names (:mod:`memcli.providers.embeddings`), or None."""
    # imported here: redaction and the provider modules are needed only with a model set
    from memcli.providers.embeddings import embedder_from_settings

    return embedder_from_settings(settings)


class MemoryCore:
    """A workspace with its settings and (lazily) its index."""

    def __init__(
        self,
        ws: Workspace,
        settings: Settings,
        embedder_factory: EmbedderFactory | None = None,
    ) -> None:
        self.ws = ws
        self.settings = settings
        self.warnings: list[str] = []
        self._index = RepairedIndex(ws, settings, self.warnings)
        self._writing = False  # this object holds the writer lock (Memory.index)
        self._embedder = LazyEmbedder(settings, embedder_factory or configured_embedder)
        #: ``index.freshness`` for the checks before a search, when not the setting's: an
        #: engine whose watcher is live uses the quick check ("recent").
        self.freshness: str | None = None

    @classmethod
    def open(
        cls,
        workspace: str | Path | None = None,
        overrides: dict[str, Any] | None = None,
        embedder_factory: EmbedderFactory | None = None,
        *,
        lenient: bool = False,
        settings: Settings | None = None,
    ) -> Self:
        """The workspace at (or above) ``workspace``; ``embedder_factory`` makes the embedder
        (default: :func:`configured_embedder`, from the settings). A bad setting is an error,
        or with ``lenient`` (operations that do not depend on it) a warning, the value below
        it staying in effect. ``settings``: the workspace's, loaded already by the caller
        (``overrides`` and ``lenient`` then do not apply): not read a second time."""
        ws = find_workspace(workspace)
        if settings is not None:
            return cls(ws, settings, embedder_factory)
        problems: list[ConfigError] | None = [] if lenient else None
        mem = cls(ws, load_settings(ws.root, overrides, problems=problems), embedder_factory)
        mem.warnings.extend(f"{p.message} (ignored)" for p in problems or ())
        return mem

    @property
    def store(self) -> Store:
        # a damaged index is rebuilt empty, and refilled unless this object is the writer
        return self._index.open(refill=not self._writing)

    def use_bounds(self, bounds: TermBounds | None) -> None:
        """Prune keyword searches with ``bounds`` (memcli.search.bounds.TermBounds, learnt
        by the engine in the background); None: score every matching chunk."""
        self._index.bounds = bounds

    @property
    def embedder(self) -> Embedder | None:
        """The configured embedder (made on first use), or None: keyword search only."""
        return self._embedder.get()

    def close(self) -> None:
        self._index.close()
        self._embedder.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def indexer(self, writer: ProcessLock | None = None) -> Indexer:
        return Indexer(
            self.ws, self.store, self.settings, self.embedder, writer, freshness=self.freshness
        )

    # -- damaged index ---------------------------------------------------
    def _lock_timeout(self, explicit: float | None = None) -> float:
        return float(explicit if explicit is not None else self.settings.get("index.lock_timeout"))

    def _with_repair(self, fn: Callable[[], T], *, retry: Callable[[], T] | None = None) -> T:
        """Run ``fn``; if the index file turns out damaged (found by a query, not on open),
        replace it, refill it from the Markdown (unless this object is the writer, whose
        ``retry`` is the sync that refills it) and run ``retry`` (or ``fn``) once more."""
        return self._index.run(fn, refill=not self._writing, retry=retry)
