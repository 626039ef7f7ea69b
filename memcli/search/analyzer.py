"""The index's own tokenizer for ranking: stems and token offsets of passages (through a
contentless temp FTS5 table) and the index's term vocabulary: a prefix's terms, document
frequencies, the number of chunks."""

# No `from __future__ import annotations`: see memcli.search.ranking.
import re
from collections.abc import Sequence
from typing import Any

from memcli.index.bigrams import grams, has_unsegmented
from memcli.index.bookkeeping import totals
from memcli.index.schema import FTS_TOKENIZER

_TOK = "memcli_analyze"
_TOK_TERMS = "memcli_analyze_terms"
_INDEX_TERMS = "memcli_index_terms"


PREFIX_TERMS = 32  # index terms a prefix query scores passages with


# -- tokenising like the index ---------------------------------------------------------------
_TOKENIZE = re.compile(r"tokenize\s*=\s*'([^']*)'", re.IGNORECASE)


def _tokenize_arg(sql: str) -> str | None:
    m = _TOKENIZE.search(sql or "")
    return m.group(1) if m else None


def index_tokenizer(conn: Any) -> str:
    """The tokenizer the index's ``chunks_fts`` table was created with."""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchone()
    return (_tokenize_arg(row[0]) if row else None) or FTS_TOKENIZER


class Analyzer:
    """Stems text with the index's own FTS5 tokenizer (through a contentless temp table)."""

    def __init__(self, conn: Any, tokenizer: str | None = None) -> None:
        self.conn = conn
        tokenizer = tokenizer or index_tokenizer(conn)
        row = conn.execute("SELECT sql FROM sqlite_temp_master WHERE name = ?", (_TOK,)).fetchone()
        if row is None:
            conn.execute("PRAGMA temp_store = MEMORY")  # before the first temp table
        elif _tokenize_arg(row[0]) != tokenizer:
            conn.execute(f"DROP TABLE IF EXISTS temp.{_TOK_TERMS}")
            conn.execute(f"DROP TABLE temp.{_TOK}")
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{_TOK}"
            f" USING fts5(text, content='', tokenize='{tokenizer}')"
        )
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{_TOK_TERMS}"
            f" USING fts5vocab(temp, {_TOK}, instance)"
        )

    def _load(self, texts: Sequence[str]) -> None:
        """Put ``texts`` in the temp table as rows 0..n-1."""
        conn = self.conn
        # one savepoint: one temp-database transaction for all rows, inside a caller's
        # transaction or not
        conn.execute("SAVEPOINT memcli_analyze")
        try:
            conn.execute(f"INSERT INTO temp.{_TOK}({_TOK}) VALUES ('delete-all')")
            conn.executemany(
                f"INSERT INTO temp.{_TOK}(rowid, text) VALUES (?, ?)", list(enumerate(texts))
            )
        except BaseException:
            conn.execute("ROLLBACK TO memcli_analyze")
            conn.execute("RELEASE memcli_analyze")
            raise
        conn.execute("RELEASE memcli_analyze")

    def tokens(self, texts: Sequence[str]) -> list[list[str]]:
        """Every token of each text, in order."""
        self._load(texts)
        out: list[list[str]] = [[] for _ in texts]
        rows = self.conn.execute(f"SELECT doc, term FROM temp.{_TOK_TERMS} ORDER BY doc, offset")
        for doc, term in rows:
            out[doc].append(term)
        return out

    def positions(
        self, texts: Sequence[str], terms: Sequence[str]
    ) -> tuple[list[dict[str, list[int]]], list[int]]:
        """Per text: the token offsets of each of ``terms`` in it, and its number of tokens.
        A text in a script written without spaces counts its grams too, as the index does."""
        self._load([f"{t}\n{grams(t)}" if has_unsegmented(t) else t for t in texts])
        found: list[dict[str, list[int]]] = [{} for _ in texts]
        lengths = [0] * len(texts)
        if terms:
            marks = ",".join("?" * len(terms))
            rows = self.conn.execute(
                f"SELECT doc, term, offset FROM temp.{_TOK_TERMS} WHERE term IN ({marks})"
                " ORDER BY doc, offset",
                list(terms),
            )
            for doc, term, offset in rows:
                found[doc].setdefault(term, []).append(int(offset))
        for doc, n in self.conn.execute(
            f"SELECT doc, count(*) FROM temp.{_TOK_TERMS} GROUP BY doc"
        ):
            lengths[doc] = n
        return found, lengths


def _index_terms(conn: Any) -> None:
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{_INDEX_TERMS}"
        " USING fts5vocab(main, chunks_fts, row)"
    )


def prefix_terms(conn: Any, prefix: str) -> list[str]:
    """The index's terms that start with ``prefix``, the most common first (at most
    :data:`PREFIX_TERMS`): what ``prefix*`` matches, for scoring passages."""
    _index_terms(conn)
    rows = conn.execute(
        f"SELECT term FROM temp.{_INDEX_TERMS} WHERE term >= ? AND term < ?"
        " ORDER BY doc DESC, term LIMIT ?",
        (prefix, prefix + "\U0010ffff", PREFIX_TERMS),
    )
    return [str(r[0]) for r in rows]


def doc_freqs(conn: Any, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
    """(number of chunks, chunks holding each term) from the index's FTS5 vocabulary."""
    _index_terms(conn)
    n = chunk_count(conn)
    df = dict.fromkeys(terms, 0)
    if terms:
        marks = ",".join("?" * len(terms))
        for term, docs in conn.execute(
            f"SELECT term, doc FROM temp.{_INDEX_TERMS} WHERE term IN ({marks})", list(terms)
        ):
            df[term] = int(docs)
    return n, df


def chunk_count(conn: Any) -> int:
    """The number of chunks, from the row count FTS5 keeps in its averages record (a read of
    one row; ``count(*)`` walks the table: 7 ms at a million chunks); ``count(*)`` when that
    record is missing or not as expected."""
    counts = totals(conn)
    if counts is not None:
        return counts.rows
    return int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
