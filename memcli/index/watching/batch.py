"""Indexing one batch of changed files for a watch, in a store opened for that batch only."""

from __future__ import annotations

from collections.abc import Callable

from memcli.config import Settings
from memcli.index.embedder import Embedder, EmbedderFactory, LazyEmbedder, configured_model
from memcli.index.indexer import Indexer, IndexReport
from memcli.index.indexfile import RepairedIndex
from memcli.index.store import Store
from memcli.index.watching.filtering import ChangeFilter
from memcli.locks import ProcessLock
from memcli.notes.workspace import Workspace


class BatchIndexer:
    """Re-index the paths of one batch; keeps ``filter`` told which folders hold indexed files.

    One embedder serves the whole watch (it holds the embedding cache's connection), made by
    ``embedder_factory`` (the service's: the index never chooses a provider); :meth:`close`
    releases it.
    """

    def __init__(
        self,
        ws: Workspace,
        settings: Settings,
        change_filter: ChangeFilter,
        embedder_factory: EmbedderFactory,
        after_sync: Callable[[Store], None] | None = None,
    ) -> None:
        self.ws = ws
        self.after_sync = after_sync  # run on the store after a sync that changed files
        self.settings = settings
        self.filter = change_filter
        self.embedder_factory = embedder_factory
        self.embeds = bool(configured_model(settings))
        self._embedder: LazyEmbedder | None = None  # one for the run (it holds the cache)

    def close(self) -> None:
        if self._embedder is not None:
            self._embedder.close()
            self._embedder = None

    def _embedder_for_run(self) -> Embedder | None:
        if self._embedder is None:
            self._embedder = LazyEmbedder(self.settings, self.embedder_factory)
        return self._embedder.get()

    def index(self, paths: list[str] | None, lock: ProcessLock | None = None) -> IndexReport:
        """One short sync of ``paths`` (None: everything); the caller holds the writer lock,
        ``lock``.

        Damage that opening the index does not notice, met by the sync itself, is repaired
        here as by any other command: the index is replaced and refilled from the Markdown
        (rather than failing the same way on every retry).
        """
        warnings: list[str] = []
        index = RepairedIndex(self.ws, self.settings, warnings)

        def sync(only: list[str] | None) -> IndexReport:
            store = index.open(refill=False)
            return self._sync_into(store, None if warnings else only, lock)  # rebuilt: all

        try:
            # the retry, a full sync, refills a replaced index
            report = index.run(lambda: sync(paths), refill=False, retry=lambda: sync(None))
        finally:
            index.close()
        report.warnings[:0] = warnings
        return report

    def _sync_into(
        self, store: Store, paths: list[str] | None, lock: ProcessLock | None = None
    ) -> IndexReport:
        # with the lock, a long back-fill lets other writers in while the provider answers
        indexer = Indexer(self.ws, store, self.settings, self._embedder_for_run(), lock)
        fresh = store.get_meta("last_indexed") is None
        if paths is not None and (fresh or indexer.needs_rebuild()):
            paths = None  # a new or rebuilt index needs everything, not just these ones
        if paths:
            _forget_stat(store, self.ws, paths)
        report = indexer.sync(paths, watched=True)
        if self.after_sync is not None and (paths is None or report.changed):
            with store.transaction():
                self.after_sync(store)
        if paths is None:
            self.filter.set_indexed(store.file_states())
        else:  # folders only ever get added here; a stale one costs one empty sync
            self.filter.add_indexed(report.changed)
        return report


def _forget_stat(store: Store, ws: Workspace, paths: list[str]) -> None:
    """Make the sync re-read files that changed without changing (mtime, size).

    File times have coarse (clock tick) resolution, so two same-size writes in
    quick succession can leave (mtime_ns, size) as it was when the index read
    the first one. An event says the file changed: compare its content hash.
    """
    known = store.file_states()
    stale = []
    for rel in paths:
        k = known.get(rel)
        if k is None:
            continue
        try:
            st = (ws.root / rel).stat()
        except OSError:
            continue
        if (st.st_mtime_ns, st.st_size) == (k.mtime_ns, k.size):
            stale.append(k)
    if stale:
        with store.transaction():
            for k in stale:
                store.touch_file(k.id, -1, k.size)
