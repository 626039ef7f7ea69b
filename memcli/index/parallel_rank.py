"""A second reader of a large index, on a thread of its own: a keyword query over hundreds of
thousands of chunks is ranked in two halves of the rowids at once (two cores), then merged.

FTS5's ``bm25()`` takes its idf and average length from the whole table whatever rowids a
query is limited to, so the two halves score every chunk as one query would, and the merged
top rows are the same (ties broken by rowid either way).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memcli.index import db

if TYPE_CHECKING:
    from concurrent.futures import Future

#: Chunks (by the largest id) from which a keyword query is split in two.
SPLIT_FROM = 200_000


class SecondReader:
    """A read-only connection to one index, opened and used on its own thread."""

    def __init__(self, path: Path) -> None:
        # only a large index needs it: concurrent.futures imports logging (5 ms a search)
        from concurrent.futures import ThreadPoolExecutor

        self._path = path
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="memcli-reader")
        self._conn: Any = None

    def fetch(self, sql: str, params: tuple[Any, ...]) -> Future[list[Any]]:
        """The rows of ``sql``, fetched on the reader's thread."""
        return self._pool.submit(self._fetch, sql, params)

    def _fetch(self, sql: str, params: tuple[Any, ...]) -> list[Any]:
        if self._conn is None:
            self._conn = db.connect(self._path, readonly=True)
        return list(self._conn.execute(sql, params).fetchall())

    def close(self) -> None:
        self._pool.submit(self._close)
        self._pool.shutdown(wait=True)

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def split_point(store: Any) -> int | None:
    """The id at which to split a keyword query over ``store``, or None to run it whole: a
    small index, a read-only one, a connection inside a transaction (whose writes another
    connection would not see), or a file at the index's path that is no longer the one
    ``store`` opened (replaced by a repair: the second connection would read the new one)."""
    if store.readonly or store.conn.in_transaction:
        return None
    top = store.conn.execute("SELECT max(id) FROM chunks").fetchone()[0]
    if top is None or top < SPLIT_FROM:
        return None
    try:
        st = os.stat(store.path)
    except OSError:
        return None
    if store.identity is not None and (st.st_dev, st.st_ino) != store.identity:
        return None
    return int(top) // 2


def data_version(store: Any) -> int:
    """SQLite's count of commits by other connections, as ``store``'s connection sees it:
    unchanged across the two halves means both read the same state of the index."""
    return int(store.conn.execute("PRAGMA data_version").fetchone()[0])
