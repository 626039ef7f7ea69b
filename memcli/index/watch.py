"""Keeping the index in step while files change (``memcli watch``).

File-system events come from watchfiles (a notify thread inside the process:
no child processes). Events are filtered (``.memcli/``, ``.git/``, files the
include globs or ``.memignore`` leave out) and coalesced until the files
have been quiet for ``watch.debounce_ms`` (a steady stream is still synced
every ``max(2 s, 5 x debounce)``). Each batch re-indexes just the changed
paths (embedding new chunks when a model is configured) under the writer
lock, held for that batch only, in short transactions: searches never wait
(WAL) and ``memcli add`` waits at most one batch. One watcher runs per
workspace (``.memcli/watch.lock``).

The caller receives JSON-ready event dicts through ``emit``:
``ready``, ``sync``, ``warning``, ``error`` and ``stopped``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memcli.config import Settings, load_settings
from memcli.errors import AlreadyRunning, WorkspaceNotFound
from memcli.index import db
from memcli.index.embedder import LazyEmbedder
from memcli.index.indexer import (
    Indexer,
    IndexReport,
    is_corruption,
    open_store,
    replace_index,
    writer_lock,
)
from memcli.locks import ProcessLock
from memcli.notes.scan import SKIP_DIRS, Matcher
from memcli.notes.workspace import MEMORY_DIR, Workspace, find_workspace

STEP_MS = 100  # watchfiles checks for new events (and for a stop request) this often
MAX_TICK_MS = 1000  # the loop wakes at least this often while idle (retries)
MAX_DELAY_FACTOR = 5  # a steady stream of changes is still synced every 5 x debounce...
MIN_MAX_DELAY_S = 2.0  # ...or every 2 s, whichever is longer
LOCK_NOTICE_S = 2.0  # say so when another process has held the writer lock this long
RETRY_FIRST_S = 1.0  # a failed batch is retried after 1 s, 2 s, 4 s ... up to 60 s
RETRY_MAX_S = 60.0
PATHS_IN_EVENT = 200  # a sync event lists at most this many paths

Event = dict[str, Any]
Emit = Callable[[Event], None]


def now_iso() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


def watch_lock(ws: Workspace) -> ProcessLock:
    """The one-watcher-per-workspace lock."""
    return ProcessLock(ws.state_dir / "watch.lock", "memcli watch")


def acquire_watch_lock(ws: Workspace) -> ProcessLock:
    """Take the watcher lock or raise AlreadyRunning naming the first watcher's pid."""
    lock = watch_lock(ws)
    try:
        return lock.acquire_or_fail()
    except AlreadyRunning:
        pid = lock.holder_pid()
        raise AlreadyRunning(
            f"memcli watch is already running for {ws.root} (pid {pid or '?'})",
            hint=f"stop it first (kill {pid})" if pid else "stop the other watcher first",
        ) from None


def watch_roots(ws: Workspace, include: list[str]) -> tuple[list[str], list[str]]:
    """Folders to watch (workspace-relative, '' = the root) and warnings for missing ones.

    ``memory/`` plus the fixed leading folders of the include globs; folders
    inside another watched folder are dropped (it is watched recursively).
    """
    wanted = sorted({MEMORY_DIR, *Matcher(ws, include).roots}, key=lambda p: (p.count("/"), p))
    roots: list[str] = []
    warnings: list[str] = []
    for rel in wanted:
        if any(r == "" or rel == r or rel.startswith(r + "/") for r in roots):
            continue
        path = ws.root / rel if rel else ws.root
        if path.is_dir():
            roots.append(rel)
        elif rel == MEMORY_DIR:
            raise WorkspaceNotFound(
                f"nothing to watch: {path} does not exist", hint="run 'memcli init' first"
            )
        else:
            warnings.append(f"{rel}/ does not exist; not watching it (restart watch once it does)")
    return roots, warnings


