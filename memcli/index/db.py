"""The one place that picks a SQLite driver and loads sqlite-vec.

The stdlib ``sqlite3`` is used when it can load extensions; otherwise the
drop-in ``sqlean`` driver (a SQLite build with extension loading) is used.
Keyword search never needs an extension, so it works either way.
"""

from __future__ import annotations

import importlib.util
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


def connect(
    path: Path | str,
    *,
    readonly: bool = False,
    immutable: bool = False,
    new_file: Sequence[str] = (),
) -> Any:
    """Open a connection with WAL, a busy timeout and autocommit off by default.

    ``new_file``: pragmas that only take effect before a new file is first written (such as
    ``auto_vacuum``), set on a plain connection first when ``path`` does not exist yet.
    ``immutable`` (read-only only): read the file as it is, without the WAL side files,
    which a folder that cannot be written cannot hold.
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
        from urllib.parse import quote  # a "?", "#" or "%" in a folder's name is not the URI's

        conn = mod.connect(
            f"file:{quote(Path(path).as_posix())}?mode=ro{'&immutable=1' if immutable else ''}",
            uri=True,
            timeout=BUSY_TIMEOUT_MS / 1000,
        )
    else:
        conn = mod.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000)
    conn.isolation_level = None  # explicit BEGIN/COMMIT
    harden(conn)  # the busy timeout is the connection's own (``timeout`` above)
    if not readonly:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


#: SQLITE_DBCONFIG_DEFENSIVE (sqlite3.h): no writes to shadow tables or the schema by plain
#: SQL, no ``PRAGMA writable_schema``, no journal turned off.
DBCONFIG_DEFENSIVE = 1010


def harden(conn: Any) -> bool:
    """SQLite's settings for a file memcli did not necessarily write: ``trusted_schema`` off
    (a trigger, a view or a column default in the file runs no function that is not marked
    innocuous), and defensive mode where the driver lets it be set (``setconfig``: the stdlib
    ``sqlite3`` of Python 3.12 and later; not the 3.11 one, nor sqlean.py 3.50). Whether
    defensive mode is on."""
    conn.execute("PRAGMA trusted_schema = OFF")
    setconfig = getattr(conn, "setconfig", None)
    if setconfig is None:
        return False
    setconfig(DBCONFIG_DEFENSIVE, True)
    return True


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
        rollback(conn)
        raise
    return version


def rollback(conn: Any) -> None:
    """Roll back the open transaction, unless SQLite has ended it already (it does after a
    full disk or an I/O error, and a second ROLLBACK would hide that error behind its own)."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


#: Primary result codes meaning the file is damaged: SQLITE_CORRUPT, SQLITE_NOTADB.
_CORRUPT_CODES = (11, 26)
#: Primary result codes meaning the file cannot be written (or created), with the cause a
#: user acts on: SQLITE_PERM, SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN.
_UNWRITABLE_CODES = {3: "read-only", 8: "read-only", 10: "I/O error", 13: "disk full", 14: ""}


def is_corruption(exc: BaseException) -> bool:
    """Whether an error reading or writing a database means the file itself is damaged (not
    busy, not full, not read-only): a malformed page, text that is not UTF-8, rows that break
    the schema's own constraints (an ``IntegrityError`` on a derived index)."""
    if isinstance(exc, UnicodeDecodeError):
        return True
    if not isinstance(exc, database_errors()):
        return False
    if isinstance(exc, _errors("IntegrityError")):
        return True
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in _CORRUPT_CODES:
        return True
    text = str(exc).lower()
    if "no such module" in text:  # sqlite-vec not loaded is not the file's fault; a garbled
        return "vec0" not in text  # module name in the schema (fts5 as ftsU) is
    return any(word in text for word in _DAMAGE_WORDS)


def quick_check(conn: Any) -> str | None:
    """What SQLite's ``quick_check`` finds wrong with a database (pages, NOT NULL columns,
    indexes), or None when it is sound; an error running it is the answer too."""
    try:
        found = [str(r[0]) for r in conn.execute("PRAGMA quick_check(3)")]
    except database_errors() as exc:
        return str(exc)
    return None if found == ["ok"] else "; ".join(found)


#: Words of SQLite errors that mean a damaged file: a malformed page, text that is not UTF-8,
#: or a schema that is not the one memcli wrote (a table, column or tokenizer garbled).
_DAMAGE_WORDS = (
    "malformed",
    "not a database",
    "corrupt",
    "could not decode",
    "no such table",
    "no such column",
    "has no column named",
    "no such index",
    "tokenizer",
)


def write_failure(exc: BaseException) -> str | None:
    """The cause (``disk full``, ``read-only``...) when a database error means the file
    cannot be written or created; None for any other error."""
    if not isinstance(exc, database_errors()):
        return None
    code = getattr(exc, "sqlite_errorcode", None)
    text = str(exc).lower()
    if isinstance(code, int) and code & 0xFF in _UNWRITABLE_CODES:
        return _UNWRITABLE_CODES[code & 0xFF] or str(exc)
    for words, cause in (
        ("disk is full", "disk full"),
        ("readonly", "read-only"),
        ("read-only", "read-only"),
        ("disk i/o error", "I/O error"),
        ("unable to open", ""),
    ):
        if words in text:
            return cause or str(exc)
    return None


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


def vec_extension() -> str | None:
    """The path of sqlite-vec's loadable extension (suffix left to SQLite), or None when the
    package is not installed. Found without importing the package: its ``__init__`` imports
    numpy when numpy is installed, a tenth of a second of every search that uses vectors."""
    try:
        spec = importlib.util.find_spec("sqlite_vec")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.join(next(iter(spec.submodule_search_locations)), "vec0")


def load_vec(conn: Any) -> str | None:
    """Load sqlite-vec into ``conn``; return None on success, else why it failed."""
    if not hasattr(conn, "enable_load_extension"):
        return "this Python's sqlite3 cannot load extensions and sqlean is not installed"
    path = vec_extension()
    if path is None:
        return "the sqlite-vec package is not installed"
    try:
        conn.enable_load_extension(True)
        conn.load_extension(path)
        conn.enable_load_extension(False)
    except Exception as exc:  # driver-specific error classes
        return f"sqlite-vec failed to load: {exc}"
    return None


def sqlite_version() -> str:
    return str(driver().sqlite_version)
