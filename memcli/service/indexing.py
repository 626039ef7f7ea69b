"""Indexing operations: sync the index with the Markdown, keep it fresh before a search, status."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import memcli.index.factrows as factrows
from memcli.errors import BadInput, GitError, LockTimeout, PathOutsideWorkspace, WriteFailed
from memcli.index import db
from memcli.index.freshness import Freshness
from memcli.index.indexer import IndexReport, Progress, rel_paths
from memcli.index.indexfile import writer_lock
from memcli.notes.workspace import MEMORY_DIR, find_git_root
from memcli.service.core import SEARCH_EMBED_LIMIT, MemoryCore

#: Seconds a search waits for another writer before it answers from the index as it is.
SEARCH_LOCK_WAIT = 2.0


def index(
    core: MemoryCore,
    paths: list[str] | None = None,
    *,
    force: bool = False,
    progress: Progress | None = None,
    lock_timeout: float | None = None,
    embed: bool = True,
    embed_limit: int | None = None,
) -> IndexReport:
    """Incremental sync under the writer lock (then vectors, unless ``embed`` is False;
    with ``embed_limit``, only when that few chunks wait for one)."""
    try:
        rels = rel_paths(core.ws, paths) if paths else None
    except PathOutsideWorkspace as exc:  # the refusal names the argument
        raise PathOutsideWorkspace(f"index PATH: {exc.message}", exc.hint) from None
    for given, rel in zip(paths or (), rels or (), strict=True):
        # a path that is gone from disk is indexed (removed) only if the index knows it
        if rel and not (core.ws.root / rel).exists() and not core.store.knows(rel):
            raise BadInput(f"index PATH: no such file or folder: {given}")
    if core.store.readonly:
        raise WriteFailed(
            f"index {core.ws.index_path} cannot be written ({core.store.readonly})",
            hint="free space or fix the permissions of the .memcli folder",
        )
    with writer_lock(core.ws).acquire(core._lock_timeout(lock_timeout)) as lock:
        core._writing = True
        try:
            report = core._with_repair(
                lambda: core.indexer(lock).sync(
                    rels, force=force, progress=progress, embed=embed, embed_limit=embed_limit
                )
            )
            if rels is None:  # a whole sync: the git hooks' and the user's
                refresh_links(core)
            else:  # an added fact: what its new names resolve to
                refresh_links(core, rels)
        except db.database_errors() as exc:
            cause = db.write_failure(exc)
            if cause is None:
                raise
            raise WriteFailed(
                f"cannot write index {core.ws.index_path}: {cause}; it is as it was before",
                hint="free space or fix permissions, then run 'memcli index'",
            ) from None
        finally:
            core._writing = False
    report.warnings[:0] = core.warnings
    core.warnings.clear()
    return report


def refresh_links(core: MemoryCore, files: list[str] | None = None) -> None:
    """Record when the repository paths facts link to last changed (one ``git log``;
    :mod:`memcli.git.changes`), under the writer lock the caller holds; with ``files``
    (memory files just synced), only resolve the names they brought (no git process)."""
    from memcli.git.changes import link_new_names, refresh_links  # the git room

    top = find_git_root(core.ws.root)
    try:
        with core.store.transaction():
            if top is None:
                factrows.set_link_paths(core.store.conn, [])
            elif files is not None:
                link_new_names(core.store, top, files)
            else:
                refresh_links(core.store, top, core.ws.root)
    except GitError as exc:  # the index stays as it was: stale marks wait for git
        core.warnings.append(f"paths facts name not checked: {exc.message}")


def scrub(core: MemoryCore, lock_timeout: float | None = None) -> bool:
    """Wipe deleted text from the index file (:meth:`memcli.index.store.Store.scrub`),
    under the writer lock; False when a reader kept the old pages for now."""
    with writer_lock(core.ws).acquire(core._lock_timeout(lock_timeout)):
        return core.store.scrub()


def sync_before_search(core: MemoryCore) -> tuple[bool | None, list[str]]:
    """Re-index changed files; returns (stale, warnings).

    With ``index.sync_on_search`` off the index is trusted as it is (a watcher or the
    git hooks keep it current) and nothing is checked: stale is None, unknown.
    """
    if not core.settings.get("index.sync_on_search"):
        return None, []
    if core.store.readonly:  # it cannot be written: answer from it as it is
        return True, []
    indexer = core.indexer()
    check = indexer.check
    if (
        not check.dirty()
        and not check.settled
        and not indexer.needs_rebuild()
        and not _vectors_waiting(core)
    ):
        _record_check(core, check)
        return False, []
    lock = writer_lock(core.ws)
    try:
        # the files just listed are reused unless another writer made this one wait
        at_once = lock.try_acquire()
        if not at_once:
            lock.acquire(timeout=SEARCH_LOCK_WAIT)
    except LockTimeout:
        return True, ["index is being written by another process; results may be stale"]
    except WriteFailed as exc:
        return True, [f"{exc.message}: answering from the index as it is"]
    try:
        report = indexer.sync(embed_limit=SEARCH_EMBED_LIMIT, reuse_scan=at_once)
        if report.changed:  # a fact written by hand links now, not at the next 'index'
            refresh_links(core, report.changed)
    except db.database_errors() as exc:
        cause = db.write_failure(exc)
        if cause is None:
            raise
        return True, [f"index not updated ({cause}): answering from it as it is"]
    finally:
        lock.release()
    return False, [w for w in report.warnings]


def _record_check(core: MemoryCore, check: Freshness) -> None:
    """After a search found the index current, record what the quick check needs when
    :meth:`~memcli.index.freshness.Freshness.worth_recording`; only if the writer lock
    is free at once: it is a cache."""
    if not check.worth_recording():
        return
    lock = writer_lock(core.ws)
    if not lock.try_acquire():
        return
    try:
        with core.store.transaction():
            check.record(check.compared_all, check.walked)
    except Exception:  # noqa: S110 - a cache: the full check runs until it is there
        pass
    finally:
        lock.release()


def _vectors_waiting(core: MemoryCore) -> bool:
    """A few chunks lack vectors and a search may embed them first (index.backfill)."""
    embedder = core.embedder
    if embedder is None:
        return False
    from memcli.index.backfill import needs_backfill  # vectors code: with a model only

    return needs_backfill(core.store, embedder, SEARCH_EMBED_LIMIT)


def status(core: MemoryCore, engine: dict[str, Any] | None = None) -> dict[str, Any]:
    """The workspace's state; ``engine``: the running engine's info when the engine itself
    asks (else it is asked over its socket)."""
    return core._with_repair(lambda: _status(core, engine))


def _status(core: MemoryCore, engine: dict[str, Any] | None) -> dict[str, Any]:
    store = core.store
    indexer = core.indexer()
    found = indexer.scan()
    dirty = indexer.check.dirty(found)
    files, chunks = store.counts()
    last = store.get_meta("last_indexed")
    from memcli.providers.agentcli import session_saving  # names and PATH look-ups
    from memcli.providers.embeddings import status_info  # no provider call, no LiteLLM

    vec = status_info(store, core.settings)
    if vec["mode"] == "keyword" and "embedding.model" in core.settings.ignored:
        vec["mode_reason"] = "memcli.toml's embedding.model waits for 'memcli trust'"
    return {
        "workspace": str(core.ws.root),
        "index": str(core.ws.index_path),
        "files": files,
        "chunks": chunks,
        "mode": vec["mode"],
        "mode_reason": vec["mode_reason"],
        "embedding": vec["embedding"],
        "cache": vec["cache"],
        "dirty": dirty,
        "git": _git_state(core.ws.root),
        "engine": engine or _engine(core.ws.root),
        "sessions": session_saving(core.settings),
        "last_indexed": (
            datetime.fromtimestamp(float(last)).isoformat(timespec="seconds") if last else None
        ),
        "warnings": [
            *core.warnings,
            *found.warnings,
            *(f"{path}: skipped: {why}" for path, (_, _, why) in sorted(store.skipped().items())),
        ],
    }


def _git_state(root: Path) -> dict[str, Any] | None:
    """Branch, dirty memory files, ahead/behind; None outside git (one subprocess, no GitPython)."""
    from memcli.git.status import quick_status  # git code: only status reads git state

    return quick_status(root, MEMORY_DIR)


def _engine(root: Path) -> dict[str, Any] | None:
    """The running engine of the workspace (``memcli serve``), or None."""
    from memcli.enginelink import ask  # a socket and JSON: no heavy imports

    answer = ask(root, "ping", {}, timeout=0.5)
    info: dict[str, Any] | None = answer["result"] if answer and answer.get("ok") else None
    return info
