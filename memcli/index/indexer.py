"""Keeping the index in step with the Markdown: the incremental and the bulk sync."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Generator, Iterable
from functools import partial
from pathlib import Path

from memcli.config import Settings
from memcli.config.registry import default
from memcli.index import chunking, db
from memcli.index.bigrams import GRAMS_VERSION
from memcli.index.changes import recorded_mtime
from memcli.index.embedder import Embedder
from memcli.index.filewrites import FileWrite
from memcli.index.freshness import Freshness
from memcli.index.parsing import Parsed, parse_text
from memcli.index.store import BULK_FTS_HASH_BYTES, FTS_HASH_BYTES, FileState, Store
from memcli.locks import ProcessLock
from memcli.notes.scan import FoundFile, ScanResult, read_text, scan, stat_files
from memcli.notes.workspace import Workspace, source_of

# A transaction ends after this many files or bytes of Markdown (re)indexed, whichever comes
# first: bounds the work lost on a crash and the growth of the WAL. Each commit rewrites the
# pages it touched and lets a checkpoint copy them, so small batches cost: a cold index of 10k
# files (80 MB) wrote 369 MB with 500-file batches, 191 MB with these (one transaction: 167).
BATCH_FILES = 5000
BATCH_BYTES = 16 * 1024 * 1024
#: Filling an empty index with at least this many files drops the secondary indexes and
#: builds them once at the end (Store.drop_bulk_indexes).
BULK_FILES = 1000
#: A bulk load of at least this many files reads and parses them in a second process while
#: this one writes to SQLite; the two halves take about the same time (benchmarks/RESULTS.md).
PARALLEL_FILES = 2000
#: Files whose rows are written together (Store.write_files: one executemany per table),
#: or fewer when their chunks reach WRITE_CHUNKS: per-file statements cost more than the
#: rows, and a batch's rows are held in memory until written.
WRITE_FILES = 500
WRITE_CHUNKS = 8000


Progress = Callable[[int, int], None]


#: The meta key that says a rebuild cleared the index and its refill is not committed yet.
REBUILDING = "rebuilding"


class IndexReport:
    """What one sync did (the ``index --json`` payload plus warnings); counts start at 0."""

    def __init__(self) -> None:
        self.added = self.updated = self.removed = self.unchanged = 0
        self.files = self.chunks = 0
        self.seconds = 0.0
        self.warnings: list[str] = []
        self.changed: list[str] = []  # paths written or removed
        self.embedded = 0  # chunks given a vector by this run
        self.missing_vectors = 0  # chunks still without one (embedding model configured)
        self.embed_cached = 0  # of the embedded, vectors taken from the embedding cache
        self.embed_requests = 0  # calls to the model or the provider this run made

    def as_dict(self) -> dict[str, object]:
        return {
            "added": self.added,
            "updated": self.updated,
            "removed": self.removed,
            "unchanged": self.unchanged,
            "files": self.files,
            "chunks": self.chunks,
            "embedded": self.embedded,
            "missing_vectors": self.missing_vectors,
            "embed_cached": self.embed_cached,
            "embed_requests": self.embed_requests,
            "seconds": round(self.seconds, 3),
        }


def chunk_params(settings: Settings) -> str:
    """What the chunks depend on besides the files; a change rebuilds the index. The size cap
    (``index.max_file_mb``: how much of a large file is read) is part of it once changed from
    its default, so indexes built with the default keep their recorded value."""
    params = {
        "chunker": chunking.CHUNKER_VERSION,
        "chars": settings.get("index.chunk_chars"),
        "grams": GRAMS_VERSION,
    }
    cap = settings.get("index.max_file_mb")
    if cap != default("index.max_file_mb"):
        params["max_file_mb"] = cap
    return json.dumps(params, sort_keys=True)


class Indexer:
    """Incremental sync of one workspace into its store (caller holds the writer lock)."""

    def __init__(
        self,
        ws: Workspace,
        store: Store,
        settings: Settings,
        embedder: Embedder | None = None,
        writer: ProcessLock | None = None,
        freshness: str | None = None,
    ) -> None:
        self.ws = ws
        self.store = store
        self.settings = settings
        #: Gives chunks their vectors after a sync; None: keyword index only.
        self.embedder = embedder
        self.include: list[str] = settings.get("index.include")
        self.max_bytes = int(settings.get("index.max_file_mb") * 1024 * 1024)
        self.target = int(settings.get("index.chunk_chars"))
        self.root = str(ws.root) + os.sep  # a found file is at root + rel
        #: The comparison with the files before a sync (``freshness``: ``index.freshness``
        #: unless the caller says) and what it found.
        self.check = Freshness(ws, store, settings, self.include, freshness)
        self.writer = writer  # the writer lock, when the caller holds it (embed_pending)
        #: Files parsed and not yet written (:meth:`_flush` writes them in one batch).
        self._pending: list[FileWrite] = []
        self._pending_chunks = 0

    def scan(self) -> ScanResult:
        return scan(self.ws, self.include)

    def needs_rebuild(self) -> bool:
        return self.store.get_meta("chunking") != chunk_params(self.settings)

    def sync(
        self,
        paths: Iterable[str] | None = None,
        *,
        force: bool = False,
        progress: Progress | None = None,
        embed: bool = True,
        embed_limit: int | None = None,
        watched: bool = False,
        reuse_scan: bool = False,
    ) -> IndexReport:
        """Bring the index in line with the files (all, or only ``paths``).

        With an embedding model configured (and ``embed``), chunks without vectors are then
        embedded; ``embed_limit`` skips that when more chunks wait (searches use it).

        A whole sync records what the quick freshness check needs (the folders' times, the
        time of this full comparison); a sync of some ``paths`` records the folders' times
        only when ``watched`` (a watcher sees every change, so the others were not missed).
        ``reuse_scan``: sync only what ``check.dirty()`` has just found changed (or settled),
        instead of listing and comparing every file again; after a full comparison, record
        it as a whole sync does, after the quick check, the times of the folders it listed
        (a file changed since is recorded with its older stat and synced again later).
        """
        t0 = time.perf_counter()
        report = IndexReport()
        store = self.store
        refill = force or self.needs_rebuild()
        if refill:
            if not force and store.get_meta("chunking") is not None:
                report.warnings.append("chunking settings changed; rebuilding the index")
            paths = None  # a cleared index needs every file, not only the ones asked for
            reuse_scan = False  # nor only the ones dirty() found changed
            with store.transaction():
                store.clear()
                store.set_meta("chunking", chunk_params(self.settings))
                store.set_meta(REBUILDING, "1")  # until the whole refill is committed
        elif store.get_meta(REBUILDING) == "1":
            refill = True
            report.warnings.append(
                "the last rebuild of the index (index --force, or new chunking settings) was"
                " interrupted; indexing every file again"
            )
            paths, reuse_scan = None, False
        check = self.check
        prior = check.found if paths is None and reuse_scan and check.reusable() else None
        names = None if paths is None else sorted(set(paths))
        # files named (an add, a watcher's batch): their own stat, not a listing of all
        scoped = None if names is None else stat_files(self.ws, self.include, names)
        if scoped is not None and names is not None:
            missing = [rel for rel in names if rel not in scoped.files]
            states = store.file_states_for(missing)
            if any(rel not in states and store.knows(rel) for rel in missing):
                scoped = None  # a folder that is gone: every file under it, from the walk
        wanted: Callable[[str], bool]
        began: float | None
        if prior is not None:  # only what check.dirty() found
            began, found = check.compared_all, prior
            names = sorted({*check.changed, *check.settled})
            known = store.file_states_for(names)
            wanted = set(names).__contains__
            files = [(rel, found.files[rel]) for rel in names if rel in found.files]
        elif scoped is not None and names is not None:
            began, found = time.time(), scoped
            known = store.file_states_for(names)
            wanted = set(names).__contains__
            files = sorted(found.files.items())
        else:
            began, found = time.time(), self.scan()
            known = store.file_states()
            wanted = _selector(paths)
            files = sorted(found.files.items())
        whole = paths is None and began is not None  # every file compared, or listed
        report.warnings.extend(found.warnings)
        skipped = store.skipped()
        # a skipped (binary) file is read again only when its stat changes
        todo = [
            f
            for rel, f in files
            if wanted(rel) and skipped.get(rel, (None, None))[:2] != (f.mtime_ns, f.size)
        ]
        gone = [k for rel, k in known.items() if rel not in found.files and wanted(rel)]
        unskip = [rel for rel in skipped if rel not in found.files and wanted(rel)]
        total = len(todo) + len(gone)
        done = 0
        batch = batch_bytes = 0
        bulk = not store.has_files(1) and len(todo) >= BULK_FILES
        parsed: Generator[Parsed, None, None] | None = None
        store.conn.execute("BEGIN IMMEDIATE")
        try:
            store.ensure_bulk_indexes()  # a bulk load that crashed left them out
            if bulk:
                store.drop_bulk_indexes()
                store.fts_hash_size(BULK_FTS_HASH_BYTES)
            if bulk and _parallel(todo):
                from memcli.index.parseproc import parse_elsewhere  # bulk loads only

                parsed = parse_elsewhere(self.root, todo, self.target, self.max_bytes)
            for f in todo:
                k = known.get(f.rel)
                if f.rel in skipped:
                    store.unskip(f.rel)  # recorded again below if it is still binary
                if parsed is not None:  # bulk: k is None, the file is new
                    self._write(f, next(parsed), None, report)
                else:
                    self._sync_file(f, k, report)
                done += 1
                batch += 1
                if k is None or k.mtime_ns != f.mtime_ns or k.size != f.size:
                    batch_bytes += f.size  # read (and maybe rewritten), not just compared
                if batch >= BATCH_FILES or batch_bytes >= BATCH_BYTES:
                    self._flush()
                    store.conn.execute("COMMIT")
                    store.conn.execute("BEGIN IMMEDIATE")
                    batch = batch_bytes = 0
                if progress:
                    progress(done, total)
            self._flush()
            for rel in unskip:
                store.unskip(rel)
            for k in gone:
                store.remove_file(k.id)
                report.removed += 1
                report.changed.append(k.path)
                done += 1
                if progress:
                    progress(done, total)
            if bulk:
                store.ensure_bulk_indexes()
                store.fts_hash_size(FTS_HASH_BYTES)
            store.set_meta("last_indexed", str(time.time()))
            if refill:
                store.set_meta(REBUILDING, "0")
            if whole or watched or prior is not None:
                check.record(began if whole else None, found.folders, watched)
            store.conn.execute("COMMIT")
        except BaseException:
            self._pending.clear()
            self._pending_chunks = 0
            db.rollback(store.conn)
            raise
        finally:
            if parsed is not None:
                parsed.close()  # stops the parse process if the loop ended early
        report.files, report.chunks = store.counts()
        if embed:
            self.embed_pending(report, embed_limit, progress)
        report.seconds = time.perf_counter() - t0
        return report

    def embed_pending(
        self, report: IndexReport, limit: int | None = None, progress: Progress | None = None
    ) -> None:
        """Back-fill vectors (:func:`memcli.index.backfill.backfill`) when an embedder was
        given; provider failures become warnings.

        A full back-fill (no ``limit``) lets other writers in while the provider answers,
        when :attr:`writer` is the writer lock this process holds."""
        if self.embedder is None:
            return
        from memcli.index.backfill import backfill  # vectors code: with a model only

        released = None
        if limit is None and self.writer is not None and self.writer.held:
            released = partial(self.writer.released, float(self.settings.get("index.lock_timeout")))
        result = backfill(
            self.store,
            self.embedder,
            limit=limit,
            quick=limit is not None,
            progress=progress,
            released=released,
        )
        report.embedded = result.embedded
        report.missing_vectors = result.missing
        report.embed_cached = result.cached
        report.embed_requests = result.requests
        report.warnings.extend(result.warnings)

    def _write(
        self, f: FoundFile, parsed: Parsed, known: FileState | None, report: IndexReport
    ) -> None:
        """Record a file read and parsed: (re)index it, or remember it as skipped (binary)."""
        if parsed.error is not None:
            report.warnings.append(f"{f.rel}: skipped: {parsed.error}")
            return
        if parsed.warning:
            report.warnings.append(f"{f.rel}: {parsed.warning}")
        if (
            parsed.rows is None
            or parsed.texts is None
            or parsed.facts is None
            or parsed.sha256 is None
        ):
            if known is not None:
                self.store.remove_file(known.id)
                report.removed += 1
            reason = (parsed.warning or "not indexed").removeprefix("skipped: ")
            self.store.set_skipped(f.rel, recorded_mtime(f.mtime_ns), f.size, reason)
            return
        self._pending.append(
            FileWrite(
                f.rel,
                recorded_mtime(f.mtime_ns),
                f.size,
                parsed.sha256,
                parsed.date,
                source_of(f.rel),
                parsed.date is None,
                parsed.rows,
                parsed.texts,
                parsed.facts,
                known.id if known is not None else None,
                parsed.links,
            )
        )
        self._pending_chunks += len(parsed.rows)
        if len(self._pending) >= WRITE_FILES or self._pending_chunks >= WRITE_CHUNKS:
            self._flush()
        report.changed.append(f.rel)
        if known is None:
            report.added += 1
        else:
            report.updated += 1

    def _flush(self) -> None:
        """Write the files parsed since the last flush (inside the sync's transaction)."""
        if self._pending:
            self.store.write_files(self._pending)
            self._pending = []
            self._pending_chunks = 0

    def _sync_file(self, f: FoundFile, known: FileState | None, report: IndexReport) -> None:
        if known is not None and (known.mtime_ns, known.size) == (f.mtime_ns, f.size):
            report.unchanged += 1
            return
        try:
            data, text, warning = read_text(self.root + f.rel, self.max_bytes)
        except OSError as exc:
            report.warnings.append(f"{f.rel}: skipped: {exc.strerror or exc}")
            return
        import hashlib  # not needed by searches, only by indexing

        digest = hashlib.sha256(data).hexdigest()
        if known is not None and known.sha256 == digest:
            if warning and known.size != f.size:  # it grew past index.max_file_mb: say so
                report.warnings.append(f"{f.rel}: {warning}")
            if known.mtime_ns != recorded_mtime(f.mtime_ns) or known.size != f.size:
                self.store.touch_file(known.id, recorded_mtime(f.mtime_ns), f.size)
            report.unchanged += 1
            return
        self._write(f, parse_text(f.rel, digest, text, warning, self.target), known, report)


def _parallel(todo: list[FoundFile]) -> bool:
    return len(todo) >= PARALLEL_FILES and (os.cpu_count() or 1) > 1 and bool(sys.executable)


def _selector(paths: Iterable[str] | None) -> Callable[[str], bool]:
    """A predicate for 'rel is one of paths or under one of these folders'."""
    if paths is None:
        return lambda rel: True
    exact = set(paths)
    if "" in exact:
        return lambda rel: True
    prefixes = tuple(p.rstrip("/") + "/" for p in exact)
    return lambda rel: rel in exact or rel.startswith(prefixes)


def rel_paths(ws: Workspace, paths: Iterable[str | Path]) -> list[str]:
    """User paths (files or folders) as workspace-relative POSIX paths, confined.

    Relative paths start from the current directory when it is inside the workspace,
    else from the workspace root (``memcli -w DIR index memory/x.md`` from anywhere).
    """
    out: list[str] = []
    cwd, root = Path.cwd().resolve(), ws.root.resolve()
    base = cwd if cwd == root or root in cwd.parents else root
    for p in paths:
        resolved = ws.resolve_user_path(p, base=base)
        out.append(ws.rel(resolved) if resolved != ws.root.resolve() else "")
    return out
