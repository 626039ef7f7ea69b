"""A long embedding back-fill lets other writers in while the provider answers: an `add`
beside it is indexed at once, and a file re-indexed meanwhile never gets vectors of the text
it had before."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memcli.config import load_settings
from memcli.index import vectors
from memcli.providers.embeddings import RemoteEmbedder
from tests.stub_openai import StubOpenAI
from tests.test_hybrid import chunk_ids, hybrid, instant_retries, open_store, vec_ids  # noqa: F401

pytestmark = pytest.mark.slow

EMBED = "/embeddings"
NOTES = 300  # more chunks than a search or an add embeds by itself (SEARCH_EMBED_LIMIT)


def _notes(root: Path) -> None:
    for i in range(NOTES):
        (root / "memory" / f"note-{i:03d}.md").write_text(
            f"- fact {i}: the service number {i} runs on host alpha-{i}\n", encoding="utf-8"
        )


def _memcli(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "memcli", "-w", str(root), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def _wait_for_requests(stub: StubOpenAI, n: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while not stub.wait_for(EMBED, n, timeout=0.5):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the back-fill never called the provider"


def _stored_vectors(root: Path) -> dict[int, tuple[str, list[float]]]:
    """chunk id -> (its text, its stored vector)."""
    store = open_store(root)
    try:
        rows = store.conn.execute(
            f"SELECT v.rowid, t.text, v.embedding FROM {vectors.TABLE} v"
            " JOIN chunks_fts t ON t.rowid = v.rowid"
        ).fetchall()
    finally:
        store.close()
    return {
        int(cid): (text, list(struct.unpack(f"{len(blob) // 4}f", blob)))
        for cid, text, blob in rows
    }


@pytest.fixture
def slow_backfill(
    workspace: Path,
    hybrid: StubOpenAI,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[StubOpenAI]:
    """300 one-chunk notes indexed without vectors; the provider then holds its first request
    (the back-fill is busy with it) until the test calls ``release()``."""
    _notes(workspace)
    monkeypatch.setenv("MEMCLI_EMBEDDING_BATCH_SIZE", "32")  # 10 requests
    monkeypatch.setenv("MEMCLI_EMBEDDING_TIMEOUT", "120")  # the held request outlasts the test
    p = _memcli(workspace, "index", "--json", env={"MEMCLI_EMBEDDING_MODEL": ""})
    assert p.wait(timeout=120) == 0, p.communicate()
    assert chunk_ids(workspace, embedded=False) == chunk_ids(workspace)
    hybrid.hold(1)
    yield hybrid
    hybrid.release()


def test_add_is_indexed_at_once_during_a_long_backfill(
    workspace: Path, slow_backfill: StubOpenAI
) -> None:
    backfill = _memcli(workspace, "index", "--json")
    _wait_for_requests(slow_backfill, 1, backfill)
    # with the writer lock held through the back-fill, this add would wait out its 1.5 s
    # lock timeout and leave the fact unindexed ("not indexed yet")
    add = _memcli(
        workspace,
        "add",
        "--json",
        "the pager rotation moved to Tuesdays",
        env={"MEMCLI_INDEX_LOCK_TIMEOUT": "1.5"},
    )
    out, err = add.communicate(timeout=60)
    assert add.returncode == 0, err
    assert "not indexed yet" not in err + out
    search = _memcli(workspace, "search", "--json", "--strategy", "keyword", "pager rotation")
    out, err = search.communicate(timeout=60)
    assert search.returncode == 0 and "Tuesdays" in out, err
    assert backfill.poll() is None  # the back-fill was still waiting for the provider meanwhile
    assert slow_backfill.count(EMBED) == 1

    slow_backfill.release()
    out, err = backfill.communicate(timeout=120)
    assert backfill.returncode == 0, err
    # everything embedded once, the added fact included; no vector without its chunk
    assert chunk_ids(workspace, embedded=False) == set()
    assert vec_ids(workspace) == chunk_ids(workspace)


def test_a_file_reindexed_during_the_backfill_gets_vectors_of_its_new_text(
    workspace: Path, slow_backfill: StubOpenAI
) -> None:
    backfill = _memcli(workspace, "index", "--json")
    _wait_for_requests(slow_backfill, 1, backfill)
    # the first group (ids of note-000..) is with the provider: rewrite some of its notes
    for i in (0, 1, 2, 150):
        path = workspace / "memory" / f"note-{i:03d}.md"
        path.write_text(f"- fact {i} rewritten: host beta-{i} replaced alpha\n", encoding="utf-8")
    p = _memcli(workspace, "index", "--json", env={"MEMCLI_INDEX_LOCK_TIMEOUT": "1.5"})
    _out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert backfill.poll() is None  # its first group is still with the provider
    slow_backfill.release()  # the provider answers with vectors of the texts as they were
    _out, err = backfill.communicate(timeout=120)
    assert backfill.returncode == 0, err

    stored = _stored_vectors(workspace)
    # no vector left for a chunk that the re-index deleted, none missing
    assert vec_ids(workspace) == set(stored) == chunk_ids(workspace)
    assert chunk_ids(workspace, embedded=True) == chunk_ids(workspace)
    texts = [text for text, _ in stored.values()]
    assert sum("rewritten" in t for t in texts) == 4
    assert not any("the service number 0 runs" in t for t in texts)  # note-000 as it was
    # each stored vector is the provider's vector of the chunk's current text (from the cache)
    settings = load_settings(workspace)
    embedder = RemoteEmbedder.from_settings(settings)
    assert embedder is not None
    before = slow_backfill.count(EMBED)
    expected = embedder.embed(texts)
    assert slow_backfill.count(EMBED) == before  # all cached: nothing re-asked
    for (text, got), want in zip(stored.values(), expected, strict=True):
        assert max(abs(a - b) for a, b in zip(got, want, strict=True)) < 1e-5, text
