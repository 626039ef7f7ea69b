"""A damaged, foreign or newer index.db: rebuilt from the Markdown with a warning, or a clear
error saying what to do. Nothing under memory/ is ever modified by this."""

from __future__ import annotations

import json
import os
import random
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from memcli.index import db
from memcli.index.schema import SCHEMA_VERSION
from tests.conftest import Cli, Run
from tests.test_reliability import tree_digest

FILES = 120


@pytest.fixture
def indexed(cli: Cli, workspace: Path) -> Path:
    """A workspace with FILES notes, fully indexed and checkpointed (all pages in index.db)."""
    rnd = random.Random(5)
    words = "cache valkey redis kafka deploy schema lock queue retry latency shard".split()
    for i in range(FILES):
        body = "\n".join(f"- {' '.join(rnd.choices(words, k=10))} n{i}" for _ in range(8))
        (workspace / "memory" / f"note{i:03d}.md").write_text(f"# Note {i}\n\n{body}\n")
    (workspace / "memory" / "2026-11-20.md").write_text("- 10:00 the pager rotation is weekly\n")
    assert cli("index").exit_code == 0
    conn = db.connect(workspace / ".memcli" / "index.db")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return workspace


def _index(root: Path) -> Path:
    return root / ".memcli" / "index.db"


def _drop_side_files(root: Path) -> None:
    for suffix in ("-wal", "-shm"):
        p = Path(f"{_index(root)}{suffix}")
        if p.exists():
            p.unlink()


def _garbage(root: Path) -> None:
    _index(root).write_bytes(random.Random(1).randbytes(256 * 1024))


def _text(root: Path) -> None:
    _index(root).write_text("this is not a database, just some notes\n" * 50)


def _truncated(fraction: float) -> Callable[[Path], None]:
    def cut(root: Path) -> None:
        data = _index(root).read_bytes()
        _index(root).write_bytes(data[: int(len(data) * fraction)])

    cut.__name__ = f"truncated_{fraction}"
    return cut


def _header_only(root: Path) -> None:
    _index(root).write_bytes(_index(root).read_bytes()[:100])


def _foreign(root: Path) -> None:
    _index(root).unlink()
    conn = sqlite3.connect(_index(root))
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO users (name) VALUES ('ada')")
    conn.commit()
    conn.close()


def _foreign_meta(root: Path) -> None:
    """Another tool's database with a meta table and a user_version, like ours."""
    _index(root).unlink()
    conn = sqlite3.connect(_index(root))
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT INTO meta VALUES ('app', 'othertool')")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()


def _foreign_meta_shape(root: Path) -> None:
    _index(root).unlink()
    conn = sqlite3.connect(_index(root))
    conn.execute("CREATE TABLE meta (id INTEGER, blob BLOB)")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()


def _garbage_side_files(root: Path) -> None:
    """Garbage in the WAL and shared-memory files beside a good index.db."""
    rnd = random.Random(2)
    Path(f"{_index(root)}-wal").write_bytes(rnd.randbytes(64 * 1024))
    Path(f"{_index(root)}-shm").write_bytes(rnd.randbytes(32 * 1024))


def _garble_tables(*tables: str) -> Callable[[Path], None]:
    """Overwrite the pages of some tables with random bytes (the file still opens)."""

    def garble(root: Path) -> None:
        conn = db.connect(_index(root))
        pages = [
            r[0]
            for r in conn.execute(
                f"SELECT pageno FROM dbstat WHERE name IN ({','.join('?' * len(tables))})"
                " AND pageno > 1",
                tables,
            )
        ]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        conn.close()
        assert pages, tables
        rnd = random.Random(3)
        with open(_index(root), "r+b") as fh:
            for page in pages:
                fh.seek((page - 1) * size)
                fh.write(rnd.randbytes(size))

    garble.__name__ = "garble_" + "_".join(tables)
    return garble


