"""What the index records about itself for a long-lived reader: FTS5's own counts of chunks
and tokens, the largest chunk id ever given, and the index file's own random id."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from memcli.index.schema import CHUNK_IDS, INDEX_ID


class Totals(NamedTuple):
    """FTS5's own counts: chunks, and tokens in all of them (its averages record)."""

    rows: int
    tokens: int

    @property
    def avgdl(self) -> float:
        return self.tokens / self.rows if self.rows else 0.0


def totals(conn: Any) -> Totals | None:
    """The chunk and token counts ``bm25()`` works from, read from FTS5's averages record (a
    row count, then a token count per column); None when the record is missing or odd."""
    row = conn.execute("SELECT block FROM chunks_fts_data WHERE id = 1").fetchone()
    if not row or not isinstance(row[0], bytes) or not row[0]:
        return None
    values = list(_varints(row[0]))
    if len(values) < 2:
        return None
    return Totals(values[0], sum(values[1:]))


def _varints(block: bytes) -> Iterator[int]:
    """SQLite's varints (7 bits a byte, big-endian; a ninth byte gives 8 bits) in ``block``."""
    at = 0
    while at < len(block):
        value = 0
        for i in range(9):
            if at >= len(block):
                return
            byte = block[at]
            at += 1
            if i == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        yield value


def id_mark(conn: Any) -> int | None:
    """The largest chunk id ever given (None before the index records it)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (CHUNK_IDS,)).fetchone()
    try:
        return int(row[0]) if row else None
    except (TypeError, ValueError):
        return None


def index_id(conn: Any) -> str | None:
    """The random id the index file got when it was made (None before it records one): an
    index replaced by a new file (a repair) has another."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (INDEX_ID,)).fetchone()
    return str(row[0]) if row else None
