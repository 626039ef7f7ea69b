"""The global embedding cache: one SQLite file shared by every workspace of a user.

Vectors are keyed by (embedding fingerprint, sha256 of the text), so
rebuilding an index, re-cloning a repository or indexing the same text in a second workspace
costs no provider call. The file lives in the user cache dir (``MEMCLI_CACHE_DIR`` overrides).

Several processes may use it at once: WAL mode, a busy timeout and short write transactions.
Its size is bounded by the ``cache.max_mb`` setting; the least recently used vectors are evicted
first. The cache is an optimisation only: when it cannot be opened or written, embedding goes on
without it and the reason is kept in :attr:`EmbedCache.error` for a warning.
"""

from __future__ import annotations

import os
import struct
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from memcli.config import cache_dir
from memcli.index import db

CACHE_FILE = "embeddings.db"
#: Rows read or written per statement (keeps SQL parameter lists short).
_STEP = 400
#: ``used`` is refreshed on a hit only when older than this many seconds (saves writes).
_TOUCH_AFTER = 60
#: Eviction frees down to this fraction of the bound, so it does not run on every write.
_EVICT_TO = 0.9
#: Per-row overhead added to the vector size when accounting (key, index entries, header).
_ROW_OVERHEAD = 64


def cache_path() -> Path:
    return cache_dir() / CACHE_FILE


def pack(vector: Sequence[float]) -> bytes:
    """A vector as little-endian float32 (the layout sqlite-vec reads)."""
    return struct.pack(f"<{len(vector)}f", *vector)


def unpack(blob: bytes) -> list[float]:
    return list(struct.unpack(f"<{len(blob) // 4}f", blob))


