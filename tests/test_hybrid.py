"""Hybrid search end to end: LiteLLM over real HTTP to the loopback stub, sqlite-vec KNN,
the global embedding cache, fingerprints, fusion and every degradation path."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memcli.index import db, vectors
from memcli.index.store import Store
from memcli.providers import remote
from memcli.search import fusion
from tests.conftest import Cli
from tests.fake_embedder import FakeProvider
from tests.stub_openai import StubOpenAI

REPO = Path(__file__).resolve().parent.parent
EMBED = "/embeddings"

pytestmark = pytest.mark.filterwarnings("ignore:.*is using the `ReadOnly` qualifier")

FILES = {
    "memory/MEMORY.md": "# Memory\n\n- Production database is PostgreSQL 16 on the db-main host.\n",
    "memory/2026-11-20.md": (
        "# 2026-11-20\n\n"
        "- 10:00 [decision] Use Valkey instead of Redis for the session cache. #infra\n"
        "- 10:05 [incident] The nightly backup job failed because the disk was full.\n"
    ),
    "memory/2026-11-21.md": (
        "# 2026-11-21\n\n"
        "- 09:12 [procedure] Deploy with the release script, then watch the error dashboard.\n"
        "- 15:40 [preference] Reviews happen before noon; nobody merges on Fridays.\n"
    ),
    "memory/coder/2026-11-22.md": (
        "# 2026-11-22\n\n"
        "- 11:00 [fact] The search service indexes Markdown chunks with SQLite FTS5.\n"
        "- 11:30 [fact] Vector search uses cosine similarity over chunk embeddings.\n"
    ),
}


def write_files(root: Path, files: dict[str, str] = FILES) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def model_env(stub: StubOpenAI, model: str = "openai/stub-embed") -> dict[str, str]:
    return {
        "MEMCLI_EMBEDDING_MODEL": model,
        "MEMCLI_EMBEDDING_API_BASE": stub.base_url,
        "MEMCLI_EMBEDDING_API_KEY_ENV": "STUB_API_KEY",
        "STUB_API_KEY": "sk-stub-not-a-secret",
        "MEMCLI_EMBEDDING_TIMEOUT": "5",
        "NO_PROXY": "127.0.0.1,localhost",
    }


@pytest.fixture
def instant_retries(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    sleeps: list[float] = []
    monkeypatch.setattr(remote, "_sleep", sleeps.append)
    return sleeps


@pytest.fixture
def hybrid(
    monkeypatch: pytest.MonkeyPatch, openai_stub: StubOpenAI, instant_retries: list[float]
) -> StubOpenAI:
    """The stub embedder configured through MEMCLI_EMBEDDING_* variables."""
    for key, value in model_env(openai_stub).items():
        monkeypatch.setenv(key, value)
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(var, raising=False)
    return openai_stub


def open_store(root: Path) -> Store:
    store = Store.open(root / ".memcli" / "index.db")
    assert store.ensure_vec(), store.vec_error
    return store


def vec_ids(root: Path) -> set[int]:
    store = open_store(root)
    try:
        if not store.has_table(vectors.TABLE):
            return set()
        return {int(r[0]) for r in store.conn.execute(f"SELECT rowid FROM {vectors.TABLE}")}
    finally:
        store.close()


def chunk_ids(root: Path, embedded: bool | None = None) -> set[int]:
    store = open_store(root)
    try:
        sql = "SELECT id FROM chunks"
        if embedded is not None:
            sql += f" WHERE embedded = {int(embedded)}"
        return {int(r[0]) for r in store.conn.execute(sql)}
    finally:
        store.close()


def embedded_inputs(stub: StubOpenAI) -> list[str]:
    out: list[str] = []
    for r in stub.requests:
        if r["path"].endswith(EMBED):
            inp = r["body"]["input"]
            out.extend([inp] if isinstance(inp, str) else inp)
    return out


def search(cli: Cli, *args: str) -> dict[str, Any]:
    run = cli("search", "--json", *args)
    assert run.exit_code in (0, 1), run.stderr
    return run.json()


# --- keyword mode stays exactly as it was ---------------------------------------------------------


NO_MODEL_SCRIPT = """
import json, sys
from typer.testing import CliRunner
from memcli.cli.app import app
ws = sys.argv[1]
r = CliRunner()
outs = {}
for name, args in [
    ("index", ["index", "--json"]),
    ("auto", ["search", "--json", "database backup"]),
    ("keyword", ["search", "--json", "--strategy", "keyword", "database backup"]),
    ("status", ["status", "--json"]),
    ("add", ["add", "--json", "Backups now run at 02:00."]),
]:
    res = r.invoke(app, ["-w", ws, *args])
    outs[name] = {"code": res.exit_code, "out": res.stdout}
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("litellm", "openai", "httpx"))
print(json.dumps({"outs": outs, "heavy": heavy}))
"""


def subprocess_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_EMBEDDING")}
    env["PYTHONPATH"] = str(REPO)
    env.update(extra or {})
    return env


@pytest.mark.slow
def test_no_model_never_imports_litellm_and_is_keyword_mode(workspace: Path) -> None:
    write_files(workspace)
    run = subprocess.run(
        [sys.executable, "-c", NO_MODEL_SCRIPT, str(workspace)],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        cwd=REPO,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["heavy"] == []
    outs = data["outs"]
    assert all(o["code"] == 0 for o in outs.values()), outs
    auto, keyword = json.loads(outs["auto"]["out"]), json.loads(outs["keyword"]["out"])
    assert auto["mode"] == "keyword" and auto["warnings"] == []
    assert auto["results"] == keyword["results"]
    assert auto["results"]
    assert all("vector" not in h["scores"] and "fusion" not in h["scores"] for h in auto["results"])
    status = json.loads(outs["status"]["out"])
    assert status["mode"] == "keyword"
    assert status["mode_reason"] == "no embedding model configured"
    assert status["embedding"] == {"model": None, "vectors": 0, "coverage": 0.0}
    index = json.loads(outs["index"]["out"])
    assert index["embedded"] == 0 and index["missing_vectors"] == 0
    # no vectors table was made, and no cache file either
    assert vec_ids(workspace) == set()
    assert not (Path(os.environ["MEMCLI_CACHE_DIR"]) / "embeddings.db").exists()


def test_forcing_vectors_without_a_model_is_a_usage_error(cli: Cli, workspace: Path) -> None:
    write_files(workspace)
    run = cli("search", "--json", "--strategy", "hybrid", "database")
    assert run.exit_code == 2
    assert "needs an embedding model" in run.stderr
    run = cli("search", "--strategy", "sideways", "database")
    assert run.exit_code == 2 and "unknown search strategy" in run.stderr


# --- hybrid end to end ----------------------------------------------------------------------------


def test_hybrid_search_end_to_end(cli: Cli, workspace: Path, hybrid: StubOpenAI) -> None:
    write_files(workspace)
    run = cli("index", "--json")
    assert run.exit_code == 0, run.stderr
    report = run.json()
    chunks = report["chunks"]
    assert report["embedded"] == chunks > 0 and report["missing_vectors"] == 0
    assert hybrid.count(EMBED) == 1  # one batch of 64

    result = search(cli, "session cache valkey")
    assert result["mode"] == "hybrid" and result["warnings"] == []
    top = result["results"][0]
    assert "Valkey" in top["snippet"]
    assert {"keyword", "vector", "fusion"} <= set(top["scores"])
    assert 0 <= top["score"] <= 1
    assert top["score"] == pytest.approx(top["scores"]["fusion"], abs=1e-3)
    # KNN candidates that share no word with the query still take part in the fusion
    wide = search(cli, "-n", "50", "session cache valkey")["results"]
    assert any("keyword" not in h["scores"] and "vector" in h["scores"] for h in wide)

    vec_only = search(cli, "--strategy", "vector", "cosine similarity embeddings")
    assert vec_only["mode"] == "vector"
    assert "cosine similarity" in vec_only["results"][0]["snippet"]
    assert all("fusion" not in h["scores"] for h in vec_only["results"])
    scores = [h["score"] for h in vec_only["results"]]
    assert scores == sorted(scores, reverse=True)

    kw = search(cli, "--strategy", "keyword", "session cache valkey")
    assert kw["mode"] == "keyword" and "vector" not in kw["results"][0]["scores"]

    status = cli("status", "--json").json()
    assert status["mode"] == "hybrid"
    assert status["embedding"]["model"] == "openai/stub-embed"
    assert status["embedding"]["vectors"] == chunks
    assert status["embedding"]["coverage"] == 1.0
    assert status["embedding"]["dimensions"] == hybrid.dims
    assert status["cache"]["entries"] >= chunks and status["cache"]["bytes"] > 0


def test_filters_apply_before_the_knn_scan(
    cli: Cli, workspace: Path, fake_vectors: FakeProvider
) -> None:
    write_files(workspace)
    assert cli("index").exit_code == 0
    for strategy in ("vector", "hybrid"):
        query = "search service indexes markdown chunks"
        result = search(cli, "--strategy", strategy, "--source", "coder", "-n", "10", query)
        paths = {h["path"] for h in result["results"]}
        assert paths == {"memory/coder/2026-11-22.md"}
        result = search(cli, "--strategy", strategy, "--type", "incident", "database disk")
        assert [h["path"] for h in result["results"]] == ["memory/2026-11-20.md"]


def test_rrf_puts_the_passage_first_in_both_lists_at_one(
    cli: Cli, workspace: Path, fake_vectors: FakeProvider
) -> None:
    write_files(workspace)
    # shares only a stop word with the query: no keyword match, a (weak) vector neighbour
    write_files(workspace, {"memory/misc.md": "# Misc\n\n- It rolled over and over.\n"})
    assert cli("config", "set", "search.fusion", "rrf").exit_code == 0
    assert cli("index").exit_code == 0
    query = "vector search uses cosine similarity over chunk embeddings"
    kw = search(cli, "--strategy", "keyword", query)["results"]
    vec = search(cli, "--strategy", "vector", query)["results"]
    both = search(cli, "--strategy", "hybrid", "-n", "50", query)["results"]
    assert kw[0]["path"] == vec[0]["path"] == both[0]["path"] == "memory/coder/2026-11-22.md"
    assert both[0]["scores"]["fusion"] == pytest.approx(1.0)
    fused = [h["scores"]["fusion"] for h in both]
    assert fused == sorted(fused, reverse=True)
    assert all(0 < f <= 1 for f in fused)
    # found by one list only: at most half of the best possible RRF (equal weights)
    one_list = [h["scores"]["fusion"] for h in both if "keyword" not in h["scores"]]
    assert one_list and max(one_list) <= 0.5 + 1e-9
    assert query in fake_vectors.inputs  # the vectors were made in this process


def test_weighted_fusion_is_selectable_by_setting(
    cli: Cli, workspace: Path, fake_vectors: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_files(workspace)
    assert cli("index").exit_code == 0
    monkeypatch.setenv("MEMCLI_SEARCH_FUSION", "weighted")
    monkeypatch.setenv("MEMCLI_SEARCH_KEYWORD_WEIGHT", "0.3")
    monkeypatch.setenv("MEMCLI_SEARCH_VECTOR_WEIGHT", "0.7")
    result = search(cli, "-n", "20", "release script deploy")
    assert result["mode"] == "hybrid"
    for h in result["results"]:
        s = h["scores"]
        expected = 0.3 * s.get("keyword", 0.0) + 0.7 * s.get("vector", 0.0)
        assert s["fusion"] == pytest.approx(expected, abs=2e-3)
        assert "vector" in s  # keyword candidates outside the KNN list get an exact similarity
    monkeypatch.setenv("MEMCLI_SEARCH_FUSION", "borda")
    run = cli("search", "--json", "deploy")
    assert run.exit_code == 2 and "search.fusion" in run.stderr


def test_the_fake_embedder_gives_the_stubs_vectors(
    workspace: Path, hybrid: StubOpenAI, fake_vectors: FakeProvider
) -> None:
    """Tests that take vectors from tests/fake_embedder.py expect what the stub would give."""
    from memcli.config import load_settings
    from memcli.providers.embeddings import RemoteEmbedder, embedder_from_settings

    texts = ["Deploy on Tuesdays only.", "token sk-proj-abcdefghijklmnopqrstuvwxyz0123 leaked"]
    settings = load_settings(workspace, {"embedding.model": "openai/stub-embed"})
    remote_embedder = RemoteEmbedder.from_settings(settings, with_cache=False)
    assert remote_embedder is not None
    fake = embedder_from_settings(load_settings(workspace))  # fake/stub-embed: the seam
    assert fake is not None and fake.fingerprint.provider == "fake"
    got, want = fake.embed(texts), remote_embedder.embed(texts)
    assert len(got) == len(want) == 2
    for g, w in zip(got, want, strict=True):
        assert max(abs(a - b) for a, b in zip(g, w, strict=True)) < 1e-6
    assert fake_vectors.inputs == embedded_inputs(hybrid)  # redacted alike
    assert "sk-proj-abcdefghijklmnopqrstuvwxyz0123" not in " ".join(fake_vectors.inputs)


def test_fusion_functions() -> None:
    p = fusion.FusionParams("rrf", 60, 0.5, 0.5)
    fused = fusion.rrf({1: 0.9, 2: 0.5}, {2: 0.8, 3: 0.7}, p)
    assert fused[2] > fused[1] > fused[3] > 0  # 2 is in both lists; 1 beats 3 by id order
    assert fusion.rrf({7: 1.0}, {7: 1.0}, p)[7] == pytest.approx(1.0)
    w = fusion.weighted({1: 1.0}, {1: 0.5, 2: 1.0}, fusion.FusionParams("weighted", 60, 1, 3))
    assert w == {1: pytest.approx(0.625), 2: pytest.approx(0.75)}
    assert fusion.ranks({5: 0.1, 3: 0.1, 9: 0.2}) == {9: 1, 3: 2, 5: 3}
    with pytest.raises(Exception, match="both be 0"):
        fusion.FusionParams("rrf", 60, 0, 0).check()


# --- the global cache -----------------------------------------------------------------------------


@pytest.mark.slow
def test_cache_rebuild_and_second_workspace_cost_no_calls(
    cli: Cli, workspace: Path, hybrid: StubOpenAI, tmp_path: Path
) -> None:
    write_files(workspace)
    assert cli("index").exit_code == 0
    first = hybrid.count(EMBED)
    assert first >= 1

    shutil.rmtree(workspace / ".memcli")
    run = cli("index", "--json")
    assert run.exit_code == 0 and run.json()["embedded"] == run.json()["chunks"]
    assert hybrid.count(EMBED) == first  # rm -rf .memcli && memcli index: zero calls

    other = tmp_path / "other"
    other.mkdir()
    assert Cli(other)("init").exit_code == 0
    write_files(other)
    assert Cli(other)("index").exit_code == 0
    assert hybrid.count(EMBED) == first
    assert chunk_ids(other, embedded=False) == set()

    # query embeddings are cached too, and so are the entries of the chunks a search found,
    # embedded one by one to quote the nearest: one more request, the first time only
    search(cli, "nightly backup")
    after_query = hybrid.count(EMBED)
    assert after_query == first + 2
    search(cli, "nightly backup")
    search(Cli(other), "nightly backup")
    assert hybrid.count(EMBED) == after_query


CACHED_SCRIPT = """
import json, shutil, sys
from pathlib import Path
from typer.testing import CliRunner
from memcli.cli.app import app
ws = sys.argv[1]
shutil.rmtree(Path(ws) / ".memcli")
r = CliRunner()
index = r.invoke(app, ["-w", ws, "index", "--json"])
found = r.invoke(app, ["-w", ws, "search", "--json", "nightly backup"])
status = r.invoke(app, ["-w", ws, "status", "--json"])
print(json.dumps({
    "index": index.stdout, "search": found.stdout, "status": status.stdout,
    "litellm": "litellm" in sys.modules,
}))
"""


@pytest.mark.slow
def test_everything_cached_means_litellm_is_not_even_imported(
    cli: Cli, workspace: Path, hybrid: StubOpenAI
) -> None:
    write_files(workspace)
    assert cli("index").exit_code == 0
    search(cli, "nightly backup")
    calls = hybrid.count(EMBED)
    run = subprocess.run(
        [sys.executable, "-c", CACHED_SCRIPT, str(workspace)],
        capture_output=True,
        text=True,
        env=subprocess_env(model_env(hybrid)),
        cwd=REPO,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["litellm"] is False
    assert json.loads(data["search"])["mode"] == "hybrid"
    assert json.loads(data["status"])["embedding"]["coverage"] == 1.0
    assert hybrid.count(EMBED) == calls


def test_secrets_are_redacted_before_they_reach_the_provider(
    cli: Cli, workspace: Path, hybrid: StubOpenAI
) -> None:
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    write_files(workspace, {"memory/notes.md": f"# Notes\n\nThe deploy token: {secret}\n"})
    assert cli("index").exit_code == 0
    search(cli, f"token {secret}")
    sent = embedded_inputs(hybrid)
    assert sent and all(secret not in t for t in sent)
    assert any("[REDACTED:" in t for t in sent)


# --- degradation ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_provider_down_during_index_keeps_keyword_index_and_backfills_later(
    cli: Cli, workspace: Path, hybrid: StubOpenAI
) -> None:
    write_files(workspace)
    hybrid.fail_status, hybrid.fail_times = 500, 10_000
    run = cli("index", "--json")
    assert run.exit_code == 0
    report = run.json()
    assert report["files"] == len(FILES) + 0 and report["chunks"] > 0
    assert report["embedded"] == 0 and report["missing_vectors"] == report["chunks"]
    assert "HTTP 500" in run.stderr and "without vectors" in run.stderr
    assert chunk_ids(workspace, embedded=False) == chunk_ids(workspace)
    # keyword search over the complete index still works
    kw = search(cli, "--strategy", "keyword", "Valkey")
    assert kw["results"] and kw["mode"] == "keyword"
    status = cli("status", "--json").json()
    assert status["mode"] == "keyword" and status["embedding"]["coverage"] == 0.0
    assert "no vectors" in status["mode_reason"]

    hybrid.fail_status, hybrid.fail_times = None, 0
    run = cli("index", "--json")
    assert run.exit_code == 0, run.stderr
    assert run.json()["embedded"] == report["chunks"] and run.json()["missing_vectors"] == 0
    assert chunk_ids(workspace, embedded=False) == set()
    assert vec_ids(workspace) == chunk_ids(workspace)
    assert cli("status", "--json").json()["embedding"]["coverage"] == 1.0


@pytest.mark.slow
def test_provider_unreachable_during_index(
    cli: Cli, workspace: Path, hybrid: StubOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    monkeypatch.setenv("MEMCLI_EMBEDDING_API_BASE", dead)
    write_files(workspace)
    run = cli("index", "--json")
    assert run.exit_code == 0
    assert "connection error" in run.stderr
    assert run.json()["missing_vectors"] == run.json()["chunks"]
    result = search(cli, "Valkey")
    assert result["mode"] == "keyword" and result["results"]
    assert any("connection error" in w for w in result["warnings"])


@pytest.mark.slow
def test_partial_failure_keeps_the_batches_already_embedded(
    cli: Cli, workspace: Path, hybrid: StubOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_EMBEDDING_BATCH_SIZE", "1")
    monkeypatch.setenv("MEMCLI_EMBEDDING_MAX_RETRIES", "0")
    write_files(workspace)
    assert cli("index", "--no-embed").exit_code == 0
    total = len(chunk_ids(workspace))
    assert total > 3
    served: list[str] = []
    original = hybrid._handle

    def third_request_fails(h: Any, method: str) -> None:
        served.append(method)
        if len(served) == 3:
            hybrid.fail_status, hybrid.fail_times = 503, 1
        original(h, method)

    monkeypatch.setattr(hybrid, "_handle", third_request_fails)
    run = cli("index", "--json")
    assert run.exit_code == 0
    assert "HTTP 503" in run.stderr
    # the two batches that succeeded are cached, and stored from the cache at once
    assert run.json()["embedded"] == 2
    assert run.json()["missing_vectors"] == total - 2
    assert "2 taken from the embedding cache" in run.stderr
    sent_before = len(embedded_inputs(hybrid))
    assert sent_before == 3
    run = cli("index", "--json")
    assert run.exit_code == 0 and run.json()["missing_vectors"] == 0
    # only the rest was sent again
    assert len(embedded_inputs(hybrid)) - sent_before == total - 2
    assert vec_ids(workspace) == chunk_ids(workspace)


@pytest.mark.slow
def test_provider_down_during_search_falls_back_to_keyword(
    cli: Cli, workspace: Path, hybrid: StubOpenAI
) -> None:
    write_files(workspace)
    assert cli("index").exit_code == 0
    hybrid.fail_status, hybrid.fail_times = 500, 10_000
    run = cli("search", "--json", "release script")
    assert run.exit_code == 0
    result = run.json()
    assert result["mode"] == "keyword"
    assert result["results"] and "release script" in result["results"][0]["snippet"]
    assert any("HTTP 500" in w and "fell back to keyword" in w for w in result["warnings"])
    # a query embedded before is served from the cache even while the provider is down
    hybrid.fail_status, hybrid.fail_times = None, 0
    assert search(cli, "Valkey cache")["mode"] == "hybrid"
    hybrid.fail_status, hybrid.fail_times = 500, 10_000
    assert search(cli, "Valkey cache")["mode"] == "hybrid"


@pytest.mark.slow
def test_hanging_provider_times_out_into_keyword_search(
    cli: Cli, workspace: Path, hybrid: StubOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_files(workspace)
    assert cli("index").exit_code == 0
    monkeypatch.setenv("MEMCLI_EMBEDDING_TIMEOUT", "0.5")
    hybrid.hang_seconds = 30
    result = search(cli, "nightly backup disk")
    assert result["mode"] == "keyword" and result["results"]
    assert any("timed out" in w for w in result["warnings"])


def test_new_chunks_are_embedded_by_the_search_that_syncs_them(
    cli: Cli, workspace: Path, hybrid: StubOpenAI
) -> None:
    write_files(workspace)
    assert cli("index").exit_code == 0
    (workspace / "memory" / "late.md").write_text("# Late\n\nKafka topics are compacted.\n")
    result = search(cli, "kafka compacted")
    assert result["mode"] == "hybrid" and result["warnings"] == []
    assert result["results"][0]["path"] == "memory/late.md"
    assert chunk_ids(workspace, embedded=False) == set()


@pytest.mark.slow
def test_index_no_embed_then_status_and_search_backfill(
    cli: Cli, workspace: Path, hybrid: StubOpenAI
) -> None:
    write_files(workspace)
    run = cli("index", "--no-embed", "--json")
    assert run.exit_code == 0 and hybrid.count(EMBED) == 0
    assert run.json()["embedded"] == 0
    status = cli("status", "--json").json()
    assert status["embedding"]["coverage"] == 0.0 and status["mode"] == "keyword"
    # a handful of waiting chunks is embedded by the next search
    result = search(cli, "Valkey")
    assert result["mode"] == "hybrid"
    assert cli("status", "--json").json()["embedding"]["coverage"] == 1.0


# --- fingerprints ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_fingerprint_change_reembeds_from_cache_and_never_mixes(
    cli: Cli, workspace: Path, hybrid: StubOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_files(workspace)
    assert cli("index").exit_code == 0
    chunks = len(chunk_ids(workspace))
    assert cli("status", "--json").json()["embedding"]["dimensions"] == 64

    monkeypatch.setenv("MEMCLI_EMBEDDING_DIMENSIONS", "32")
    # a search with the new setting does not use the old vectors...
    status = cli("status", "--json").json()
    assert status["mode"] == "keyword" and "re-embed" in status["mode_reason"]
    run = cli("index", "--json")
    assert run.exit_code == 0
    assert "embedding model changed" in run.stderr and "re-embedding" in run.stderr
    assert run.json()["embedded"] == chunks
    status = cli("status", "--json").json()
    assert status["embedding"]["dimensions"] == 32 and status["embedding"]["coverage"] == 1.0
    assert len(vec_ids(workspace)) == chunks  # the old 64-dim rows are gone, not mixed in
    assert search(cli, "Valkey")["mode"] == "hybrid"

    # back to the first fingerprint: every vector comes from the cache
    calls = hybrid.count(EMBED)
    monkeypatch.delenv("MEMCLI_EMBEDDING_DIMENSIONS")
    run = cli("index", "--json")
    assert "embedding model changed" in run.stderr
    assert f"{chunks} from the cache, 0 from the provider" in run.stderr
    assert hybrid.count(EMBED) == calls
    assert cli("status", "--json").json()["embedding"]["dimensions"] == 64

    # another model name: new vectors from the provider, never the cached ones of the old model
    monkeypatch.setenv("MEMCLI_EMBEDDING_MODEL", "openai/stub-embed-v2")
    result = search(cli, "Valkey")  # few chunks: the search re-embeds them itself
    assert result["mode"] == "hybrid"
    assert hybrid.count(EMBED) > calls
    assert any("embedding model changed" in w for w in result["warnings"])
    store = open_store(workspace)
    try:
        fingerprint = json.loads(vectors.index_fingerprint(store) or "{}")
        assert fingerprint["model"] == "openai/stub-embed-v2"
    finally:
        store.close()


# --- consistency of vectors with chunks -----------------------------------------------------------


@pytest.mark.slow
def test_edit_and_delete_leave_no_orphan_vectors(
    cli: Cli, workspace: Path, hybrid: StubOpenAI
) -> None:
    write_files(workspace)
    assert cli("index").exit_code == 0
    assert vec_ids(workspace) == chunk_ids(workspace)
    before = len(vec_ids(workspace))

    daily = workspace / "memory" / "2026-11-21.md"
    daily.write_text("# 2026-11-21\n\n- 09:12 [procedure] Deploy on Tuesdays only.\n")
    (workspace / "memory" / "2026-11-20.md").unlink()
    assert cli("index").exit_code == 0
    assert vec_ids(workspace) == chunk_ids(workspace) == chunk_ids(workspace, embedded=True)
    assert len(vec_ids(workspace)) < before
    # a rename reuses the cached vectors
    calls = hybrid.count(EMBED)
    daily.rename(workspace / "memory" / "deploys.md")
    assert cli("index").exit_code == 0
    assert hybrid.count(EMBED) == calls
    assert vec_ids(workspace) == chunk_ids(workspace)
    # --force rebuild: same invariant, all from the cache
    assert cli("index", "--force").exit_code == 0
    assert vec_ids(workspace) == chunk_ids(workspace) and hybrid.count(EMBED) == calls


NO_VEC_SCRIPT = """
import json, sys
sys.modules["sqlite_vec"] = None  # as on a Python without the sqlite-vec package
from pathlib import Path
from typer.testing import CliRunner
from memcli.cli.app import app
ws = sys.argv[1]
(Path(ws) / "memory" / "2026-11-20.md").unlink()
r = CliRunner()
index = r.invoke(app, ["-w", ws, "index", "--json"])
found = r.invoke(app, ["-w", ws, "search", "--json", "Valkey deploy"])
status = r.invoke(app, ["-w", ws, "status", "--json"])
print(json.dumps({"index": [index.exit_code, index.stdout, index.stderr],
                  "search": [found.exit_code, found.stdout], "status": status.stdout}))
