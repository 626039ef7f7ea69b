"""Loaded at start-up by the processes ``bench_guard.py`` probes (this folder is put first on
``PYTHONPATH``): counts the SQL statements each runs and the seconds it sleeps, and appends
them as JSON lines to the file ``BENCH_GUARD_PROBE`` names (at exit, ``os._exit`` too; a
sleep at once). Never loaded otherwise."""

import atexit
import json
import os
import sqlite3
import threading
import time

_OUT = os.environ.get("BENCH_GUARD_PROBE")
_lock = threading.Lock()
_statements = 0


def _write(record: dict) -> None:
    with _lock, open(_OUT, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")


def _count(_sql: str) -> None:
    global _statements
    _statements += 1


def _traced(connect):
    def connect_traced(*args, **kwargs):
        conn = connect(*args, **kwargs)
        conn.set_trace_callback(_count)
        return conn

    return connect_traced


def _sleep(seconds, _real=time.sleep):
    _write({"slept_ms": 1000.0 * float(seconds)})
    _real(seconds)


if _OUT:
    sqlite3.connect = _traced(sqlite3.connect)
    try:
        import sqlean

        sqlean.connect = _traced(sqlean.connect)
    except ImportError:
        pass
    time.sleep = _sleep
    atexit.register(lambda: _write({"statements": _statements}))

    def _exit(code, _real=os._exit):  # multiprocessing's children and `memcli mcp` end so
        _write({"statements": _statements})
        _real(code)

    os._exit = _exit
