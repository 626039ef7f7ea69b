"""Keeping the index in step with the Markdown: open, repair, incremental sync."""

from __future__ import annotations

import bisect
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, field
from functools import partial
from itertools import starmap, zip_longest
from operator import eq
from pathlib import Path
from typing import NamedTuple

from memcli.config import Settings
from memcli.errors import IndexProblem
from memcli.index import chunking, db
from memcli.index.backfill import backfill
from memcli.index.embedder import Embedder
from memcli.index.store import ChunkRow, FileState, ForeignIndex, Store, remove_index_files
from memcli.locks import ProcessLock
from memcli.notes.scan import FoundFile, ScanResult, iter_files, read_text, scan
from memcli.notes.workspace import EVERGREEN_FILE, Workspace, date_from_name, source_of

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
_PARSE_CHUNK = 32  # files per message to the parse process
_PARSE_WINDOW = 8  # messages in flight: bounded memory, and pipes that never both fill up
_PIPE_BYTES = 1 << 20  # answers the child may write ahead of us (Linux; else 64 KiB)
_PARSE_WORKER = "from memcli.index.indexer import _parse_worker; _parse_worker()"
#: A file modified this close to the moment it was read may change again within the same
#: timestamp tick without its (mtime, size) changing ("racy clean", as git calls it). Such a
#: file is recorded with mtime 0, so the next check re-hashes it instead of trusting the stat.
RACY_NS = 2_000_000_000
SMUDGED = 0


def _recorded_mtime(mtime_ns: int) -> int:
    return SMUDGED if time.time_ns() - mtime_ns < RACY_NS else mtime_ns


Progress = Callable[[int, int], None]


@dataclass
class IndexReport:
    """What one sync did (the ``index --json`` payload plus warnings)."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    files: int = 0
    chunks: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    embedded: int = 0  # chunks given a vector by this run
    missing_vectors: int = 0  # chunks still without one (embedding model configured)

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
            "seconds": round(self.seconds, 3),
        }


def writer_lock(ws: Workspace) -> ProcessLock:
    """The one-writer-at-a-time lock of a workspace's index."""
    return ProcessLock(ws.lock_path, "the index")


def chunk_params(settings: Settings) -> str:
    return json.dumps(
        {"chunker": chunking.CHUNKER_VERSION, "chars": settings.get("index.chunk_chars")},
        sort_keys=True,
    )


def open_store(ws: Workspace, warnings: list[str] | None = None) -> Store:
    """Open the index, rebuilding it (empty) when it is corrupt or not ours.

    The Markdown is the source of truth, so a broken index is simply removed;
    the caller's next sync refills it. Nothing in ``memory/`` is touched.
    """
    ws.ensure_state_dir()
    path = ws.index_path
    identity = file_identity(path)
    try:
        store = Store.open(path)
        store.conn.execute("SELECT count(*) FROM files").fetchone()
        return store
    except IndexProblem:
        raise
    except ForeignIndex as exc:
        reason = str(exc)
    except db.database_errors() as exc:
        if "locked" in str(exc).lower() or "busy" in str(exc).lower():
            raise IndexProblem(f"index {path} is locked: {exc}", hint="try again") from None
        reason = f"index {path} is unreadable ({exc})"
    return replace_index(ws, identity, reason, warnings)


def file_identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of a file, None when it does not exist."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino)


def is_corruption(exc: BaseException) -> bool:
    """Whether a database error means the index file itself is damaged (not busy, not a bug)."""
    if not isinstance(exc, db.database_errors()):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in (11, 26):  # SQLITE_CORRUPT, SQLITE_NOTADB
        return True
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text or "corrupt" in text


def replace_index(
    ws: Workspace, identity: tuple[int, int] | None, reason: str, warnings: list[str] | None
) -> Store:
    """Swap a damaged index (the file that had ``identity``) for an empty one.

    The caller's next sync refills it from the Markdown; ``memory/`` is never touched.
    When another process has replaced the file already, its new index is kept and opened.
    """
    path = ws.index_path
    current = file_identity(path)
    if current is not None and (identity is None or current == identity):
        remove_index_files(path)
        if warnings is not None:
            warnings.append(f"{reason}; rebuilt it from the Markdown")
    try:
        return Store.open(path)
    except db.database_errors() as exc:
        raise IndexProblem(
            f"cannot create index {path}: {exc}", hint=f"delete {path.parent} and try again"
        ) from None


def _file_date(rel: str, text: str) -> str | None:
    if rel.rsplit("/", 1)[-1] == EVERGREEN_FILE:
        return None
    return chunking.front_matter_date(text) or date_from_name(rel)


