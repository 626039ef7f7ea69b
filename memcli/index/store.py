"""The SQLite index: opening and migrating it, and the SQL about files and chunks (the batched
write of files in :mod:`memcli.index.filewrites`, the rows about facts and their links in
:mod:`memcli.index.factrows`)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, NamedTuple

from memcli.errors import IndexProblem
from memcli.index import db
from memcli.index.bookkeeping import index_id
from memcli.index.filewrites import FileWrite, write_files
from memcli.index.parallel_rank import SecondReader
from memcli.index.schema import (
    APP_ID,
    INDEX_ID,
    MIGRATIONS,
    READABLE_FROM,
    SCHEMA_VERSION,
    stamp,
)
from memcli.index.seal import SEAL, UntrustedIndex, untrusted, write_seal


class FileState(NamedTuple):
    id: int
    path: str
    mtime_ns: int
    size: int
    sha256: str


class Store:
    """A connection to ``index.db`` with the schema applied."""

    def __init__(self, path: Path, conn: Any) -> None:
        self.path = path
        self.conn = conn
        self.vec_loaded: bool = False
        self.vec_error: str | None = None
        self.identity: tuple[int, int] | None = None  # (device, inode) of the file opened
        #: Why the index cannot be written, when it was opened read-only (it answers as it
        #: is and is never synced); empty for a writable index.
        self.readonly = ""
        #: A second connection for large keyword queries (:mod:`memcli.index.parallel_rank`).
        self.second: SecondReader | None = None
        self._freqs: dict[str, int] = {}
        self._freqs_of: tuple[int, bytes] | None = None
        #: Score bounds of common terms (:class:`memcli.search.bounds.TermBounds`), set by
        #: the engine: keyword queries then score only the chunks that can rank.
        self.bounds: Any = None
        #: The file's random id (memcli.index.bookkeeping.index_id), read when it was opened.
        self.index_id: str | None = None

    # -- opening -------------------------------------------------------
    @classmethod
    def open(cls, path: Path) -> Store:
        """Open (creating and migrating as needed). Raises db errors on corruption."""
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = db.connect(path)
        store = cls(path, conn)
        try:
            st = os.stat(path)
            store.identity = (st.st_dev, st.st_ino)
            store._migrate()
            store.index_id = index_id(conn)
        except BaseException:
            conn.close()
            raise
        return store

    @classmethod
    def open_readonly(cls, path: Path) -> Store:
        """Open an index that cannot be written, to read it as it is (no migration); raises
        db errors when it cannot be read either, IndexProblem when its schema is not one this
        memcli reads (:data:`memcli.index.schema.READABLE_FROM` and up)."""
        failure: BaseException | None = None
        for immutable in (False, True):  # without WAL side files when they cannot be made
            try:
                conn = db.connect(path, readonly=True, immutable=immutable)
            except db.database_errors() as exc:
                failure = exc
                continue
            store = cls(path, conn)
            store.readonly = "read-only"
            try:
                version = db.user_version(conn)
                objects = conn.execute("SELECT type, name FROM sqlite_master").fetchall()
                marks = store._marks()
            except db.database_errors() as exc:
                conn.close()
                failure = exc
                continue
            if marks.get("app") != APP_ID or not READABLE_FROM <= version <= SCHEMA_VERSION:
                conn.close()
                raise IndexProblem(f"index {path} is not this memcli's (schema {version})")
            why = untrusted(objects, marks)
            if why is not None:
                conn.close()
                raise UntrustedIndex(f"index {path} {why}")
            st = os.stat(path)
            store.identity = (st.st_dev, st.st_ino)
            store.index_id = index_id(conn)
            return store
        assert failure is not None
        raise failure

    def _migrate(self) -> None:
        conn = self.conn
        # One read transaction: another process may be creating the schema right now, and
        # reading the version and the tables apart could see a half and call it foreign.
        conn.execute("BEGIN")
        try:
            version = db.user_version(conn)
            objects = conn.execute("SELECT type, name FROM sqlite_master").fetchall()
            marks = self._marks() if ("table", "meta") in objects else {}
        except BaseException:
            with suppress(Exception):
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        if objects and marks.get("app") != APP_ID:
            raise ForeignIndex(f"{self.path} is not a memcli index")
        if objects and version <= SCHEMA_VERSION:  # a newer memcli's objects are its own
            why = untrusted(objects, marks)
            if why is not None:
                raise UntrustedIndex(f"index {self.path} {why}")
        if version > SCHEMA_VERSION:
            raise IndexProblem(
                f"index {self.path} has schema {version},"
                f" newer than this memcli ({SCHEMA_VERSION})",
                hint="upgrade memcli, or delete the .memcli folder to rebuild the index",
            )
        if version < SCHEMA_VERSION:
            db.migrate(conn, MIGRATIONS, _finish)

    def _marks(self) -> dict[str, str]:
        """What the ``meta`` table says of the file itself: the app that made it, its random
        id and its seal (none of them when ``meta`` has another shape)."""
        try:
            rows = self.conn.execute(
                "SELECT key, value FROM meta WHERE key IN ('app', ?, ?)", (INDEX_ID, SEAL)
            ).fetchall()
        except db.operational_errors():  # a 'meta' table of another shape
            return {}
        return {str(k): str(v) for k, v in rows}

    def close(self) -> None:
        if self.second is not None:
            self.second.close()
            self.second = None
        self.conn.close()

    def term_freqs(self) -> dict[str, int]:
        """Document frequencies of query terms learnt by earlier searches on this connection,
        for a long-lived one (the engine); emptied whenever the full-text index changed: by
        another connection (SQLite's data version) or this one (FTS5's structure record,
        which every write to the index rewrites)."""
        row = self.conn.execute("SELECT block FROM chunks_fts_data WHERE id = 10").fetchone()
        version = (
            int(self.conn.execute("PRAGMA data_version").fetchone()[0]),
            bytes(row[0]) if row and row[0] is not None else b"",
        )
        if version != self._freqs_of:
            self._freqs.clear()
            self._freqs_of = version
        return self._freqs

    def second_reader(self) -> SecondReader:
        """The index's second connection, on its own thread (opened on first use)."""
        if self.second is None:
            self.second = SecondReader(self.path)
        return self.second

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            db.rollback(self.conn)
            raise
        self.conn.execute("COMMIT")

    # -- meta ----------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- vectors -------------------------------------------------------
    def knows(self, rel: str) -> bool:
        """Whether the index holds the file ``rel``, or files under the folder ``rel``."""
        prefix = rel.rstrip("/") + "/"
        row = self.conn.execute(
            "SELECT 1 FROM files WHERE path = ? OR substr(path, 1, ?) = ? LIMIT 1",
            (rel, len(prefix), prefix),
        ).fetchone()
        return row is not None

    def has_table(self, name: str) -> bool:
        row = self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone()
        return row is not None

    def ensure_vec(self) -> bool:
        """Load sqlite-vec once; False (and ``vec_error``) when it cannot load."""
        if not self.vec_loaded and self.vec_error is None:
            self.vec_error = db.load_vec(self.conn)
            self.vec_loaded = self.vec_error is None
        return self.vec_loaded

    def _delete_vectors(self, file_id: int | None) -> None:
        """Delete vectors of a file's chunks (None: all) about to go; without sqlite-vec, flag
        them for a purge (memcli.index.vectors.purge_orphans)."""
        if not self.has_table("chunks_vec"):
            return
        if not self.ensure_vec():
            self.set_meta("vec_dirty", "1")
        elif file_id is None:
            # dropping is instant where deleting 100k vec0 rows takes seconds; the next
            # back-fill creates the table again (from the embedding cache)
            self.conn.execute("DROP TABLE chunks_vec")
        else:
            # one point delete per chunk: vec0 answers 'rowid IN (...)' with a full scan
            ids = self.conn.execute("SELECT id FROM chunks WHERE file_id = ?", (file_id,))
            self.conn.executemany("DELETE FROM chunks_vec WHERE rowid = ?", ids.fetchall())

    # -- files ---------------------------------------------------------
    def file_states(self) -> dict[str, FileState]:
        rows = self.conn.execute("SELECT id, path, mtime_ns, size, sha256 FROM files")
        return {r[1]: FileState(*r) for r in rows}

    def file_states_for(self, paths: list[str]) -> dict[str, FileState]:
        out: dict[str, FileState] = {}
        for start in range(0, len(paths), 500):
            part = paths[start : start + 500]
            rows = self.conn.execute(
                "SELECT id, path, mtime_ns, size, sha256 FROM files"
                f" WHERE path IN ({','.join('?' * len(part))})",
                part,
            )
            out.update((r[1], FileState(*r)) for r in rows)
        return out

    def iter_stats(self) -> Iterator[tuple[str, int, int]]:
        """(path, mtime_ns, size) of every known file (indexed or skipped), row by row in
        path order (SQLite merges the two tables' path indexes: no sort, nothing held)."""
        return iter(
            self.conn.execute(
                "SELECT path, mtime_ns, size FROM files UNION ALL"
                " SELECT path, mtime_ns, size FROM skipped ORDER BY 1"
            )
        )

    def recent_files(self, limit: int) -> list[tuple[str, int, int]]:
        """(path, mtime_ns, size) of the files recorded as changed last (and the racy ones,
        recorded with mtime 0), at most ``limit`` of each."""
        rows = self.conn.execute(
            "SELECT * FROM (SELECT path, mtime_ns, size FROM files ORDER BY mtime_ns DESC LIMIT ?)"
            " UNION SELECT path, mtime_ns, size FROM files WHERE mtime_ns = 0",
            (limit,),
        ).fetchall()
        return [(r[0], int(r[1]), int(r[2])) for r in rows]

    def folder_stats(self, folder: str) -> dict[str, tuple[int, int]]:
        """Path -> (mtime_ns, size) of the known files (indexed or skipped) directly in the
        workspace-relative ``folder`` ('' for the workspace's own)."""
        if folder:
            head = folder + "/"
            where = "path >= ? AND path < ? AND instr(substr(path, ?), '/') = 0"
            args: tuple[Any, ...] = (head, folder + "0", len(head) + 1) * 2  # '0' follows '/'
        else:
            where, args = "instr(path, '/') = 0", ()
        rows = self.conn.execute(
            f"SELECT path, mtime_ns, size FROM files WHERE {where}"
            f" UNION ALL SELECT path, mtime_ns, size FROM skipped WHERE {where}",
            args,
        )
        return {r[0]: (int(r[1]), int(r[2])) for r in rows}

    def known_folders(self) -> set[str]:
        """Workspace-relative folders holding a known file (indexed or skipped)."""
        rows = self.conn.execute("SELECT path FROM files UNION ALL SELECT path FROM skipped")
        return {r[0].rpartition("/")[0] for r in rows}

    def file_stats(self) -> dict[str, tuple[int, int]]:
        """Path -> (mtime_ns, size) of every known file (indexed or skipped)."""
        return {path: (mtime_ns, size) for path, mtime_ns, size in self.iter_stats()}

    # -- skipped files -------------------------------------------------
    def skipped(self) -> dict[str, tuple[int, int, str]]:
        """Path -> (mtime_ns, size, reason) of files seen but not indexed."""
        rows = self.conn.execute("SELECT path, mtime_ns, size, reason FROM skipped")
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def set_skipped(self, path: str, mtime_ns: int, size: int, reason: str) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO skipped VALUES (?, ?, ?, ?)", (path, mtime_ns, size, reason)
        )

    def unskip(self, path: str) -> None:
        self.conn.execute("DELETE FROM skipped WHERE path = ?", (path,))

    def touch_file(self, file_id: int, mtime_ns: int, size: int) -> None:
        self.conn.execute(
            "UPDATE files SET mtime_ns = ?, size = ? WHERE id = ?", (mtime_ns, size, file_id)
        )

    def _delete_file_rows(self, file_id: int) -> None:
        ids = "SELECT id FROM chunks WHERE file_id = ?"
        self.conn.execute(f"DELETE FROM chunks_fts WHERE rowid IN ({ids})", (file_id,))
        self._delete_vectors(file_id)
        self.conn.execute("DELETE FROM chunks WHERE file_id = ?", (file_id,))
        self.conn.execute("DELETE FROM facts WHERE file_id = ?", (file_id,))
        self.conn.execute("DELETE FROM links WHERE file_id = ?", (file_id,))

    def remove_file(self, file_id: int) -> None:
        self._delete_file_rows(file_id)
        self.conn.execute("DELETE FROM files WHERE id = ?", (file_id,))

    def write_files(self, writes: Sequence[FileWrite]) -> list[int]:
        """Insert or replace many files with all their chunks and facts (inside the caller's
        write transaction); their file ids, in order (:mod:`memcli.index.filewrites`)."""
        return write_files(self.conn, writes, self._delete_file_rows)

    def drop_bulk_indexes(self) -> None:
        """Drop the secondary indexes before a bulk load (inside the caller's transaction).

        Rows then go in without a random B-tree insert each (facts are keyed by a hash), and
        :meth:`ensure_bulk_indexes` builds each index in one sorted pass at the end: about a
        tenth of a 10k-file cold index. Until then lookups by hash or file scan the table.
        """
        for name in BULK_INDEXES:
            self.conn.execute(f"DROP INDEX IF EXISTS {name}")

    def fts_hash_size(self, size: int) -> None:
        """Set how much FTS5 holds in memory before it writes a segment (a bulk load raises it
        for its transaction: fewer, larger segments to merge; the rows are the same)."""
        self.conn.execute(
            "INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('hashsize', ?)", (int(size),)
        )

    def ensure_bulk_indexes(self) -> None:
        """Create any secondary index a bulk load dropped (a no-op when they exist)."""
        for sql in BULK_INDEXES.values():
            self.conn.execute(sql)

    def clear(self) -> None:
        """Remove every indexed row (a full rebuild follows), inside the caller's transaction.

        The tables are dropped and made again from their own statements in the schema (with
        their indexes), not emptied: FTS5 deletes row by row, tokenising each text again to
        remove its terms, which took a quarter of a forced rebuild at 10k files."""
        conn = self.conn
        self._delete_vectors(None)
        rows = conn.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL"
            f" AND (tbl_name IN ({','.join('?' * len(CLEARED))}) OR name = 'chunks_fts')",
            CLEARED,
        ).fetchall()
        tables = {name: sql for kind, name, _, sql in rows if kind == "table"}
        indexes = [sql for kind, _, _, sql in rows if kind == "index"]
        # children first: dropping a parent with foreign keys on deletes its children's rows
        for name in ("chunks_fts", *reversed(CLEARED)):
            if name in tables:
                conn.execute(f"DROP TABLE {name}")
        for name in (*CLEARED, "chunks_fts"):
            if name in tables:
                conn.execute(tables[name])
        for sql in indexes:
            conn.execute(sql)

    def scrub(self) -> bool:
        """Leave no trace of deleted text in the file (``forget --purge``): FTS5's segments
        merged into one, which drops the terms of deleted rows, then the file rebuilt without
        free pages or slack (VACUUM) and the WAL emptied. Seconds on a large index. False when
        another process's read kept the WAL from being emptied (the old pages then leave at a
        later checkpoint)."""
        self.conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('optimize')")
        self.conn.execute("VACUUM")
        busy = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        return not busy

    # -- reads ---------------------------------------------------------
    def has_files(self, n: int) -> bool:
        """Whether ``n`` files or more are known (indexed or skipped); counts no further."""
        row = self.conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM files UNION ALL SELECT 1 FROM skipped LIMIT ?)",
            (n,),
        ).fetchone()
        return int(row[0]) >= n

    def counts(self) -> tuple[int, int]:
        files = self.conn.execute("SELECT count(*) FROM files").fetchone()[0]
        chunks = self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        return int(files), int(chunks)

    def list_files(self) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "SELECT f.path, f.source, f.date, f.evergreen, f.size, f.indexed_at,"
            " (SELECT count(*) FROM chunks c WHERE c.file_id = f.id)"
            " FROM files f ORDER BY f.path"
        )
        return [
            {
                "path": r[0],
                "source": r[1],
                "date": r[2],
                "evergreen": bool(r[3]),
                "size": r[4],
                "indexed_at": r[5],
                "chunks": r[6],
            }
            for r in rows
        ]


