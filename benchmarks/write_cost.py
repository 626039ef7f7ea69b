"""What each part of the index's write path costs per chunk, in-process, in CPU time.

Usage::

    python benchmarks/write_cost.py [--files 10000] [--rounds 3]

Parses the benchmark corpus (``benchmarks/corpus.py``, generated under ``benchmarks/.work/``
when missing) once, in memory, then writes it into fresh index files and times the statements
(``time.process_time``, the best of ``--rounds``):

* **memcli**: ``Store.write_files`` as a bulk load runs it (batches of
  ``indexer.WRITE_FILES`` files, secondary indexes dropped and built at the end), each statement
  timed apart: ``files``, ``chunks``, ``chunks_fts`` and ``facts`` inserts, the chunk id
  reads and the ``meta`` mark (``CHUNK_IDS``), the index builds;
* **without the round-2 additions**: the ``chunks`` insert with the round-1 columns only (no
  state, expires, confirmed, corroborated, fact id, tail: the flags), ``chunks_fts`` with
  NULL bound in the grams column of text without grams, an empty string stored, an empty
  string bound and stored as NULL (``nullif``, what memcli does), and without the grams
  column (round 1), each into a table of that shape.

Nothing asserts; the figures are printed (the schema-7 index id is one row, written once).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import corpus as corpus_mod  # noqa: E402

from memcli.config.registry import default  # noqa: E402
from memcli.index import indexer  # noqa: E402
from memcli.index.filewrites import FileWrite  # noqa: E402
from memcli.index.parsing import parse_file  # noqa: E402
from memcli.index.schema import FTS_TOKENIZER  # noqa: E402
from memcli.index.store import Store  # noqa: E402
from memcli.notes.workspace import source_of  # noqa: E402


class Timed:
    """A connection that adds the CPU time of each statement to ``spent[kind]``."""

    def __init__(self, conn: Any, spent: dict[str, float]) -> None:
        self._conn = conn
        self.spent = spent

    def _kind(self, sql: str) -> str:
        words = sql.split()
        if words[0] == "INSERT":
            return f"insert {words[2] if words[1] == 'INTO' else words[4]}"
        if words[0] == "CREATE":
            return "index builds"
        return words[0].lower()

    def execute(self, sql: str, *args: Any) -> Any:
        t = time.process_time()
        try:
            return self._conn.execute(sql, *args)
        finally:
            self.spent[self._kind(sql)] += time.process_time() - t

    def executemany(self, sql: str, *args: Any) -> Any:
        t = time.process_time()
        try:
            return self._conn.executemany(sql, *args)
        finally:
            self.spent[self._kind(sql)] += time.process_time() - t

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def parsed_corpus(files: int) -> list[FileWrite]:
    ws = HERE / ".work" / f"corpus-{files}"
    corpus_mod.generate(ws, files, quiet=True)
    out: list[FileWrite] = []
    for folder, dirs, names in os.walk(ws / "memory"):
        dirs.sort()
        for name in sorted(names):
            if not name.endswith(".md"):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, ws).replace(os.sep, "/")
            p = parse_file(rel, path, int(default("index.chunk_chars")))
            if p.rows is None or p.texts is None or p.facts is None or p.sha256 is None:
                continue
            size = os.path.getsize(path)
            source, evergreen = source_of(rel), p.date is None
            out.append(
                FileWrite(
                    rel, 1, size, p.sha256, p.date, source, evergreen, p.rows, p.texts, p.facts
                )
            )
    return out


def memcli_write(writes: list[FileWrite]) -> dict[str, float]:
    spent: dict[str, float] = defaultdict(float)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "index.db")
        real = store.conn
        store.conn = Timed(real, spent)  # type: ignore[assignment]
        t = time.process_time()
        store.conn.execute("BEGIN IMMEDIATE")
        store.drop_bulk_indexes()
        step = indexer.WRITE_FILES
        for start in range(0, len(writes), step):
            store.write_files(writes[start : start + step])
        store.ensure_bulk_indexes()
        store.conn.execute("COMMIT")
        spent["total"] = time.process_time() - t
        store.conn = real
        store.close()
    return dict(spent)


#: The status columns' defaults (a chunk without status lines leaves them so).
STATUS_DEFAULTS = ("", None, 0, 0, None, "")


def variant(writes: list[FileWrite], what: str) -> float:
    """CPU seconds of one insert written as round 1 wrote it, into a table of that shape."""
    from memcli.index import db

    rows: list[tuple[Any, ...]] = []
    i = 0
    for fid, w in enumerate(writes, 1):
        for c, t in zip(w.chunks, w.texts, strict=True):
            i += 1
            if what == "chunks, round-1 columns":
                rows.append((i, fid, *c[:6]))
            elif what == "chunks, all columns":
                rows.append((i, fid, *c[:6], *(c[6:] or STATUS_DEFAULTS)))
            elif what == "chunks_fts, grams NULL":
                rows.append((i, t[0], t[1], t[2] or None))
            elif what.startswith("chunks_fts, grams ''"):
                rows.append((i, *t))
            else:
                rows.append((i, t[0], t[1]))
    with tempfile.TemporaryDirectory() as tmp:
        conn = db.connect(Path(tmp) / "v.db")
        tok = FTS_TOKENIZER
        if what.startswith("chunks,"):
            conn.execute(
                "CREATE TABLE chunks (id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL,"
                " start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, heading TEXT NOT NULL,"
                " types TEXT NOT NULL DEFAULT '', tags TEXT NOT NULL DEFAULT '',"
                " hash TEXT NOT NULL, embedded INTEGER NOT NULL DEFAULT 0,"
                " state TEXT NOT NULL DEFAULT '', expires TEXT,"
                " confirmed INTEGER NOT NULL DEFAULT 0, corroborated INTEGER NOT NULL DEFAULT 0,"
                " fact_id TEXT, tail TEXT NOT NULL DEFAULT '')"
            )
            cols = "id, file_id, start_line, end_line, heading, types, tags, hash"
            if what == "chunks, all columns":
                cols += ", state, expires, confirmed, corroborated, fact_id, tail"
            sql = f"INSERT INTO chunks ({cols}) VALUES ({', '.join('?' * len(rows[0]))})"
        elif what == "chunks_fts, no grams column":
            conn.execute(f"CREATE VIRTUAL TABLE f USING fts5(text, heading, tokenize='{tok}')")
            sql = "INSERT INTO f (rowid, text, heading) VALUES (?, ?, ?)"
        else:
            conn.execute(
                f"CREATE VIRTUAL TABLE f USING fts5(text, heading, grams, tokenize='{tok}')"
            )
            grams_value = "nullif(?, '')" if what.endswith("stored NULL") else "?"
            sql = f"INSERT INTO f (rowid, text, heading, grams) VALUES (?, ?, ?, {grams_value})"
        t = time.process_time()
        conn.execute("BEGIN")
        conn.executemany(sql, rows)
        conn.execute("COMMIT")
        spent = time.process_time() - t
        conn.close()
    return spent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    writes = parsed_corpus(args.files)
    chunks = sum(len(w.chunks) for w in writes)
    print(f"{len(writes)} files, {chunks} chunks; load average {os.getloadavg()}")
    best: dict[str, float] = {}
    for _ in range(args.rounds):
        for k, v in memcli_write(writes).items():
            best[k] = min(best.get(k, v), v)
    print("\nmemcli's bulk write (best of rounds, CPU):")
    for k, v in sorted(best.items(), key=lambda kv: -kv[1]):
        print(f"  {k:24s} {v:7.3f} s  {v / chunks * 1e6:6.2f} us/chunk")
    print("\nvariants (one insert alone, best of rounds, CPU):")
    for what in (
        "chunks, all columns",
        "chunks, round-1 columns",
        "chunks_fts, grams NULL",
        "chunks_fts, grams ''",
        "chunks_fts, grams '' stored NULL",
        "chunks_fts, no grams column",
    ):
        v = min(variant(writes, what) for _ in range(args.rounds))
        print(f"  {what:30s} {v:7.3f} s  {v / chunks * 1e6:6.2f} us/chunk")
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