def build_rows(rel: str, text: str, target: int) -> tuple[list[ChunkRow], list[tuple[str, int]]]:
    """Chunk a file and extract its facts (entry hashes with their line)."""
    import hashlib

    from memcli.notes import entries  # (with hashlib) not needed by searches, only by indexing

    facts: list[tuple[str, int]] = []
    line_types: dict[int, str] = {}
    line_tags: dict[int, list[str]] = {}
    fact_key = entries.fact_key
    for body, kind, tags, _time, line, _end in entries.entry_fields(text):
        facts.append((fact_key(body), line))
        if kind:
            line_types[line] = kind.lower()
        if tags:
            line_tags[line] = [t.lower() for t in tags]
    # lines that carry a type or tags, sorted, so each chunk looks up only its own range
    marked = sorted({*line_types, *line_tags})
    sha256 = hashlib.sha256
    rows = []
    for c in chunking.chunk_lines(chunking.split_lines(text), target):
        chunk_types = chunk_tags = ""
        if marked:
            lo = bisect.bisect_left(marked, c.start_line)
            hi = bisect.bisect_right(marked, c.end_line, lo)
            if lo < hi:
                span = marked[lo:hi]
                chunk_types = " ".join(sorted({line_types[n] for n in span if n in line_types}))
                chunk_tags = " ".join(
                    sorted({t for n in span if n in line_tags for t in line_tags[n]})
                )
        digest = sha256(c.text.encode("utf-8")).hexdigest()
        rows.append(
            ChunkRow(c.start_line, c.end_line, c.heading, c.text, chunk_types, chunk_tags, digest)
        )
    return rows, facts


class Parsed(NamedTuple):
    """A file read, hashed and parsed (no database): what a sync writes for it."""

    rel: str
    sha256: str | None
    rows: list[ChunkRow] | None  # None: binary file, or unreadable (see error)
    facts: list[tuple[str, int]] | None
    date: str | None
    warning: str | None
    error: str | None  # the file could not be read


def parse_file(rel: str, path: str, target: int) -> Parsed:
    import hashlib

    try:
        data, text, warning = read_text(path)
    except OSError as exc:
        return Parsed(rel, None, None, None, None, None, str(exc.strerror or exc))
    return parse_text(rel, hashlib.sha256(data).hexdigest(), text, warning, target)


def parse_text(rel: str, digest: str, text: str | None, warning: str | None, target: int) -> Parsed:
    """A file already read and hashed, parsed (``text`` None: a binary file)."""
    if text is None:
        return Parsed(rel, digest, None, None, None, warning, None)
    rows, facts = build_rows(rel, text, target)
    return Parsed(rel, digest, rows, facts, _file_date(rel, text), warning, None)


def parse_elsewhere(
    root: str, files: list[FoundFile], target: int
) -> Generator[Parsed, None, None]:
    """:func:`parse_file` of each file (found under the folder ``root``, which ends in a
    separator), in order, computed by a child Python process.

    The child gets only pipes (no inherited descriptors, so no lock of ours), reads lists of
    paths and answers with pickled :class:`Parsed` lists; at most ``_PARSE_WINDOW`` lists are
    in flight. If the child cannot start or dies, the rest is parsed here, so a file that
    breaks the parser fails the sync exactly as it would without the child.
    """
    import pickle

    jobs = [
        [(f.rel, root + f.rel) for f in files[i : i + _PARSE_CHUNK]]
        for i in range(0, len(files), _PARSE_CHUNK)
    ]
    done = 0
    proc = None
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", _PARSE_WORKER, str(target)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert proc.stdin is not None and proc.stdout is not None
        _widen_pipe(proc.stdout.fileno())
        sent = 0
        while sent < min(_PARSE_WINDOW, len(jobs)):
            pickle.dump(jobs[sent], proc.stdin)
            sent += 1
        proc.stdin.flush()
        while done < len(jobs):
            answer = pickle.load(proc.stdout)
            if sent < len(jobs):
                pickle.dump(jobs[sent], proc.stdin)
                proc.stdin.flush()
                sent += 1
            done += 1
            yield from answer
    except (OSError, EOFError, pickle.UnpicklingError, ValueError):
        pass  # the child is gone: parse the rest here
    finally:
        if proc is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()  # type: ignore[union-attr]
            if proc.poll() is None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=5)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    for chunk in jobs[done:]:
        for rel, path in chunk:
            yield parse_file(rel, path, target)


def _widen_pipe(fd: int) -> None:
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass  # not Linux, or over /proc/sys/fs/pipe-max-size: the default size works too


def _parse_worker() -> None:
    """The child of :func:`parse_elsewhere`: lists of (rel, path) in, Parsed lists out."""
    import pickle

    target = int(sys.argv[1])
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            chunk = pickle.load(stdin)
        except EOFError:
            return
        pickle.dump([parse_file(rel, path, target) for rel, path in chunk], stdout)
        stdout.flush()


