"""Damage to derived data that opening the file does not notice: text that is not UTF-8, rows
that break the schema's constraints, a folder where index.db should be, a damaged embedding
cache. Each is rebuilt automatically, once, with a one-line warning; doctor reports it."""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from memcli.index import db
from tests.conftest import Cli, Run
from tests.stub_openai import StubOpenAI
from tests.test_reliability import tree_digest


def _index(root: Path) -> Path:
    return root / ".memcli" / "index.db"


@pytest.fixture
def indexed(cli: Cli, workspace: Path) -> Path:
    for i in range(12):
        body = "\n".join(f"- note {i} line {j} about the kafka queue" for j in range(6))
        (workspace / "memory" / f"note{i:02d}.md").write_text(f"# Note {i}\n\n{body}\n")
    (workspace / "memory" / "2026-11-20.md").write_text("- 10:00 the pager rotation is weekly\n")
    assert cli("index").exit_code == 0
    return workspace


def _sql(root: Path, *statements: str) -> None:
    conn = sqlite3.connect(_index(root))
    conn.execute("PRAGMA foreign_keys = OFF")
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def _not_utf8(root: Path) -> None:
    """Text columns holding bytes that are not UTF-8 (a damaged page can hold anything)."""
    bad = "CAST(X'C328FF' AS TEXT)"
    _sql(
        root,
        f"UPDATE chunks SET heading = {bad}",
        f"UPDATE files SET sha256 = {bad}, source = {bad} WHERE path = 'memory/note00.md'",
    )


def _lost_row(root: Path) -> None:
    """A chunk row lost while its full-text row stayed: the next new chunk takes its id and
    SQLite refuses the duplicate (IntegrityError)."""
    _sql(
        root,
        "INSERT INTO chunks_fts (rowid, text, heading, grams)"
        " SELECT max(id) + 1, 'orphan', '', '' FROM chunks",
    )


