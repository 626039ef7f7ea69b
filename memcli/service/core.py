"""The service's core: a workspace, its settings, its index (opened lazily) and its embedder.

Every operation a caller can ask for is a method of :class:`memcli.memory.Memory`, built from
the mixins in this package; this one holds what they share: opening and repairing the index,
the writer lock's timeout and the warnings gathered on the way.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Self, TypeVar

from memcli.config import Settings, load_settings
from memcli.errors import ConfigError
from memcli.index import db
from memcli.index.embedder import Embedder, EmbedderFactory, LazyEmbedder
from memcli.index.indexer import (
    Indexer,
    is_corruption,
    open_store,
    replace_index,
    writer_lock,
)
from memcli.index.store import Store
from memcli.locks import ProcessLock
from memcli.notes.workspace import Workspace, find_workspace

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
        self._store: Store | None = None
        self._writing = False  # this object holds the writer lock (Memory.index)
        self._embedder = LazyEmbedder(settings, embedder_factory or configured_embedder)

    @classmethod
    def open(
        cls,
        workspace: str | Path | None = None,
        overrides: dict[str, Any] | None = None,
        embedder_factory: EmbedderFactory | None = None,
        *,
        lenient: bool = False,
    ) -> Self:
        """The workspace at (or above) ``workspace``; ``embedder_factory`` makes the embedder
        (default: :func:`configured_embedder`, from the settings). A bad setting is an error,
        or with ``lenient`` (operations that do not depend on it) a warning, the value below
        it staying in effect."""
        ws = find_workspace(workspace)
        problems: list[ConfigError] | None = [] if lenient else None
        mem = cls(ws, load_settings(ws.root, overrides, problems=problems), embedder_factory)
        mem.warnings.extend(f"{p.message} (ignored)" for p in problems or ())
        return mem

    @property
    def store(self) -> Store:
        if self._store is None:
            seen = len(self.warnings)
            self._store = open_store(self.ws, self.warnings)
            if len(self.warnings) > seen and not self._writing:
                self._refill()  # it was damaged and rebuilt empty: fill it before use
        return self._store

    @property
    def embedder(self) -> Embedder | None:
        """The configured embedder (made on first use), or None: keyword search only."""
        return self._embedder.get()

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
        self._embedder.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def indexer(self, writer: ProcessLock | None = None) -> Indexer:
        return Indexer(self.ws, self.store, self.settings, self.embedder, writer)

    # -- damaged index ---------------------------------------------------
    def _lock_timeout(self, explicit: float | None = None) -> float:
        return float(explicit if explicit is not None else self.settings.get("index.lock_timeout"))

    def _with_repair(self, fn: Callable[[], T], *, retry: Callable[[], T] | None = None) -> T:
        """Run ``fn``; if the index file turns out damaged (found by a query, not on open),
        replace it, refill it from the Markdown and run ``retry`` (or ``fn``) once more."""
        try:
            return fn()
        except db.database_errors() as exc:
            if not is_corruption(exc):
                raise
            identity = self._store.identity if self._store is not None else None
            if self._store is not None:
                self._store.close()
                self._store = None
            reason = f"index {self.ws.index_path} is damaged ({exc})"
            if self._writing:  # the caller's retry is the sync that refills it
                self._store = replace_index(self.ws, identity, reason, self.warnings)
            else:
                with writer_lock(self.ws).acquire(self._lock_timeout()):
                    self._store = replace_index(self.ws, identity, reason, self.warnings)
                    self._refill(locked=True)
        return (retry or fn)()

    def _refill(self, *, locked: bool = False) -> None:
        """Index every file into a rebuilt (empty) index, under the writer lock."""
        if not locked:
            with writer_lock(self.ws).acquire(self._lock_timeout()):
                return self._refill(locked=True)
        assert self._store is not None
        report = Indexer(self.ws, self._store, self.settings).sync(embed=False)
        self.warnings.extend(report.warnings)
        return None
