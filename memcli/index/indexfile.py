"""The index file of a workspace: opening it, replacing it when damaged, and repair.

The Markdown is the source of truth, so a damaged or foreign index is simply swapped for an
empty one and refilled from the Markdown; nothing in ``memory/`` is ever touched.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from memcli.config import Settings
from memcli.errors import IndexProblem, MemcliError, WriteFailed, os_cause
from memcli.index import db
from memcli.index.indexer import Indexer
from memcli.index.seal import UntrustedIndex
from memcli.index.store import ForeignIndex, Store, remove_index_files
from memcli.locks import ProcessLock
from memcli.notes.workspace import Workspace

T = TypeVar("T")


def writer_lock(ws: Workspace) -> ProcessLock:
    """The one-writer-at-a-time lock of a workspace's index."""
    return ProcessLock(ws.lock_path, "the index")


def open_store(ws: Workspace, warnings: list[str] | None = None) -> Store:
    """Open the index, rebuilding it (empty) when it is damaged or not ours.

    The Markdown is the source of truth, so a broken index is simply removed;
    the caller's next sync refills it. Nothing in ``memory/`` is touched. An index that
    cannot be written (a full disk, a read-only folder) is not damaged: it is opened
    read-only, as it is, with a warning (:func:`open_readonly`).
    """
    path = ws.index_path
    try:
        found = ws.check_state()  # what a repository planted in .memcli/
    except OSError as exc:
        raise WriteFailed(
            f"cannot create {ws.state_dir}: {os_cause(exc)}", hint="free space or fix permissions"
        ) from None
    if warnings is not None:
        warnings.extend(found)
    identity = file_identity(path)
    try:
        store = Store.open(path)
        store.conn.execute("SELECT count(*) FROM files").fetchone()
        return store
    except IndexProblem:
        raise
    except (ForeignIndex, UntrustedIndex) as exc:  # another program's, or not this user's
        reason = str(exc)
    except UnicodeDecodeError as exc:  # a schema or meta text that is not UTF-8
        reason = f"index {path} is damaged ({exc})"
    except db.database_errors() as exc:
        if "locked" in str(exc).lower() or "busy" in str(exc).lower():
            raise IndexProblem(f"index {path} is locked: {exc}", hint="try again") from None
        cause = db.write_failure(exc)
        if cause is not None and path.is_file() and not db.is_corruption(exc):
            readonly = open_readonly(ws, cause, warnings)
            if readonly is not None:
                return readonly
        reason = (
            f"index {path} is a folder, not a database"
            if path.is_dir()
            else f"index {path} is unreadable ({exc})"
        )
    return replace_index(ws, identity, reason, warnings)


def open_readonly(ws: Workspace, cause: str, warnings: list[str] | None) -> Store | None:
    """The index opened read-only because it cannot be written (``cause``), with a warning;
    None when it cannot be read either and its folder can be written (then it is damaged
    and replaced); an error naming the cause when it can be neither read nor replaced."""
    path = ws.index_path
    failures: tuple[type[BaseException], ...] = (IndexProblem, *db.database_errors())
    try:
        store = Store.open_readonly(path)
    except UntrustedIndex as exc:  # never answered from, even when it cannot be replaced
        if os.access(ws.state_dir, os.W_OK) and os.access(path, os.W_OK):
            return None
        raise IndexProblem(
            f"{exc}, and it cannot be rebuilt ({cause}): not answering from it",
            hint=f"make {ws.state_dir} writable, or delete it, and run the command again",
        ) from None
    except failures as exc:
        if os.access(ws.state_dir, os.W_OK) and os.access(path, os.W_OK):
            return None
        raise WriteFailed(
            f"index {path} cannot be written ({cause}) and cannot be read as it is ({exc})",
            hint="free space or fix the permissions of the .memcli folder",
        ) from None
    store.readonly = cause
    if warnings is not None:
        warnings.append(
            f"index {path} cannot be written ({cause}): answering from it as it is;"
            " results may be stale"
        )
    return store


def file_identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of a file, None when it does not exist."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino)