def _folder(root: Path) -> None:
    """A folder where the index file should be."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{_index(root)}{suffix}").unlink(missing_ok=True)
    (_index(root) / "inner").mkdir(parents=True)
    (_index(root) / "inner" / "file").write_text("x")


def _warned(r: Run) -> str:
    text = r.stderr
    try:
        text += "\n".join(json.loads(r.stdout).get("warnings", []))
    except (ValueError, AttributeError):
        pass
    return text


@pytest.mark.parametrize("damage", [_not_utf8, _lost_row, _folder], ids=lambda f: f.__name__)
@pytest.mark.parametrize("command", ["search", "index", "add", "status", "files"])
def test_damage_is_rebuilt_once_with_a_warning(
    cli: Cli, indexed: Path, damage: Callable[[Path], None], command: str
) -> None:
    if damage is _lost_row and command in ("status", "files"):
        pytest.skip("reading never meets a duplicate id; only writing a new chunk does")
    damage(indexed)
    # a new file: the sync before each command writes new chunks (and meets a lost row)
    (indexed / "memory" / "fresh.md").write_text("- the fresh otter fact\n")
    before = tree_digest(indexed / "memory")
    if command == "search":
        r = cli("search", "--json", "pager rotation")
    elif command == "index":
        r = cli("index", "--json")
    elif command == "add":
        r = cli("add", "--to", "extra.md", "--json", "added over a damaged index")
    else:
        r = cli(command, "--json")
    assert r.exit_code == 0, r.stderr
    if command == "add" and damage is _not_utf8:
        # an add reads only its own file's rows: the next command that reads the damage
        # (here a search) rebuilds the index, the added fact with it
        r = cli("search", "--json", "added over a damaged index")
        assert r.exit_code == 0 and r.json()["results"][0]["path"] == "memory/extra.md"
    warned = _warned(r)
    assert "rebuilt it from the Markdown" in warned, warned
    assert warned.count("rebuilt it from the Markdown") == 1
    after = tree_digest(indexed / "memory")
    if command == "add":
        assert after.pop("extra.md")
    assert after == before
    r = cli("search", "--json", "pager rotation")
    assert r.exit_code == 0 and r.json()["results"][0]["path"] == "memory/2026-11-20.md"
    assert "rebuilt it from" not in _warned(r)
    assert cli("search", "--json", "otter").exit_code == 0
    conn = db.connect(_index(indexed))
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def _garble_cache(path: Path) -> None:
    """Overwrite the pages holding cached vectors with random bytes (the file still opens)."""
    conn = db.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pages = [
        r[0]
        for r in conn.execute(
            "SELECT pageno FROM dbstat WHERE pageno > 1"
            " AND name IN ('embeddings', 'sqlite_autoindex_embeddings_1')"
        )
    ]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    assert len(pages) > 2
    rnd = random.Random(7)
    with open(path, "r+b") as fh:
        for page in pages:
            fh.seek((page - 1) * size)
            fh.write(rnd.randbytes(size))


@pytest.fixture
def embed_stub(openai_stub: StubOpenAI, monkeypatch: pytest.MonkeyPatch) -> StubOpenAI:
    monkeypatch.setenv("MEMCLI_EMBEDDING_MODEL", "openai/stub-embed")
    monkeypatch.setenv("MEMCLI_EMBEDDING_API_BASE", openai_stub.base_url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    return openai_stub


@pytest.mark.slow
def test_damaged_embedding_cache_is_replaced_once_and_doctor_says_so(
    cli: Cli, workspace: Path, embed_stub: StubOpenAI, isolated_env: Path
) -> None:
    for i in range(150):
        (workspace / "memory" / f"n{i:03d}.md").write_text(f"- fact {i} about shard {i * 7}\n")
    assert cli("index").exit_code == 0
    cache = isolated_env / "cache" / "embeddings.db"
    _garble_cache(cache)

    r = cli("doctor", "--json")
    found = {c["name"]: c for c in r.json()["checks"]}
    assert r.exit_code == 1 and found["cache"]["status"] == "problem", found["cache"]
    assert "damaged" in found["cache"]["summary"]

    r = cli("index", "--force", "--json")
    assert r.exit_code == 0, r.stderr
    warned = _warned(r)
    assert "embedding cache" in warned and "started a new one" in warned, warned
    assert warned.count("embedding cache") == 1  # one line, not one per read
    # the new cache holds the vectors again: the next rebuild is silent and costs no request
    r = cli("index", "--force", "--json")
    assert r.exit_code == 0 and "embedding cache" not in _warned(r), _warned(r)
    r = cli("search", "--json", "shard 70")
    assert r.exit_code == 0 and "embedding cache" not in _warned(r)
    found = {c["name"]: c for c in cli("doctor", "--json").json()["checks"]}
    assert found["cache"]["status"] == "ok", found["cache"]
    assert found["cache"]["details"]["entries"] >= 150


@pytest.mark.slow
def test_random_byte_damage_is_always_rebuilt(cli: Cli, workspace: Path) -> None:
    """Random bytes over a sound index (1, 4 or 16 of them, 300 seeded cases): whatever they
    hit (a page, a record's types, the schema's text), search, index and add answer and the
    next search finds the fact. Before, a few in a hundred exited 3 until `index --force`
    (IntegrityError, a decode error, a garbled schema, a NULL path)."""
    rnd = random.Random(5)
    words = "cache valkey redis kafka deploy schema lock queue retry latency shard".split()
    for i in range(60):
        body = "\n".join(f"- {' '.join(rnd.choices(words, k=10))} n{i}" for _ in range(8))
        (workspace / "memory" / f"note{i:03d}.md").write_text(f"# Note {i}\n\n{body}\n")
    (workspace / "memory" / "2026-11-20.md").write_text("- 10:00 the pager rotation is weekly\n")
    assert cli("index").exit_code == 0
    index = _index(workspace)
    conn = db.connect(index)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    sound = index.read_bytes()
    failures = []
    for seed in range(300):
        r = random.Random(seed)
        data = bytearray(sound)
        for _ in range(r.choice([1, 4, 16])):
            data[r.randrange(len(data))] = r.randrange(256)
        for suffix in ("-wal", "-shm"):
            Path(f"{index}{suffix}").unlink(missing_ok=True)
        index.write_bytes(bytes(data))
        args = [
            ("search", "--json", "pager rotation"),
            ("index", "--json"),
            ("add", "--json", f"fact {seed} about the pagers"),
        ][seed % 3]
        run = cli(*args)
        if run.exit_code not in (0, 1):
            failures.append((seed, args[0], run.exit_code, run.stderr.strip()))
            continue
        run = cli("search", "--json", "pager rotation")
        if run.exit_code != 0:
            failures.append((seed, "search after", run.exit_code, run.stderr.strip()))
    assert failures == []
