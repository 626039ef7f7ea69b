"""The index's schema: its numbered migrations (``PRAGMA user_version`` is how many ran)."""

from __future__ import annotations

from typing import Any

from memcli.index import db

APP_ID = "memcli"
FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"
#: The keyword index: a chunk's text, its heading breadcrumb, and the search pieces of the
#: scripts written without spaces (memcli.index.bigrams; empty for other text).
FTS_TABLE = (
    f"CREATE VIRTUAL TABLE chunks_fts USING fts5(text, heading, grams, tokenize='{FTS_TOKENIZER}')"
)
#: A chunk's stored text (:data:`CHUNK_TEXT`), joined as ``t`` to the chunk ``c``: FTS5's own
#: content table read as a plain table (``c0`` is its ``text`` column). A lookup by id
#: through the virtual table costs about ten times more (10 us a row).
TEXT_JOIN = "JOIN chunks_fts_content t ON t.id = c.id"
CHUNK_TEXT = "t.c0"
#: The ``meta`` key of the largest chunk id ever given.
CHUNK_IDS = "chunk_ids"
#: The ``meta`` key of the index file's random id, given when the file is made.
INDEX_ID = "index_id"


def _script(conn: Any, sql: str) -> None:
    """Run several statements inside the caller's transaction (executescript would commit)."""
    for statement in sql.split(";"):
        if statement.strip():
            conn.execute(statement)


def _m001_base(conn: Any) -> None:
    _script(
        conn,
        f"""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE files (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            mtime_ns INTEGER NOT NULL,
            size INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            date TEXT,
            source TEXT NOT NULL,
            evergreen INTEGER NOT NULL,
            indexed_at REAL NOT NULL
        );
        CREATE TABLE chunks (
            id INTEGER PRIMARY KEY,
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            heading TEXT NOT NULL,
            types TEXT NOT NULL DEFAULT '',
            tags TEXT NOT NULL DEFAULT '',
            hash TEXT NOT NULL,
            embedded INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX chunks_file ON chunks(file_id);
        CREATE VIRTUAL TABLE chunks_fts USING fts5(text, heading, tokenize='{FTS_TOKENIZER}');
        CREATE TABLE facts (
            hash TEXT NOT NULL,
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            line INTEGER NOT NULL
        );
        CREATE INDEX facts_hash ON facts(hash);
        CREATE INDEX facts_file ON facts(file_id);
        """,
    )


def _m002_skipped(conn: Any) -> None:
    # Files seen but not indexed (binary), with the stat they had: the changed-files check
    # then knows them, instead of finding them new, and re-reading them, on every search.
    conn.execute(
        "CREATE TABLE skipped (path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL,"
        " size INTEGER NOT NULL, reason TEXT NOT NULL)"
    )


def _m003_grams(conn: Any) -> None:
    # A third FTS5 column, ``grams``: search pieces of scripts written without spaces
    # (memcli.index.bigrams). FTS5 tables cannot gain a column: the table is made anew, empty,
    # and the chunking stamp is dropped, so that the next sync rebuilds the index.
    conn.execute("DROP TABLE chunks_fts")
    conn.execute(FTS_TABLE)
    conn.execute("DELETE FROM meta WHERE key = 'chunking'")


def _m004_lifecycle(conn: Any) -> None:
    # What an entry's status lines say (memcli.notes.lifecycle): an entry with any has a chunk
    # of its own carrying them. The chunking stamp is dropped: the next sync rebuilds.
    for column in (
        "state TEXT NOT NULL DEFAULT ''",  # '', superseded, retracted or review
        "expires TEXT",  # YYYY-MM-DD
        "confirmed INTEGER NOT NULL DEFAULT 0",
        "corroborated INTEGER NOT NULL DEFAULT 0",
        "fact_id TEXT",  # the entry's id, for a chunk of one entry
        "tail TEXT NOT NULL DEFAULT ''",  # its status lines: shown, not searched
    ):
        conn.execute(f"ALTER TABLE chunks ADD COLUMN {column}")
    conn.execute("DELETE FROM meta WHERE key = 'chunking'")


def _m005_recent_files(conn: Any) -> None:
    # the quick freshness check (index.freshness = "recent") stats the newest files first
    conn.execute("CREATE INDEX files_mtime ON files(mtime_ns)")


def _m006_chunk_ids(conn: Any) -> None:
    # The largest chunk id ever given (:data:`CHUNK_IDS`): a new chunk's id is above it, never
    # one a deleted chunk had, so the score bounds learnt up to an id (memcli.search.bounds)
    # stay true of every chunk at or below it.
    conn.execute(
        "INSERT OR REPLACE INTO meta VALUES (?, (SELECT coalesce(max(id), 0) FROM chunks))",
        (CHUNK_IDS,),
    )


def _m007_index_id(conn: Any) -> None:
    # A random id of this file (:data:`INDEX_ID`): what the engine learnt of one index file
    # (memcli.search.bounds) is never taken for another's.
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, lower(hex(randomblob(16))))", (INDEX_ID,))


def _m008_links(conn: Any) -> None:
    # A fact's links to the repository (memcli.index.links): the path-like names each entry
    # holds, with when it was last known true (``since``, local ``YYYY-MM-DD HH:MM``), and what
    # each name resolves to with the path's last change (refreshed by ``memcli index``, not by
    # a sync). The chunking stamp is dropped: the next sync rebuilds and fills ``links``.
    _script(
        conn,
        """
        CREATE TABLE links (
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            line INTEGER NOT NULL,
            since TEXT,
            name TEXT NOT NULL
        );
        CREATE INDEX links_file ON links(file_id, line);
        CREATE INDEX links_name ON links(name);
        CREATE TABLE link_paths (
            name TEXT NOT NULL,
            path TEXT NOT NULL,
            changed TEXT,
            commit_id TEXT,
            PRIMARY KEY (name, path)
        );
        CREATE INDEX link_paths_path ON link_paths(path);
        """,
    )
    conn.execute("DELETE FROM meta WHERE key = 'chunking'")


#: Forward migrations; ``PRAGMA user_version`` is the number applied.
MIGRATIONS: list[db.Migration] = [
    _m001_base, _m002_skipped, _m003_grams, _m004_lifecycle, _m005_recent_files,
    _m006_chunk_ids, _m007_index_id, _m008_links,
]  # fmt: skip
SCHEMA_VERSION = len(MIGRATIONS)
#: The oldest schema this memcli reads as it is, when the index cannot be migrated (a
#: read-only folder): the later migrations only add what the engine's pruning needs.
READABLE_FROM = 5


def stamp(conn: Any) -> None:
    """Mark the file as a memcli index (the last step of every migration)."""
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('app', ?)", (APP_ID,))