DAMAGE = [
    _garbage,
    _text,
    _truncated(0.5),
    _truncated(0.97),
    _header_only,
    _foreign,
    _foreign_meta,
    _foreign_meta_shape,
]


def _warned(r: Run) -> str:
    """All warnings of a run: stderr plus a JSON envelope's ``warnings``."""
    text = r.stderr
    try:
        text += "\n".join(json.loads(r.stdout).get("warnings", []))
    except (ValueError, AttributeError):
        pass
    return text


def _check_search(r: Run) -> None:
    assert r.exit_code == 0, r.stderr
    hits = r.json()["results"]
    assert hits and hits[0]["path"] == "memory/2026-11-20.md"


@pytest.mark.slow
@pytest.mark.parametrize("damage", DAMAGE, ids=lambda f: f.__name__.strip("_"))
@pytest.mark.parametrize("command", ["search", "status", "files", "index", "index-force", "add"])
def test_corrupt_index_is_rebuilt(
    cli: Cli, indexed: Path, damage: Callable[[Path], None], command: str
) -> None:
    _drop_side_files(indexed)
    damage(indexed)
    before = tree_digest(indexed / "memory")
    if command == "search":
        r = cli("search", "--json", "pager rotation")
        _check_search(r)
    elif command == "status":
        r = cli("status", "--json")
        assert r.exit_code == 0, r.stderr
    elif command == "files":
        r = cli("files", "--json")
        assert r.exit_code == 0, r.stderr
    elif command == "index":
        r = cli("index", "--json")
        assert r.exit_code == 0, r.stderr
        assert r.json()["files"] == FILES + 2
    elif command == "index-force":
        r = cli("index", "--force", "--json")
        assert r.exit_code == 0, r.stderr
        assert r.json()["files"] == FILES + 2
    else:
        r = cli("add", "--to", "extra.md", "--json", "added over a broken index")
        assert r.exit_code == 0, r.stderr
        assert r.json()["added"] is True
    assert "rebuilt it from the Markdown" in _warned(r)
    after = tree_digest(indexed / "memory")
    if command == "add":
        assert after.pop("extra.md")
    assert after == before  # memory/ untouched
    # The index works again and holds every file.
    _check_search(cli("search", "--json", "pager rotation"))
    assert len(cli("files", "--json").json()["files"]) == FILES + 2 + (command == "add")
    assert "rebuilt" not in cli("status").stderr


LATE = [
    (("chunks_fts_data",), "search"),
    (("chunks_fts_content",), "search"),
    (("chunks_fts_data", "chunks_fts_content"), "index-force"),
    (("chunks",), "search"),
    (("chunks_file", "files"), "files"),
    (("chunks_file",), "status"),
    (("files",), "status"),
    (("files",), "search"),
    (("facts", "facts_hash"), "add"),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("tables", "command"), LATE, ids=lambda v: "-".join(v) if isinstance(v, tuple) else v
)
def test_corruption_found_late_is_rebuilt(
    cli: Cli, indexed: Path, tables: tuple[str, ...], command: str
) -> None:
    """Damage that opening the index does not notice: the query that meets it repairs it."""
    _garble_tables(*tables)(indexed)
    before = tree_digest(indexed / "memory")
    if command == "search":
        r = cli("search", "--json", "-n", "50", "valkey redis pager rotation")
        assert r.exit_code == 0, r.stderr
    elif command == "index-force":
        r = cli("index", "--force", "--json")
        assert r.exit_code == 0, r.stderr
    elif command == "files":
        r = cli("files", "--json")
        assert r.exit_code == 0, r.stderr
        assert len(r.json()["files"]) == FILES + 2
    elif command == "status":
        r = cli("status", "--json")
        assert r.exit_code == 0, r.stderr
    else:
        for i in range(5):
            r = cli("add", "--json", f"a new fact number {i} about the pager")
            assert r.exit_code == 0, r.stderr
            if "rebuilt" in _warned(r):
                break
    assert "rebuilt it from the Markdown" in _warned(r), r.stderr
    after = tree_digest(indexed / "memory")
    if command == "add":
        after = {k: v for k, v in after.items() if k in before}
    assert after == before
    _check_search(cli("search", "--json", "pager rotation"))
    conn = db.connect(_index(indexed))
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def test_garbage_wal_and_shm_are_ignored(cli: Cli, indexed: Path) -> None:
    """SQLite checks WAL frames and the shared-memory index: garbage there is discarded, the
    good index.db is kept as it is (no rebuild needed, nothing lost)."""
    _drop_side_files(indexed)
    _garbage_side_files(indexed)
    before = tree_digest(indexed / "memory")
    for args in (("search", "--json", "pager rotation"), ("status",), ("index",)):
        r = cli(*args)
        assert r.exit_code == 0, (args, r.stderr)
        assert "rebuilt" not in _warned(r)
    _check_search(cli("search", "--json", "pager rotation"))
    assert len(cli("files", "--json").json()["files"]) == FILES + 2
    assert tree_digest(indexed / "memory") == before


