"""The watch loop: collect filtered events into a batch, sync it once the files are quiet,
retry a failed batch with back-off, and back-fill vectors a provider outage left missing."""

from __future__ import annotations

import contextlib
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memcli.config import Settings
from memcli.index.embedder import EmbedderFactory
from memcli.index.indexer import IndexReport
from memcli.index.indexfile import writer_lock
from memcli.index.store import Store
from memcli.index.watching.batch import BatchIndexer
from memcli.index.watching.events import (
    Emit,
    Event,
    WatchSummary,
    error_event,
    ready_event,
    sync_event,
    warning_event,
)
from memcli.index.watching.filtering import ChangeFilter, watch_roots
from memcli.index.watching.watch_locks import wait_for_writer
from memcli.notes.workspace import Workspace

STEP_MS = 100  # watchfiles checks for new events (and for a stop request) this often
MAX_TICK_MS = 1000  # the loop wakes at least this often while idle (retries)
MAX_DELAY_FACTOR = 5  # a steady stream of changes is still synced every 5 x debounce...
MIN_MAX_DELAY_S = 2.0  # ...or every 2 s, whichever is longer
RETRY_FIRST_S = 1.0  # a failed batch is retried after 1 s, 2 s, 4 s ... up to 60 s
RETRY_MAX_S = 60.0


@dataclass
class _Batch:
    paths: set[str] = field(default_factory=set)
    first: float = 0.0
    last: float = 0.0