class ChangeFilter:
    """Which file-system events matter: a ``(Change, path) -> bool`` callable.

    Kept: paths the include globs match (minus ``.memignore``), folders that
    appear (a folder moved in brings its files), and deleted folders that held
    indexed files (a folder moved out or renamed takes its files along).
    Dropped: ``.memcli/``, ``.git/`` and the like, everything else.
    """

    def __init__(self, ws: Workspace, include: list[str]) -> None:
        self.ws = ws
        self.include = include
        self.root = str(ws.root)
        self.matcher = Matcher(ws, include)
        self.known_dirs: set[str] = set()
        self._ignore_stamp = self._memignore_stamp()
        self._checked = time.monotonic()

    def _memignore_stamp(self) -> tuple[int, int] | None:
        try:
            st = (self.ws.root / ".memignore").stat()
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size)

    def refresh(self) -> None:
        """Reload ``.memignore`` when it changed (checked at most once a second)."""
        now = time.monotonic()
        if now - self._checked < 1.0:
            return
        self._checked = now
        stamp = self._memignore_stamp()
        if stamp != self._ignore_stamp:
            self._ignore_stamp = stamp
            self.matcher = Matcher(self.ws, self.include)

    def set_indexed(self, paths: Iterable[str]) -> None:
        """Remember the folders holding indexed files (to recognise deleted folders)."""
        self.known_dirs = set()
        self.add_indexed(paths)

    def add_indexed(self, paths: Iterable[str]) -> None:
        for p in paths:
            parts = p.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                self.known_dirs.add("/".join(parts[:i]))

    def rel(self, path: str) -> str | None:
        """Workspace-relative POSIX path, or None outside the workspace."""
        if not path.startswith(self.root + os.sep):
            return None
        rel = path[len(self.root) + 1 :]
        return rel.replace(os.sep, "/") if os.sep != "/" else rel

    def __call__(self, change: Any, path: str) -> bool:
        rel = self.rel(path)
        if not rel:
            return False
        if any(part in SKIP_DIRS for part in rel.split("/")):
            return False
        if self.matcher.matches(rel):
            return True
        if int(change) == 3:  # Change.deleted: a folder that held indexed files?
            return rel in self.known_dirs
        return os.path.isdir(path)


@dataclass
class WatchSummary:
    """How a watch ended."""

    syncs: int = 0
    reason: str = "stopped"


@dataclass
class _Batch:
    paths: set[str] = field(default_factory=set)
    first: float = 0.0
    last: float = 0.0