def replace_index(
    ws: Workspace, identity: tuple[int, int] | None, reason: str, warnings: list[str] | None
) -> Store:
    """Swap a damaged index (the file that had ``identity``) for an empty one.

    The caller's next sync refills it from the Markdown; ``memory/`` is never touched.
    When another process has replaced the file already, its new index is kept and opened.
    A folder where the file should be is removed too (``.memcli`` holds derived data only).
    """
    path = ws.index_path
    current = file_identity(path)
    if current is not None and (identity is None or current == identity):
        try:
            remove_index_files(path)
        except OSError as exc:
            raise WriteFailed(
                f"{reason}, and it cannot be replaced: {os_cause(exc)}",
                hint=f"free space or fix permissions, or delete {path}",
            ) from None
        if warnings is not None:
            warnings.append(f"{reason}; rebuilt it from the Markdown")
    try:
        return Store.open(path)
    except db.database_errors() as exc:
        cause = db.write_failure(exc)
        hint = "free space or fix permissions" if cause else f"delete {path.parent} and try again"
        raise IndexProblem(f"cannot create index {path}: {cause or exc}", hint=hint) from None


class RepairedIndex:
    """A workspace's index, opened on first use; the one place a damaged index is repaired.

    Damage found on opening, or by an operation (:meth:`run`), replaces the file with an
    empty index (a warning says so). With ``refill``, the new index is then filled from the
    Markdown under the writer lock; without, the caller holds that lock and its own sync (the
    retry) fills it.
    """

    def __init__(self, ws: Workspace, settings: Settings, warnings: list[str]) -> None:
        self.ws = ws
        self.settings = settings
        self.warnings = warnings
        self.store: Store | None = None
        #: Score bounds for the store's keyword queries (the engine's; see Store.bounds).
        self.bounds: Any = None

    def open(self, *, refill: bool) -> Store:
        """The store, opened (and, when found damaged and ``refill``, refilled) if need be."""
        if self.store is None:
            seen = len(self.warnings)
            self.store = open_store(self.ws, self.warnings)
            if len(self.warnings) > seen and refill and not self.store.readonly:
                with self._locked():  # it was damaged and rebuilt empty: fill it before use
                    self._refill(self.store)
        self.store.bounds = self.bounds  # also a store that replaced a damaged one
        return self.store

    def run(self, fn: Callable[[], T], *, refill: bool, retry: Callable[[], T] | None = None) -> T:
        """Run ``fn``; if the index file turns out damaged (found by a query, not on open),
        replace it (and refill it, with ``refill``) and run ``retry`` (or ``fn``) once more."""
        try:
            return fn()
        except Exception as exc:
            if self.store is not None and self.store.readonly:
                raise
            damage = str(exc) if db.is_corruption(exc) else self._damage_behind(exc)
            if damage is None:
                raise
            identity = self.store.identity if self.store is not None else None
            self.close()
            reason = f"index {self.ws.index_path} is damaged ({damage})"
            if not refill:  # the caller's retry is the sync that refills it
                self.store = replace_index(self.ws, identity, reason, self.warnings)
            else:
                with self._locked():
                    self.store = replace_index(self.ws, identity, reason, self.warnings)
                    self._refill(self.store)
        return (retry or fn)()

    def _damage_behind(self, exc: Exception) -> str | None:
        """Whether an error that does not name damage (a NULL where a path should be makes a
        TypeError far from SQL) comes from a damaged file: SQLite's quick check says. Errors
        memcli raises on purpose, and other database errors (busy, full), are not damage."""
        if self.store is None or isinstance(exc, (MemcliError, *db.database_errors())):
            return None
        return db.quick_check(self.store.conn)

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None

    def _locked(self) -> ProcessLock:
        return writer_lock(self.ws).acquire(float(self.settings.get("index.lock_timeout")))

    def _refill(self, store: Store) -> None:
        """Index every file into a rebuilt (empty) index (the writer lock is held)."""
        report = Indexer(self.ws, store, self.settings).sync(embed=False)
        self.warnings.extend(report.warnings)