#: Secondary indexes of migration 1 that a bulk load drops and re-creates (see
#: :meth:`Store.drop_bulk_indexes`); the statements must match the schema's.
BULK_INDEXES = {
    "chunks_file": "CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file_id)",
    "facts_hash": "CREATE INDEX IF NOT EXISTS facts_hash ON facts(hash)",
    "facts_file": "CREATE INDEX IF NOT EXISTS facts_file ON facts(file_id)",
}


#: FTS5's default for 'hashsize' (what a bulk load sets back) and what a bulk load uses: at
#: 108,859 chunks 8 MiB took about a fifth less CPU than 1 MiB (and than 32 MiB).
FTS_HASH_BYTES = 1024 * 1024
BULK_FTS_HASH_BYTES = 8 * 1024 * 1024


class ForeignIndex(Exception):
    """The file is a SQLite database, but not a memcli index."""


def _finish(conn: Any) -> None:
    """The last step of every migration: the file marked as a memcli index, and sealed as
    this user's (:mod:`memcli.index.seal`)."""
    stamp(conn)
    write_seal(conn)


def remove_index_files(path: Path) -> None:
    """Delete an index and its WAL/SHM side files (a folder in its place too: ``.memcli``
    holds derived data only)."""
    if path.is_dir() and not path.is_symlink():
        import shutil  # only a folder where the index should be needs it

        shutil.rmtree(path)
    db.remove_files(path)


#: The tables :meth:`Store.clear` drops and makes again, parents before children (``chunks_fts``
#: too, after them).
CLEARED = ("files", "skipped", "chunks", "facts", "links", "link_paths")