class Watcher:
    """Watch one workspace and keep its index in sync until ``stop_event`` is set."""

    def __init__(
        self,
        ws: Workspace,
        settings: Settings,
        emit: Emit,
        stop_event: threading.Event | None = None,
    ) -> None:
        self.ws = ws
        self.settings = settings
        self.emit = emit
        self.stop = stop_event or threading.Event()
        self.include: list[str] = settings.get("index.include")
        self.debounce_ms = max(0, int(settings.get("watch.debounce_ms")))
        self.debounce_s = self.debounce_ms / 1000
        self.max_delay_s = max(MIN_MAX_DELAY_S, MAX_DELAY_FACTOR * self.debounce_s)
        self.filter = ChangeFilter(ws, self.include)
        self.syncs = 0
        self.pending = _Batch()
        self.full_next = False  # after a failure: re-sync everything
        self.retry = _Backoff()  # a failed batch
        self.backfill = _Backoff()  # chunks left without vectors (provider down)
        self.embeds = bool(str(settings.get("embedding.model") or "").strip())
        self._embedder: LazyEmbedder | None = None  # one for the run (it holds the cache)
        self._last_warnings: list[str] = []
        self.roots: dict[str, Path] = {}  # watched folder (workspace-relative) -> path

    def close(self) -> None:
        if self._embedder is not None:
            self._embedder.close()
            self._embedder = None

    # -- the loop ----------------------------------------------------------
    def run(self) -> WatchSummary:
        """Watch until stopped; KeyboardInterrupt propagates (a forced stop)."""
        from watchfiles import watch

        roots, warnings = watch_roots(self.ws, self.include)
        paths = [str(self.ws.root / r) if r else str(self.ws.root) for r in roots]
        self.roots = dict(zip(roots, map(Path, paths), strict=True))
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
                    self._sync(None, initial=True)
                    self.pending = _Batch()
                    self.emit(
                        {
                            "event": "ready",
                            "workspace": str(self.ws.root),
                            "watching": [r or "." for r in roots],
                            "debounce_ms": self.debounce_ms,
                            "pid": os.getpid(),
                            "warnings": warnings,
                            "time": now_iso(),
                        }
                    )
                    continue
                self._collect(raw)
                if self.stop.is_set():
                    break
                if self._due():
                    self._flush()
                if self.stop.is_set():
                    break
        return WatchSummary(self.syncs)

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
            if not self._wait_for(lock):
                return  # stopping: the batch is abandoned; the next start's full sync catches up
            report = self._index(paths, lock)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # any failure: report it, keep watching, retry later
            self.full_next = True
            self.pending.paths |= set(retry_paths or ())
            message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
            failure = {
                "event": "error",
                "message": f"sync failed: {message}",
                "paths": (retry_paths or [])[:PATHS_IN_EVENT],
                "retry_in": self.retry.schedule(),
                "time": now_iso(),
            }
        finally:
            lock.release()  # before any output: a slow reader of our stdout never blocks writers
        if failure is not None:
            self.emit(failure)
            return
        self.full_next = False
        self.retry.reset()
        embedded = int(getattr(report, "embedded", 0) or 0)
        missing = int(getattr(report, "missing_vectors", 0) or 0)
        if self.embeds and missing:
            self.backfill.schedule()
        else:
            self.backfill.reset()
        changed = report.added + report.updated + report.removed
        new_warnings = report.warnings != self._last_warnings
        self._last_warnings = list(report.warnings)
        if not (changed or embedded or (report.warnings and new_warnings)):
            return
        self.syncs += 1
        event: Event = {
            "event": "sync",
            "added": report.added,
            "updated": report.updated,
            "removed": report.removed,
            "paths": report.changed[:PATHS_IN_EVENT],
            "seconds": round(report.seconds, 3),
            "time": now_iso(),
            "files": report.files,
            "chunks": report.chunks,
            "warnings": report.warnings,
        }
        if self.embeds:
            event["embedded"] = embedded
            event["missing_vectors"] = missing
        if initial:
            event["initial"] = True
        self.emit(event)

    def _check_roots(self) -> None:
        """Say so once when a watched folder itself went away (its watch went with it)."""
        for rel, path in list(self.roots.items()):
            if not path.is_dir():
                del self.roots[rel]
                self.emit(
                    {
                        "event": "warning",
                        "message": f"{rel or '.'}/ was removed; restart memcli watch once it is"
                        " back to see changes in it",
                        "time": now_iso(),
                    }
                )

    def _wait_for(self, lock: ProcessLock) -> bool:
        """Take the writer lock, waiting as long as needed; False when asked to stop."""
        started = time.monotonic()
        noticed = False
        while not lock.try_acquire():
            if self.stop.wait(0.05):
                return False
            if not noticed and time.monotonic() - started >= LOCK_NOTICE_S:
                noticed = True
                pid = lock.holder_pid()
                who = f" (pid {pid})" if pid else ""
                self.emit(
                    {
                        "event": "warning",
                        "message": f"waiting for another process{who} to finish writing the index",
                        "time": now_iso(),
                    }
                )
        return True

    def _embedder_for_run(self) -> Any:
        if self._embedder is None:
            # the provider modules (and redaction) are needed only with an embedding model
            from memcli.providers.embeddings import embedder_from_settings

            self._embedder = LazyEmbedder(self.settings, embedder_from_settings)
        return self._embedder.get()

    def _index(self, paths: list[str] | None, lock: ProcessLock | None = None) -> IndexReport:
        """One short sync of ``paths`` (caller holds the writer lock, ``lock``).

        Damage that opening the index does not notice, met by the sync itself, is repaired
        here as by any other command: the index is replaced and refilled from the Markdown
        (rather than failing the same way on every retry).
        """
        warnings: list[str] = []
        store = open_store(self.ws, warnings)
        try:
            try:
                report = self._sync_into(store, None if warnings else paths, lock)
            except db.database_errors() as exc:
                if not is_corruption(exc):
                    raise
                store.close()
                reason = f"index {self.ws.index_path} is damaged ({exc})"
                store = replace_index(self.ws, store.identity, reason, warnings)
                report = self._sync_into(store, None, lock)
        finally:
            store.close()
        report.warnings[:0] = warnings
        return report

    def _sync_into(
        self, store: Any, paths: list[str] | None, lock: ProcessLock | None = None
    ) -> IndexReport:
        # with the lock, a long back-fill lets other writers in while the provider answers
        indexer = Indexer(self.ws, store, self.settings, self._embedder_for_run(), lock)
        fresh = store.get_meta("last_indexed") is None
        if paths is not None and (fresh or indexer.needs_rebuild()):
            paths = None  # a new or rebuilt index needs everything, not just these ones
        if paths:
            _forget_stat(store, self.ws, paths)
        report = indexer.sync(paths)
        if paths is None:
            self.filter.set_indexed(store.file_states())
        else:  # folders only ever get added here; a stale one costs one empty sync
            self.filter.add_indexed(report.changed)
        return report


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