class Watcher:
    """Watch one workspace and keep its index in sync until ``stop_event`` is set.

    ``debounce_ms`` (None: the ``watch.debounce_ms`` setting) is how long files must be quiet
    before a batch is synced.
    """

    def __init__(
        self,
        ws: Workspace,
        settings: Settings,
        emit: Emit,
        stop_event: threading.Event | None = None,
        *,
        debounce_ms: int | None = None,
        embedder_factory: EmbedderFactory,
        after_sync: Callable[[Store], None] | None = None,
    ) -> None:
        self.ws = ws
        self.settings = settings
        self.emit = emit
        self.stop = stop_event or threading.Event()
        self.include: list[str] = settings.get("index.include")
        if debounce_ms is None:
            debounce_ms = int(settings.get("watch.debounce_ms"))
        self.debounce_ms = max(0, debounce_ms)
        self.debounce_s = self.debounce_ms / 1000
        self.max_delay_s = max(MIN_MAX_DELAY_S, MAX_DELAY_FACTOR * self.debounce_s)
        self.filter = ChangeFilter(ws, self.include)
        self.batches = BatchIndexer(ws, settings, self.filter, embedder_factory, after_sync)
        self.syncs = 0
        self.pending = _Batch()
        self.full_next = False  # after a failure: re-sync everything
        self.retry = _Backoff()  # a failed batch
        self.backfill = _Backoff()  # chunks left without vectors (provider down)
        self._last_warnings: list[str] = []
        self.roots: dict[str, Path] = {}  # watched folder (workspace-relative) -> path
        self.identities: dict[str, tuple[int, int] | None] = {}  # their (device, inode)

    def close(self) -> None:
        self.batches.close()

    # -- the loop ----------------------------------------------------------
    def run(self) -> WatchSummary:
        """Watch until stopped; KeyboardInterrupt propagates (a forced stop).

        A watched folder replaced by another of the same name (``memory/`` moved away and
        made again) is watched anew: the watch restarts on the new folder, with a full sync.
        """
        initial = True
        while self._watch(initial=initial) and not self.stop.is_set():
            initial = False
        return WatchSummary(self.syncs)

    def _watch(self, *, initial: bool) -> bool:
        """One watch of the current folders; True when one was replaced (watch again)."""
        from watchfiles import watch  # its Rust extension loads only when a watch starts

        roots, warnings = watch_roots(self.ws, self.include)
        paths = [str(self.ws.root / r) if r else str(self.ws.root) for r in roots]
        self.roots = dict(zip(roots, map(Path, paths), strict=True))
        self.identities = {rel: _identity(path) for rel, path in self.roots.items()}
        tick = min(max(self.debounce_ms, STEP_MS), MAX_TICK_MS)
        # Filtering happens here rather than in watchfiles so that every batch of
        # raw events returns control to this loop (events we drop included).
        changes_iter = watch(
            *paths,
            watch_filter=None,
            debounce=max(self.debounce_ms, STEP_MS),
            step=STEP_MS,
            stop_event=self.stop,
            rust_timeout=tick,
            yield_on_timeout=True,
            raise_interrupt=True,
        )
        ready = False
        with contextlib.closing(changes_iter):
            for raw in changes_iter:
                # The first yield means the watcher is established: anything that
                # changes from now on is seen, so a full sync now misses nothing.
                if not ready:
                    ready = True
                    self._sync(None, initial=initial)
                    self.pending = _Batch()
                    if initial:
                        self.emit(ready_event(str(self.ws.root), roots, self.debounce_ms, warnings))
                    continue
                self._collect(raw)
                if self.stop.is_set():
                    break
                if self._replaced():
                    return True
                if self._due():
                    self._flush()
                elif not self.pending.paths:
                    self._check_roots()  # idle: a folder moved away sent no event to sync
                if self.stop.is_set():
                    break
        return False

    def _collect(self, raw: set[tuple[Any, str]]) -> None:
        if not raw:
            return
        self.filter.refresh()
        keep = self.filter
        rels = {keep.rel(path) or "" for change, path in raw if keep(change, path)}
        rels.discard("")
        if not rels:
            return
        now = time.monotonic()
        if not self.pending.paths:
            self.pending.first = now
        self.pending.last = now
        self.pending.paths |= rels

    def _due(self) -> bool:
        now = time.monotonic()
        if self.retry.due(now):
            return True
        batch = self.pending
        if self.retry.waiting:  # the retry re-syncs everything, these paths included
            return False
        if not batch.paths:
            return self.backfill.due(now)
        quiet = now - batch.last >= self.debounce_s - 0.005
        return quiet or now - batch.first >= self.max_delay_s

    def _flush(self) -> None:
        paths = sorted(self.pending.paths)
        self.pending = _Batch()
        # paths == [] (nothing changed, vectors missing): only the back-fill runs
        self._sync(None if self.full_next else paths, retry_paths=paths)
        self._check_roots()

    # -- one batch ---------------------------------------------------------
    def _sync(
        self,
        paths: list[str] | None,
        *,
        initial: bool = False,
        retry_paths: list[str] | None = None,
    ) -> None:
        """Re-index ``paths`` (None = everything); report; schedule a retry on failure."""
        lock = writer_lock(self.ws)
        failure: Event | None = None
        try:
            if not wait_for_writer(lock, self.stop, self.emit):
                return  # stopping: the batch is abandoned; the next start's full sync catches up
            report = self.batches.index(paths, lock)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # any failure: report it, keep watching, retry later
            self.full_next = True
            self.pending.paths |= set(retry_paths or ())
            message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
            failure = error_event(
                f"sync failed: {message}", retry_paths or [], self.retry.schedule()
            )
        finally:
            lock.release()  # before any output: a slow reader of our stdout never blocks writers
        if failure is not None:
            self.emit(failure)
            return
        self._report(report, initial=initial)

    def _report(self, report: IndexReport, *, initial: bool) -> None:
        """Emit a ``sync`` event when the batch changed something or warned anew."""
        self.full_next = False
        self.retry.reset()
        embeds = self.batches.embeds
        embedded = int(getattr(report, "embedded", 0) or 0)
        missing = int(getattr(report, "missing_vectors", 0) or 0)
        if embeds and missing:
            self.backfill.schedule()
        else:
            self.backfill.reset()
        changed = report.added + report.updated + report.removed
        new_warnings = report.warnings != self._last_warnings
        self._last_warnings = list(report.warnings)
        if not (changed or embedded or (report.warnings and new_warnings)):
            return
        self.syncs += 1
        self.emit(
            sync_event(report, embeds=embeds, embedded=embedded, missing=missing, initial=initial)
        )

    def _check_roots(self) -> None:
        """Say so once when a watched folder itself went away (its watch went with it); a
        folder made again under its name is noticed by :meth:`_replaced`."""
        for rel, path in self.roots.items():
            if self.identities.get(rel) is not None and _identity(path) is None:
                self.identities[rel] = None
                self.emit(warning_event(f"{rel or '.'}/ was removed; watching for it to come back"))

    def _replaced(self) -> bool:
        """Whether a watched folder is now another folder (moved away, then made again, or
        another moved in): its old watch sees nothing of the new one. Says so."""
        for rel, path in self.roots.items():
            now = _identity(path)
            if now is not None and now != self.identities.get(rel):
                self.emit(warning_event(f"{rel or '.'}/ was replaced; watching the new folder"))
                return True
        return False


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of a folder; None when there is no folder there."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


class _Backoff:
    """A retry time that backs off from RETRY_FIRST_S to RETRY_MAX_S."""

    def __init__(self) -> None:
        self.at: float | None = None
        self.delay = RETRY_FIRST_S

    @property
    def waiting(self) -> bool:
        return self.at is not None

    def due(self, now: float) -> bool:
        return self.at is not None and now >= self.at

    def schedule(self) -> float:
        delay = self.delay
        self.at = time.monotonic() + delay
        self.delay = min(self.delay * 2, RETRY_MAX_S)
        return delay

    def reset(self) -> None:
        self.at = None
        self.delay = RETRY_FIRST_S