def _bump_version(root: Path, version: int = 99) -> None:
    conn = db.connect(_index(root))
    conn.execute(f"PRAGMA user_version = {version}")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


@pytest.mark.parametrize(
    "args",
    [["search", "pager"], ["index"], ["index", "--force"], ["status"], ["files"]],
    ids=" ".join,
)
def test_newer_schema_is_a_clear_error(cli: Cli, indexed: Path, args: list[str]) -> None:
    _bump_version(indexed)
    before_memory = tree_digest(indexed / "memory")
    before_index = _index(indexed).read_bytes()
    r = cli(*args)
    assert r.exit_code == 3
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert lines[0].startswith("Error: ") and "newer" in lines[0] and "99" in lines[0]
    assert "upgrade memcli" in r.stderr and "delete" in r.stderr  # what to do
    assert "Traceback" not in r.stderr
    assert tree_digest(indexed / "memory") == before_memory
    assert _index(indexed).read_bytes() == before_index  # a newer index is never thrown away


def test_schema_1_index_is_migrated_in_place(cli: Cli, indexed: Path) -> None:
    """An index from before the 'skipped' table is upgraded, not rebuilt; doctor (which
    opens it read-only) says so rather than failing on the missing table."""
    conn = db.connect(_index(indexed))
    conn.execute("DROP TABLE skipped")
    conn.execute("PRAGMA user_version = 1")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    doc = cli("doctor", "--json").json()
    index_check = next(c for c in doc["checks"] if c["name"] == "index")
    assert "older" in index_check["summary"] and "memcli index" in index_check["hint"]
    (indexed / "memory" / "blob.md").write_bytes(b"\x00 binary")
    r = cli("search", "--json", "pager rotation")
    assert r.exit_code == 0 and "rebuilt" not in r.stderr
    _check_search(r)
    conn = db.connect(_index(indexed))
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("SELECT path FROM skipped").fetchall() == [("memory/blob.md",)]
    conn.close()


def test_add_with_newer_index_keeps_the_fact(cli: Cli, indexed: Path) -> None:
    _bump_version(indexed)
    r = cli("add", "--json", "kept although the index is from the future")
    assert r.exit_code == 0, r.stderr
    assert "newer" in r.stderr  # said why it is not indexed
    path = indexed / r.json()["path"]
    assert "kept although the index is from the future" in path.read_text()


def test_foreign_db_with_high_user_version(cli: Cli, indexed: Path) -> None:
    _index(indexed).unlink()
    _drop_side_files(indexed)
    conn = sqlite3.connect(_index(indexed))
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.execute("PRAGMA user_version = 42")
    conn.commit()
    conn.close()
    r = cli("search", "--json", "pager rotation")
    _check_search(r)
    assert "not a memcli index" in _warned(r)
    assert os.path.getsize(_index(indexed)) > 0