def _forget_stat(store: Any, ws: Workspace, paths: list[str]) -> None:
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


@contextlib.contextmanager
def stop_on_signals(stop: threading.Event) -> Any:
    """SIGINT/SIGTERM/SIGHUP set ``stop``; a second signal raises KeyboardInterrupt.

    Yields a dict whose ``"signal"`` key names the first signal received.
    Previous handlers are restored on exit. Only works in the main thread.
    """
    seen: dict[str, Any] = {"signal": None}
    wanted = [signal.SIGINT, signal.SIGTERM]
    # SIGHUP (terminal closed) stops it too, unless ignored on purpose (nohup).
    if hasattr(signal, "SIGHUP") and signal.getsignal(signal.SIGHUP) != signal.SIG_IGN:
        wanted.append(signal.SIGHUP)

    def handler(signum: int, frame: Any) -> None:
        if seen["signal"] is not None:
            raise KeyboardInterrupt
        seen["signal"] = signal.Signals(signum).name
        stop.set()

    previous = {sig: signal.signal(sig, handler) for sig in wanted}
    try:
        yield seen
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def run_watch(
    workspace: str | Path | None,
    emit: Emit,
    *,
    overrides: dict[str, Any] | None = None,
    stop_event: threading.Event | None = None,
    handle_signals: bool = True,
) -> WatchSummary:
    """Watch a workspace until a signal (or ``stop_event``); emits ``stopped`` at the end.

    Raises AlreadyRunning when another watcher holds the workspace, and
    KeyboardInterrupt after a second signal (the current batch is abandoned,
    its transaction rolled back; locks are released either way).
    """
    ws = find_workspace(workspace)
    settings = load_settings(ws.root, overrides)
    stop = stop_event or threading.Event()
    ws.ensure_state_dir()
    lock = acquire_watch_lock(ws)
    watcher = Watcher(ws, settings, emit, stop)
    in_main = threading.current_thread() is threading.main_thread()
    signals = stop_on_signals(stop) if handle_signals and in_main else contextlib.nullcontext({})
    reason = "stopped"
    try:
        with signals as seen:
            try:
                summary = watcher.run()
            except KeyboardInterrupt:
                reason = "interrupted"
                raise
            finally:
                if reason != "interrupted" and seen and seen.get("signal"):
                    reason = seen["signal"]
                watcher.close()
                lock.release()
                emit(
                    {
                        "event": "stopped",
                        "reason": reason,
                        "syncs": watcher.syncs,
                        "time": now_iso(),
                    }
                )
    finally:
        lock.release()
    summary.reason = reason
    return summary
