"""The one place that picks a SQLite driver and loads sqlite-vec.

The stdlib ``sqlite3`` is used when it can load extensions; otherwise the
drop-in ``sqlean`` driver (a SQLite build with extension loading) is used.
Keyword search never needs an extension, so it works either way.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any

BUSY_TIMEOUT_MS = 15000


@lru_cache(maxsize=1)
def driver() -> ModuleType:
    """The DB-API module memcli uses: stdlib sqlite3 or sqlean."""
    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3
    try:
        import sqlean  # type: ignore[import-untyped]
    except ImportError:
        return sqlite3
    module: ModuleType = sqlean
    return module


def driver_name() -> str:
    mod = driver()
    return "sqlite3" if mod is sqlite3 else mod.__name__


#: One forward schema step, run inside the migrating transaction.
Migration = Callable[[Any], None]


def connect(path: Path | str, *, readonly: bool = False, new_file: Sequence[str] = ()) -> Any:
    """Open a connection with WAL, a busy timeout and autocommit off by default.

    ``new_file``: pragmas that only take effect before a new file is first written (such as
    ``auto_vacuum``), set on a plain connection first when ``path`` does not exist yet.
    """
    mod = driver()
    if new_file and not readonly and not Path(path).exists():
        first = mod.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            for pragma in new_file:
                first.execute(f"PRAGMA {pragma}")
            first.execute("PRAGMA journal_mode = WAL")
        finally:
            first.close()
    if readonly:
        conn = mod.connect(
            f"file:{Path(path).as_posix()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000
        )
    else:
        conn = mod.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000)
    conn.isolation_level = None  # explicit BEGIN/COMMIT
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if not readonly:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def user_version(conn: Any) -> int:
    """The number of migrations applied to the database (``PRAGMA user_version``)."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: Any, migrations: Sequence[Migration], finish: Migration | None = None) -> int:
    """Apply the migrations not yet applied, in one write transaction, and return the version.

    ``PRAGMA user_version`` counts the migrations applied; it is read again inside the write
    lock, since another process may have migrated meanwhile. A database newer than
    ``migrations`` keeps its version. ``finish`` runs last, in the same transaction.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        current = user_version(conn)
        for step in migrations[current:]:
            step(conn)
        version = max(current, len(migrations))
        conn.execute(f"PRAGMA user_version = {version}")
        if finish is not None:
            finish(conn)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return version


def remove_files(
    path: Path | str, ignore: tuple[type[OSError], ...] = (FileNotFoundError,)
) -> None:
    """Delete a database file and its WAL, SHM and journal side files; a failure of a kind in
    ``ignore`` (by default: the file is missing) skips that file."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(f"{path}{suffix}")
        except ignore:
            pass


def _errors(name: str) -> tuple[type[BaseException], ...]:
    """Exception class ``name`` of every driver in use (each driver has its own classes)."""
    mod = driver()
    errs: tuple[type[BaseException], ...] = (getattr(sqlite3, name),)
    if mod is not sqlite3:
        errs += (getattr(mod, name),)
    return errs


def database_errors() -> tuple[type[BaseException], ...]:
    return _errors("DatabaseError")


def operational_errors() -> tuple[type[BaseException], ...]:
    return _errors("OperationalError")


def load_vec(conn: Any) -> str | None:
    """Load sqlite-vec into ``conn``; return None on success, else why it failed."""
    if not hasattr(conn, "enable_load_extension"):
        return "this Python's sqlite3 cannot load extensions and sqlean is not installed"
    try:
        import sqlite_vec  # type: ignore[import-untyped]
    except ImportError:
        return "the sqlite-vec package is not installed"
    try:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
    except Exception as exc:  # driver-specific error classes
        return f"sqlite-vec failed to load: {exc}"
    return None


def sqlite_version() -> str:
    return str(driver().sqlite_version)
