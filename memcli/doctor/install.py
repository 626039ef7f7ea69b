"""Checks of the installation: Python, SQLite, FTS5 and sqlite-vec."""

from __future__ import annotations

import platform
import sqlite3
import sys
from typing import Any

from memcli.doctor.report import NOTE, OK, PROBLEM, Check
from memcli.index import db
from memcli.index.embedder import configured_model
from memcli.index.schema import FTS_TOKENIZER
from memcli.version import __version__


def check_python(ctx: dict[str, Any]) -> Check:
    version = platform.python_version()
    details = {
        "version": version,
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
        "memcli": __version__,
    }
    return Check("python", OK, f"{details['implementation']} {version}", details=details)


def check_sqlite(ctx: dict[str, Any]) -> Check:
    name = db.driver_name()
    details = {
        "driver": name,
        "version": db.sqlite_version(),
        "stdlib_version": sqlite3.sqlite_version,
        "stdlib_loads_extensions": hasattr(sqlite3.Connection, "enable_load_extension"),
    }
    why = "" if name == "sqlite3" else " (the stdlib sqlite3 cannot load extensions)"
    return Check("sqlite", OK, f"SQLite {details['version']} through {name}{why}", details=details)


def memory_conn() -> Any:
    return db.driver().connect(":memory:")


def check_fts5(ctx: dict[str, Any]) -> Check:
    conn = memory_conn()
    try:
        conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{FTS_TOKENIZER}')")
        trigram = True
        try:
            conn.execute("CREATE VIRTUAL TABLE g USING fts5(x, tokenize='trigram')")
        except Exception:
            trigram = False
    except Exception as exc:
        return Check(
            "fts5",
            PROBLEM,
            f"FTS5 is not available: {exc}",
            "keyword search needs SQLite with FTS5: install sqlean.py "
            "(pip install sqlean.py) or use a Python built with FTS5",
            {"available": False, "trigram": False},
        )
    finally:
        conn.close()
    return Check(
        "fts5",
        OK,
        f"FTS5 available (tokenizer {FTS_TOKENIZER})",
        details={"available": True, "tokenizer": FTS_TOKENIZER, "trigram": trigram},
    )


def check_sqlite_vec(ctx: dict[str, Any]) -> Check:
    conn = memory_conn()
    try:
        error = db.load_vec(conn)
        version = None if error else conn.execute("SELECT vec_version()").fetchone()[0]
    finally:
        conn.close()
    details = {
        "loads": error is None,
        "version": version,
        "driver": db.driver_name(),
        "error": error,
    }
    if error is None:
        return Check(
            "sqlite_vec",
            OK,
            f"sqlite-vec {version} loads through {db.driver_name()}",
            details=details,
        )
    settings = ctx.get("settings")
    wanted = bool(settings and configured_model(settings))
    hint = "pip install sqlite-vec sqlean.py (in memcli's environment)"
    if wanted:
        return Check(
            "sqlite_vec",
            PROBLEM,
            f"sqlite-vec does not load ({error}): searches fall back to keyword",
            hint,
            details,
        )
    return Check(
        "sqlite_vec",
        NOTE,
        f"sqlite-vec does not load ({error}); only needed with an embedding model",
        hint,
        details,
    )
