"""The global embedding cache: keys, LRU bound, size report, corruption, several processes."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from memcli.index import db
from memcli.index.embedcache import EmbedCache, cache_path, cache_stats, pack, unpack

REPO = Path(__file__).resolve().parent.parent


def h(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def vec(seed: int, dims: int = 16) -> list[float]:
    return [float(seed) + i / 8 for i in range(dims)]


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_pack_round_trip_is_float32() -> None:
    v = [0.5, -2.0, 0.25, 1e-3]
    assert unpack(pack(v)) == pytest.approx(v, rel=1e-6)
    assert len(pack(v)) == 16


def test_put_and_get_by_fingerprint_and_hash(tmp_path: Path) -> None:
    cache = EmbedCache(tmp_path / "c.db")
    cache.put_many("model-a", [(h("x"), vec(1)), (h("y"), vec(2))])
    got = cache.get_many("model-a", [h("x"), h("y"), h("z")])
    assert set(got) == {h("x"), h("y")}
    assert got[h("x")] == pytest.approx(vec(1))
    # another fingerprint never sees these vectors
    assert cache.get_many("model-b", [h("x")]) == {}
    cache.close()
    # a second connection (another process, another workspace) reads the same file
    again = EmbedCache(tmp_path / "c.db")
    assert again.get_many("model-a", [h("y")])[h("y")] == pytest.approx(vec(2))
    again.close()


def test_default_location_honours_memcli_cache_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_CACHE_DIR", str(tmp_path / "elsewhere"))
    cache = EmbedCache()
    cache.put_many("m", [(h("a"), vec(0))])
    cache.close()
    assert cache_path() == tmp_path / "elsewhere" / "embeddings.db"
    assert cache_path().is_file()


def test_size_report_counts_entries_and_bytes(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    assert cache_stats(path) == {"path": str(path), "bytes": 0, "entries": 0}
    assert not path.exists()  # reporting does not create the cache
    cache = EmbedCache(path)
    cache.put_many("m", [(h(str(i)), vec(i, 64)) for i in range(40)])
    stats = cache.stats()
    assert stats["entries"] == 40
    assert stats["bytes"] >= 40 * 64 * 4
    cache.close()


def test_lru_eviction_keeps_recently_used_vectors(tmp_path: Path) -> None:
    clock = Clock()
    row = 64 * 4 + 64  # vector bytes + per-row overhead the cache accounts for
    cache = EmbedCache(tmp_path / "c.db", max_bytes=10 * row, clock=clock)
    cache.put_many("m", [(h(f"old{i}"), vec(i, 64)) for i in range(8)])
    clock.now += 3600
    # reading old0 makes it recently used
    assert h("old0") in cache.get_many("m", [h("old0")])
    clock.now += 3600
    cache.put_many("m", [(h(f"new{i}"), vec(i, 64)) for i in range(6)])
    left = cache.get_many("m", [h(f"old{i}") for i in range(8)] + [h(f"new{i}") for i in range(6)])
    assert len(left) <= 10
    assert all(h(f"new{i}") in left for i in range(6))
    assert h("old0") in left  # touched, so it outlived old1..old7
    assert h("old1") not in left
    assert cache_stats(tmp_path / "c.db")["entries"] == len(left)
    cache.close()


def test_eviction_gives_disk_space_back(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "c.db"
    cache = EmbedCache(path, max_bytes=1024 * 1024, clock=clock)
    for batch in range(10):
        clock.now += 10
        cache.put_many("m", [(h(f"{batch}-{i}"), vec(i, 384)) for i in range(200)])
    size = cache_stats(path)["bytes"]
    # 2000 vectors of 1.5 KiB would be ~3 MiB; the bound holds the file near 1 MiB
    assert size < 2 * 1024 * 1024
    assert cache_stats(path)["entries"] < 2000
    cache.close()


def test_corrupt_cache_is_replaced_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    path.write_bytes(b"this is not a database" * 100)
    cache = EmbedCache(path)
    cache.put_many("m", [(h("a"), vec(1))])
    assert cache.get_many("m", [h("a")])
    assert cache.warnings and "started a new one" in cache.warnings[0]
    cache.close()


def test_unwritable_cache_dir_disables_cache_without_failing(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where a folder should be")
    cache = EmbedCache(blocker / "sub" / "c.db")
    cache.put_many("m", [(h("a"), vec(1))])
    assert cache.get_many("m", [h("a")]) == {}
    assert cache.error and "cannot be created" in cache.error


def test_newer_cache_schema_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    conn = db.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    cache = EmbedCache(path)
    assert cache.get_many("m", [h("a")]) == {}
    assert cache.error and "newer" in cache.error
    assert path.exists()


WRITER = """
import hashlib, sys
from pathlib import Path
from memcli.index.embedcache import EmbedCache
path, tag = Path(sys.argv[1]), sys.argv[2]
cache = EmbedCache(path)
for round in range(20):
    items = [(hashlib.sha256(f"{tag}-{round}-{i}".encode()).hexdigest(), [float(i)] * 32)
             for i in range(25)]
    cache.put_many("shared", items)
    got = cache.get_many("shared", [k for k, _ in items])
    assert len(got) == 25, (round, len(got))
assert cache.error is None, cache.error
print("ok")
"""


def test_several_processes_write_the_same_cache(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), f"p{n}"],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(3)
    ]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert out.strip() == "ok"
    assert cache_stats(path)["entries"] == 3 * 20 * 25


def _totals_match(path: Path) -> None:
    conn = db.connect(path, readonly=True)
    try:
        kept = conn.execute("SELECT bytes, entries FROM totals").fetchone()
        real = conn.execute("SELECT coalesce(sum(size), 0), count(*) FROM embeddings").fetchone()
    finally:
        conn.close()
    assert tuple(kept) == tuple(real)


def test_running_totals_follow_inserts_updates_and_evictions(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "c.db"
    cache = EmbedCache(path, max_bytes=30 * (32 * 4 + 64), clock=clock)
    for round_ in range(5):
        clock.now += 100
        cache.put_many("m", [(h(f"{round_}-{i}"), vec(i, 32)) for i in range(12)])
        cache.put_many("m", [(h(f"{round_}-0"), vec(99, 64))])  # same key, bigger vector
        _totals_match(path)
    assert cache_stats(path)["entries"] <= 30
    cache.close()


def test_a_version_1_cache_is_migrated_and_keeps_its_vectors(tmp_path: Path) -> None:
    from memcli.index import embedcache

    path = tmp_path / "c.db"
    conn = db.connect(path)
    embedcache._m001_tables(conn)
    conn.execute("INSERT INTO models (id, fingerprint) VALUES (1, 'm')")
    conn.execute(
        "INSERT INTO embeddings (model, hash, used, size, vector) VALUES (1, ?, 0, 100, ?)",
        (bytes.fromhex(h("old")), pack(vec(7))),
    )
    conn.execute("PRAGMA user_version = 1")
    conn.close()
    cache = EmbedCache(path)
    assert cache.get_many("m", [h("old")])[h("old")] == pytest.approx(vec(7))
    cache.put_many("m", [(h("new"), vec(8))])
    assert cache.error is None
    cache.close()
    _totals_match(path)