class Indexer:
    """Incremental sync of one workspace into its store (caller holds the writer lock)."""

    def __init__(
        self,
        ws: Workspace,
        store: Store,
        settings: Settings,
        embedder: Embedder | None = None,
        writer: ProcessLock | None = None,
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
        self.settled: list[str] = []  # see dirty()
        self.writer = writer  # the writer lock, when the caller holds it (embed_pending)

    def scan(self) -> ScanResult:
        return scan(self.ws, self.include, self.max_bytes)

    def dirty(self, found: ScanResult | None = None) -> list[str]:
        """Paths whose (mtime_ns, size) differ from the index, plus deleted ones.

        Also sets :attr:`settled`: files recorded as racy whose content is unchanged and
        whose mtime is now old enough to be trusted; a sync records their real mtime, so
        later checks stop re-hashing them.
        """
        self.settled = []
        if found is None:
            if self.unchanged():
                return []
            found = self.scan()
        known = self.store.file_stats()
        out = []
        for rel, f in found.files.items():
            if known.get(rel) == (f.mtime_ns, f.size):
                continue
            if self._racy_but_same(rel, self.root + rel):
                if time.time_ns() - f.mtime_ns >= RACY_NS:
                    self.settled.append(rel)
                continue
            out.append(rel)
        out.extend(rel for rel in known if rel not in found.files)
        return sorted(out)

    def unchanged(self) -> bool:
        """The usual answer before a search, in memory that does not grow with the files:
        the files on disk and the known ones (indexed or skipped) are both read in path
        order and must agree row by row, stat included. Only the folders on the current
        path are held, and the first difference ends the walk."""
        found = iter_files(self.ws, self.include, self.max_bytes, [])
        return all(starmap(eq, zip_longest(found, self.store.iter_stats())))  # None pads

    def _racy_but_same(self, rel: str, path: str) -> bool:
        """A smudged (racy) entry whose content hash still matches is not dirty."""
        state = self.store.file_states_for([rel]).get(rel)
        if state is None or state.mtime_ns != SMUDGED:
            return False
        try:
            data = Path(path).read_bytes()
        except OSError:
            return False
        import hashlib

        return state.size == len(data) and state.sha256 == hashlib.sha256(data).hexdigest()

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
    ) -> IndexReport:
        """Bring the index in line with the files (all, or only ``paths``).

        With an embedding model configured (and ``embed``), chunks without vectors are then
        embedded; ``embed_limit`` skips that when more chunks wait (searches use it).
        """
        t0 = time.perf_counter()
        report = IndexReport()
        store = self.store
        if force or self.needs_rebuild():
            if not force and store.get_meta("chunking") is not None:
                report.warnings.append("chunking settings changed; rebuilding the index")
            paths = None  # a cleared index needs every file, not only the ones asked for
            with store.transaction():
                store.clear()
                store.set_meta("chunking", chunk_params(self.settings))
        found = self.scan()
        report.warnings.extend(found.warnings)
        known = store.file_states()
        skipped = store.skipped()
        wanted = _selector(paths)
        # a skipped (binary) file is read again only when its stat changes
        todo = [
            f
            for rel, f in sorted(found.files.items())
            if wanted(rel) and skipped.get(rel, (None, None))[:2] != (f.mtime_ns, f.size)
        ]
        gone = [k for rel, k in known.items() if rel not in found.files and wanted(rel)]
        unskip = [rel for rel in skipped if rel not in found.files and wanted(rel)]
        total = len(todo) + len(gone)
        done = 0
        batch = batch_bytes = 0
        bulk = not known and len(todo) >= BULK_FILES
        parsed: Generator[Parsed, None, None] | None = None
        store.conn.execute("BEGIN IMMEDIATE")
        try:
            store.ensure_bulk_indexes()  # a bulk load that crashed left them out
            if bulk:
                store.drop_bulk_indexes()
            if bulk and _parallel(todo):
                parsed = parse_elsewhere(self.root, todo, self.target)
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
                    store.conn.execute("COMMIT")
                    store.conn.execute("BEGIN IMMEDIATE")
                    batch = batch_bytes = 0
                if progress:
                    progress(done, total)
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
            store.set_meta("last_indexed", str(time.time()))
            store.conn.execute("COMMIT")
        except BaseException:
            store.conn.execute("ROLLBACK")
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
        if parsed.rows is None or parsed.facts is None or parsed.sha256 is None:
            if known is not None:
                self.store.remove_file(known.id)
                report.removed += 1
            reason = (parsed.warning or "not indexed").removeprefix("skipped: ")
            self.store.set_skipped(f.rel, _recorded_mtime(f.mtime_ns), f.size, reason)
            return
        self.store.write_file(
            f.rel,
            mtime_ns=_recorded_mtime(f.mtime_ns),
            size=f.size,
            sha256=parsed.sha256,
            date=parsed.date,
            source=source_of(f.rel),
            evergreen=parsed.date is None,
            chunks=parsed.rows,
            facts=parsed.facts,
            file_id=known.id if known is not None else None,
        )
        report.changed.append(f.rel)
        if known is None:
            report.added += 1
        else:
            report.updated += 1

    def _sync_file(self, f: FoundFile, known: FileState | None, report: IndexReport) -> None:
        if known is not None and (known.mtime_ns, known.size) == (f.mtime_ns, f.size):
            report.unchanged += 1
            return
        try:
            data, text, warning = read_text(self.root + f.rel)
        except OSError as exc:
            report.warnings.append(f"{f.rel}: skipped: {exc.strerror or exc}")
            return
        import hashlib

        digest = hashlib.sha256(data).hexdigest()
        if known is not None and known.sha256 == digest:
            if known.mtime_ns != _recorded_mtime(f.mtime_ns) or known.size != f.size:
                self.store.touch_file(known.id, _recorded_mtime(f.mtime_ns), f.size)
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