class EmbedCache:
    """Get and put vectors by (fingerprint, text hash); LRU-bounded to ``max_bytes``."""

    def __init__(
        self,
        path: Path | None = None,
        max_bytes: int = 512 * 1024 * 1024,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = path or cache_path()
        self.max_bytes = max(0, int(max_bytes))
        self.clock = clock
        #: The latest problem, for one warning (drained by the reader); ``disabled`` stays.
        self.error: str | None = None
        self.disabled = False
        self.warnings: list[str] = []
        self._conn: Any = None
        self._models: dict[str, int] = {}
        self._replaced = False  # a damaged file was replaced by this object already

    # -- connection ----------------------------------------------------
    def _connect(self) -> Any:
        """The connection, opened (and created, or rebuilt if corrupt) on first use."""
        if self._conn is not None or self.disabled:
            return self._conn
        self.disabled = True  # until the open below succeeds
        try:
            self._conn = self._open()
            self.disabled = False
        except _NewerCache as exc:
            self.error = f"embedding cache {self.path} not used: {exc}"
        except db.database_errors() as exc:
            if _is_busy(exc):
                self.error = f"embedding cache {self.path} is busy ({exc})"
                return None
            self.warnings.append(
                f"embedding cache {self.path} was unreadable ({exc}); started a new one"
            )
            db.remove_files(self.path, ignore=(OSError,))
            failures: tuple[type[BaseException], ...] = (OSError, *db.database_errors())
            try:
                self._conn = self._open()
                self.disabled = False
            except failures as exc2:
                self.error = f"embedding cache {self.path} cannot be created ({exc2})"
        except OSError as exc:
            self.error = f"embedding cache {self.path} cannot be created ({exc.strerror or exc})"
        return self._conn

    def _open(self) -> Any:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # auto_vacuum is fixed when the file is first written (before WAL mode is set), so it is
        # chosen for a new file only; eviction then gives space back cheaply.
        conn = db.connect(self.path, new_file=("auto_vacuum = INCREMENTAL",))
        try:
            version = db.user_version(conn)
            if version < SCHEMA_VERSION:
                version = db.migrate(conn, _MIGRATIONS)
            if version != SCHEMA_VERSION:
                raise _NewerCache(f"cache schema {version} is newer than this memcli")
            conn.execute("SELECT count(*) FROM models").fetchone()
        except BaseException:
            conn.close()
            raise
        return conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _model_id(self, conn: Any, fingerprint: str, create: bool) -> int | None:
        if fingerprint in self._models:
            return self._models[fingerprint]
        row = conn.execute("SELECT id FROM models WHERE fingerprint = ?", (fingerprint,)).fetchone()
        if row is None:
            if not create:
                return None
            conn.execute("INSERT OR IGNORE INTO models (fingerprint) VALUES (?)", (fingerprint,))
            row = conn.execute(
                "SELECT id FROM models WHERE fingerprint = ?", (fingerprint,)
            ).fetchone()
        self._models[fingerprint] = int(row[0])
        return int(row[0])

    # -- reads and writes ------------------------------------------------
    def get_many(self, fingerprint: str, hashes: Iterable[str]) -> dict[str, list[float]]:
        """Cached vectors for those text hashes (hex sha256); misses are simply absent."""
        conn = self._connect()
        wanted = list(dict.fromkeys(hashes))
        if conn is None or not wanted:
            return {}
        found: dict[str, list[float]] = {}
        stale: list[int] = []
        now = int(self.clock())
        try:
            model = self._model_id(conn, fingerprint, create=False)
            if model is None:
                return {}
            for start in range(0, len(wanted), _STEP):
                part = [bytes.fromhex(h) for h in wanted[start : start + _STEP]]
                marks = ",".join("?" * len(part))
                rows = conn.execute(
                    f"SELECT id, hash, used, vector FROM embeddings"
                    f" WHERE model = ? AND hash IN ({marks})",
                    (model, *part),
                )
                for row_id, key, used, blob in rows:
                    found[bytes(key).hex()] = unpack(bytes(blob))
                    if used < now - _TOUCH_AFTER:
                        stale.append(int(row_id))
            if stale:
                self._touch(conn, stale, now)
        except db.database_errors() as exc:
            self._failed("read", exc)
        return found

    def _touch(self, conn: Any, ids: list[int], now: int) -> None:
        """Mark hits as recently used; skipped (not an error) when the cache is busy."""
        try:
            conn.execute("BEGIN IMMEDIATE")
        except db.operational_errors():
            return
        try:
            for start in range(0, len(ids), _STEP):
                part = ids[start : start + _STEP]
                conn.execute(
                    f"UPDATE embeddings SET used = ? WHERE id IN ({','.join('?' * len(part))})",
                    (now, *part),
                )
            conn.execute("COMMIT")
        except BaseException:
            db.rollback(conn)
            raise

    def put_many(self, fingerprint: str, items: Iterable[tuple[str, Sequence[float]]]) -> None:
        """Store vectors (replacing any under the same key), then evict down to the bound."""
        conn = self._connect()
        rows = [(bytes.fromhex(h), pack(v)) for h, v in items]
        if conn is None or not rows:
            return
        now = int(self.clock())
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                model = self._model_id(conn, fingerprint, create=True)
                conn.executemany(
                    "INSERT INTO embeddings (model, hash, used, size, vector)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (model, hash) DO UPDATE SET"
                    " used = excluded.used, size = excluded.size, vector = excluded.vector",
                    [(model, key, now, len(blob) + _ROW_OVERHEAD, blob) for key, blob in rows],
                )
                evicted = self._evict(conn)
                conn.execute("COMMIT")
            except BaseException:
                db.rollback(conn)
                self._models.clear()
                raise
            if evicted:
                conn.execute("PRAGMA incremental_vacuum")
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except db.database_errors() as exc:
            self._failed("write", exc)

    def _evict(self, conn: Any) -> int:
        """Delete least recently used rows while the total size exceeds the bound."""
        total = conn.execute("SELECT bytes FROM totals").fetchone()[0]
        if total <= self.max_bytes:
            return 0
        goal = total - int(self.max_bytes * _EVICT_TO)
        victims: list[int] = []
        freed = 0
        for row_id, size in conn.execute("SELECT id, size FROM embeddings ORDER BY used, id"):
            victims.append(int(row_id))
            freed += int(size)
            if freed >= goal:
                break
        for start in range(0, len(victims), _STEP):
            part = victims[start : start + _STEP]
            conn.execute(f"DELETE FROM embeddings WHERE id IN ({','.join('?' * len(part))})", part)
        return len(victims)

    def _failed(self, what: str, exc: BaseException) -> None:
        """Remember a failure; the caller continues without the cache. A damaged file is
        replaced by a new, empty cache (once per process, with a warning): it holds only
        vectors that can be computed again."""
        if not db.is_corruption(exc) or self._replaced:
            self.error = f"embedding cache {what} failed ({exc})"
            return
        self._replaced = True
        self.close()
        self._models.clear()
        try:
            db.remove_files(self.path)
        except OSError as err:
            self.error = f"embedding cache {self.path} is damaged ({exc}) and cannot be removed"
            self.error += f" ({err.strerror or err})"
            self.disabled = True
            return
        self.warnings.append(f"embedding cache {self.path} was damaged ({exc}); started a new one")

    # -- reporting -------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        """``{path, bytes, entries}`` without creating the file when it does not exist."""
        return cache_stats(self.path)


def cache_stats(path: Path | None = None, *, check: bool = False) -> dict[str, Any]:
    """Size on disk (database plus WAL) and number of cached vectors; with ``check``, also
    ``damage``: why the file is unreadable or damaged (SQLite's ``quick_check``), or None."""
    path = path or cache_path()
    size = 0
    for suffix in ("", "-wal"):
        try:
            size += os.stat(f"{path}{suffix}").st_size
        except OSError:
            pass
    entries = 0
    damage: str | None = None
    if path.exists():
        try:
            conn = db.connect(path, readonly=True)
            try:
                entries = int(conn.execute("SELECT count(*) FROM embeddings").fetchone()[0])
                if check:
                    found = [r[0] for r in conn.execute("PRAGMA quick_check(3)")]
                    damage = None if found == ["ok"] else "; ".join(found)
            finally:
                conn.close()
        except db.database_errors() as exc:
            entries = 0
            damage = str(exc)
    stats: dict[str, Any] = {"path": str(path), "bytes": size, "entries": entries}
    if check:
        stats["damage"] = damage
    return stats


def _m001_tables(conn: Any) -> None:
    conn.execute("CREATE TABLE models (id INTEGER PRIMARY KEY, fingerprint TEXT NOT NULL UNIQUE)")
    conn.execute(
        "CREATE TABLE embeddings ("
        " id INTEGER PRIMARY KEY,"
        " model INTEGER NOT NULL REFERENCES models(id),"
        " hash BLOB NOT NULL,"
        " used INTEGER NOT NULL,"
        " size INTEGER NOT NULL,"
        " vector BLOB NOT NULL,"
        " UNIQUE (model, hash))"
    )
    conn.execute("CREATE INDEX embeddings_lru ON embeddings(used, size)")


def _m002_totals(conn: Any) -> None:
    """A running total kept by triggers: the size check after each write reads one row."""
    conn.execute(
        "CREATE TABLE totals (id INTEGER PRIMARY KEY CHECK (id = 1),"
        " bytes INTEGER NOT NULL, entries INTEGER NOT NULL)"
    )
    conn.execute("INSERT INTO totals SELECT 1, coalesce(sum(size), 0), count(*) FROM embeddings")
    conn.execute(
        "CREATE TRIGGER embeddings_added AFTER INSERT ON embeddings BEGIN"
        " UPDATE totals SET bytes = bytes + NEW.size, entries = entries + 1; END"
    )
    conn.execute(
        "CREATE TRIGGER embeddings_removed AFTER DELETE ON embeddings BEGIN"
        " UPDATE totals SET bytes = bytes - OLD.size, entries = entries - 1; END"
    )
    conn.execute(
        "CREATE TRIGGER embeddings_changed AFTER UPDATE OF size ON embeddings BEGIN"
        " UPDATE totals SET bytes = bytes - OLD.size + NEW.size; END"
    )


#: Forward migrations; ``PRAGMA user_version`` is the number applied.
_MIGRATIONS: list[db.Migration] = [_m001_tables, _m002_totals]
SCHEMA_VERSION = len(_MIGRATIONS)


class _NewerCache(Exception):
    """The cache file was written by a newer memcli (left alone, not used)."""


def _is_busy(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text