"""


@pytest.mark.slow
def test_without_sqlite_vec_keyword_works_status_says_why_and_orphans_are_purged_later(
    cli: Cli, workspace: Path, hybrid: StubOpenAI
) -> None:
    write_files(workspace)
    assert cli("index").exit_code == 0
    run = subprocess.run(
        [sys.executable, "-c", NO_VEC_SCRIPT, str(workspace)],
        capture_output=True,
        text=True,
        env=subprocess_env(model_env(hybrid)),
        cwd=REPO,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["index"][0] == 0
    assert "sqlite-vec cannot be loaded" in data["index"][2]
    code, out = data["search"]
    assert code == 0
    found = json.loads(out)
    assert found["mode"] == "keyword" and found["results"]
    assert any("sqlite-vec" in w for w in found["warnings"])
    status = json.loads(data["status"])
    assert status["mode"] == "keyword"
    assert "sqlite-vec cannot be loaded" in status["mode_reason"]
    assert "not installed" in status["mode_reason"]
    # the deleted file's vectors could not be removed then; the next normal run purges them
    assert vec_ids(workspace) - chunk_ids(workspace)
    assert cli("index").exit_code == 0
    assert vec_ids(workspace) == chunk_ids(workspace)


def test_vector_search_works_on_this_python() -> None:
    conn = db.connect(":memory:")
    assert db.load_vec(conn) is None
    if not hasattr(sqlite3.Connection, "enable_load_extension"):
        assert db.driver_name() == "sqlean"
    conn.execute("CREATE VIRTUAL TABLE v USING vec0(embedding float[3] distance_metric=cosine)")
    from memcli.index.embedcache import pack

    vectors: list[list[float]] = [[1, 0, 0], [0, 1, 0], [0.9, 0.1, 0]]
    for i, vec in enumerate(vectors, start=1):
        conn.execute("INSERT INTO v (rowid, embedding) VALUES (?, ?)", (i, pack(vec)))
    rows = conn.execute(
        "SELECT rowid FROM v WHERE embedding MATCH ? AND k = ? ORDER BY distance",
        (pack([1, 0, 0]), 2),
    ).fetchall()
    assert [r[0] for r in rows] == [1, 3]


@pytest.mark.slow
def test_add_embeds_the_new_fact_and_survives_a_provider_outage(
    cli: Cli, workspace: Path, hybrid: StubOpenAI
) -> None:
    write_files(workspace)
    assert cli("index").exit_code == 0
    run = cli("add", "--json", "Grafana alerts page the on-call engineer.")
    assert run.exit_code == 0, run.stderr
    assert chunk_ids(workspace, embedded=False) == set()
    assert vec_ids(workspace) == chunk_ids(workspace)

    hybrid.fail_status, hybrid.fail_times = 500, 10_000
    run = cli("add", "--json", "Pager rotation changes every Monday.")
    assert run.exit_code == 0 and run.json()["added"] is True
    assert "HTTP 500" in run.stderr
    assert len(chunk_ids(workspace, embedded=False)) >= 1  # recorded for the back-fill
    hybrid.fail_status, hybrid.fail_times = None, 0
    result = search(cli, "pager rotation monday")
    assert result["mode"] == "hybrid" and result["warnings"] == []
    assert chunk_ids(workspace, embedded=False) == set()


def test_a_batch_embeds_all_its_queries_in_one_request(
    cli: Cli, workspace: Path, hybrid: StubOpenAI
) -> None:
    write_files(workspace)
    assert cli("index").exit_code == 0
    before = len([r for r in hybrid.requests if r["path"].endswith(EMBED)])
    queries = ["valkey cache", "s3 token rotation", "deploy window", "", "valkey cache"]
    r = cli("search", "--batch", input="\n".join(queries) + "\n")
    assert r.exit_code == 0, r.stderr
    answers = r.jsonl()
    assert len(answers) == len(queries)
    assert [a["mode"] for a in answers if "mode" in a] == ["hybrid"] * 4
    calls = [r for r in hybrid.requests if r["path"].endswith(EMBED)][before:]
    # one request for the three distinct queries; the searches' later requests embed entries
    # of the chunks they found (to quote the nearest), never a query again
    assert sorted(calls[0]["body"]["input"]) == sorted(
        ["valkey cache", "s3 token rotation", "deploy window"]
    )
    later = [text for call in calls[1:] for text in call["body"]["input"]]
    assert not set(later) & set(queries)
    assert later and not any(text.startswith("- ") for text in later), later  # kind and words
