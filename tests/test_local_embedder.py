"""The local embedder (``embedding.model = "local/..."``, fastembed) with the real model.

The model's folder comes from ``MEMCLI_TEST_MODEL_DIR``, which the Makefile sets when
``../shared/models/all-MiniLM-L6-v2-onnx`` exists and ``.ci/run`` requires; without it these
tests are skipped (a plain ``pytest`` on a machine without the model).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Cli

MODEL = "local/sentence-transformers/all-MiniLM-L6-v2"
MODEL_DIR = os.environ.get("MEMCLI_TEST_MODEL_DIR", "")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not MODEL_DIR or not Path(MODEL_DIR).is_dir(), reason="MEMCLI_TEST_MODEL_DIR not set"
    ),
]

FACTS = [
    "Use Valkey instead of Redis for the session cache.",
    "The nightly export failed because the S3 token expired.",
    "Caroline adopted a dog named Biscuit last spring.",
    "The quarterly review moved to the last Friday of each month.",
]


@pytest.fixture
def local(cli: Cli, workspace: Path) -> Cli:
    for i, fact in enumerate(FACTS):  # one file each: a vector scores a chunk
        (workspace / "memory" / f"note{i}.md").write_text(f"- {fact}\n")
    assert cli("config", "set", "embedding.model", MODEL).exit_code == 0
    assert cli("config", "set", "embedding.model_path", MODEL_DIR).exit_code == 0
    r = cli("index", "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["embed_requests"] >= 1 and r.json()["embed_cached"] == 0
    return cli


def test_hybrid_search_finds_a_fact_by_meaning(local: Cli) -> None:
    # no word of the question is in the fact: only the vectors can find it
    r = local("search", "--json", "-n", "1", "which key-value store holds user sessions")
    assert r.exit_code == 0, r.stderr
    out = r.json()
    assert out["mode"] == "hybrid"
    assert "Valkey" in out["results"][0]["snippet"]
    pet = local("search", "--json", "-n", "1", "puppy").json()["results"][0]["snippet"]
    assert "Biscuit" in pet


def test_status_reports_the_local_model(local: Cli) -> None:
    st = local("status", "--json").json()
    assert st["mode"] == "hybrid"
    assert st["embedding"]["model"] == MODEL
    assert st["embedding"]["dimensions"] == 384
    assert st["embedding"]["coverage"] == 1.0


def test_a_rebuild_costs_no_model_call(local: Cli, tmp_path: Path) -> None:
    question = "which key-value store holds user sessions"
    assert local("search", "--json", question).json()["mode"] == "hybrid"
    empty = tmp_path / "no-model"
    empty.mkdir()
    # the model can no longer load: every vector must come from the cache
    assert local("config", "set", "embedding.model_path", str(empty)).exit_code == 0
    r = local("index", "--force", "--json")
    assert r.exit_code == 0, r.stderr
    report = r.json()
    assert report["embedded"] == report["chunks"] == report["embed_cached"] > 0
    assert report["embed_requests"] == 0
    assert local("status", "--json").json()["embedding"]["coverage"] == 1.0
    again = local("search", "--json", question).json()
    assert again["mode"] == "hybrid"  # the question's vector is cached too
    assert "Valkey" in again["results"][0]["snippet"]
    new = local("search", "--json", "a question never asked").json()
    assert new["mode"] == "keyword" and "no ONNX model" in " ".join(new["warnings"])


def test_a_missing_model_falls_back_to_keyword_with_a_warning(
    cli: Cli, workspace: Path, tmp_path: Path
) -> None:
    assert cli("add", FACTS[0]).exit_code == 0
    empty = tmp_path / "no-model"
    empty.mkdir()
    assert cli("config", "set", "embedding.model", MODEL).exit_code == 0
    assert cli("config", "set", "embedding.model_path", str(empty)).exit_code == 0
    r = cli("search", "--json", "valkey")
    assert r.exit_code == 0
    assert r.json()["results"], "keyword search still answers"
    warnings = " ".join(r.json()["warnings"]) + r.stderr
    assert "no ONNX model" in warnings and str(empty) in warnings


def test_keyword_commands_do_not_load_the_model(local: Cli, workspace: Path) -> None:
    code = (
        "import sys, runpy; sys.argv = ['memcli', '-w', sys.argv[1], *sys.argv[2:]];"
        "\ntry: runpy.run_module('memcli', run_name='__main__')"
        "\nexcept SystemExit: pass"
        "\nprint(sorted(m for m in ('fastembed', 'onnxruntime') if m in sys.modules))"
    )
    for args in (["status", "--json"], ["search", "--strategy", "keyword", "--json", "valkey"]):
        r = subprocess.run(
            [sys.executable, "-c", code, str(workspace), *args], capture_output=True, text=True
        )
        assert r.stdout.strip().splitlines()[-1] == "[]", (args, r.stdout[-300:], r.stderr[-300:])


def test_doctor_loads_the_model_and_reports_it(local: Cli, tmp_path: Path) -> None:
    doc = local("doctor", "--json").json()
    check = next(c for c in doc["checks"] if c["name"] == "embedding")
    assert check["status"] == "ok", check
    assert check["details"]["dimensions"] == 384
    assert check["details"]["where"] == MODEL_DIR
    assert check["details"]["runtime"] == "onnxruntime"  # a known model's folder
    empty = tmp_path / "no-model"
    empty.mkdir()
    assert local("config", "set", "embedding.model_path", str(empty)).exit_code == 0
    doc = local("doctor", "--json").json()
    check = next(c for c in doc["checks"] if c["name"] == "embedding")
    assert check["status"] == "problem" and "no ONNX model" in check["summary"]


def test_init_local_sets_up_semantic_search(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    cli = Cli(root)
    r = cli("init", "--local", "--model-path", MODEL_DIR, "--json")
    assert r.exit_code == 0, r.stderr
    assert any("embedding.model = " + MODEL in c for c in r.json()["created"])
    assert cli("add", FACTS[0]).exit_code == 0
    out = cli("search", "--json", "which key-value store holds user sessions")
    assert out.exit_code == 0, out.stderr
    assert out.json()["mode"] == "hybrid"  # the user's own file: trusted, no warning
    assert "memcli trust" not in out.stderr
    assert Cli(tmp_path / "x")("init", "--model-path", MODEL_DIR).exit_code == 2


IMPORTS = (
    "import sys, runpy; sys.argv = ['memcli', '-w', sys.argv[1], *sys.argv[2:]];"
    "\ntry: runpy.run_module('memcli', run_name='__main__')"
    "\nexcept SystemExit: pass"
    "\nprint(sorted(m for m in ('fastembed', 'onnxruntime', 'numpy') if m in sys.modules))"
)


def _imported(workspace: Path, *args: str) -> list[str]:
    r = subprocess.run(
        [sys.executable, "-c", IMPORTS, str(workspace), *args], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr[-500:]
    names: list[str] = eval(r.stdout.strip().splitlines()[-1])  # a printed list of names
    return names


def test_a_model_folder_runs_without_fastembed(local: Cli, workspace: Path) -> None:
    # a new query loads the folder's model on ONNX Runtime directly: fastembed's import (half a
    # second of start-up) is not paid; a repeated query finds its vector in the cache and
    # loads neither ONNX Runtime nor numpy
    question = "who has a pet"
    assert _imported(workspace, "search", "--json", question) == ["numpy", "onnxruntime"]
    assert _imported(workspace, "search", "--json", question) == []
    top = local("search", "--json", "-n", "1", question).json()["results"][0]
    assert "Biscuit" in top["snippet"]


def _fastembed_vectors(texts: list[str]) -> list[list[float]]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from fastembed import TextEmbedding

    model = TextEmbedding(model_name=MODEL.split("/", 1)[1], specific_model_path=MODEL_DIR)
    return [v.tolist() for v in model.embed(texts, batch_size=1)]


def test_the_direct_runtime_gives_fastembeds_vectors_in_the_callers_order() -> None:
    from memcli.providers.local import LocalEmbedder

    # lengths out of order: the embedder sorts them for its batches and must give them back
    texts = [FACTS[0] * 6, "puppy", FACTS[1], "", FACTS[2] * 3, "ok", "Résumé — café, 日本語"]
    embedder = LocalEmbedder(MODEL, model_path=MODEL_DIR)
    got = embedder.embed(texts)
    assert embedder.runtime == "onnxruntime"
    want = _fastembed_vectors(texts)
    for g, w in zip(got, want, strict=True):
        assert len(g) == 384
        assert max(abs(a - b) for a, b in zip(g, w, strict=True)) < 1e-4
    # one model call per embedding.batch_size texts, however many model runs that takes
    assert embedder.stats.requests == 1 and embedder.stats.embedded == len(texts)


def test_a_model_memcli_does_not_know_goes_through_fastembed(tmp_path: Path) -> None:
    from memcli.providers.local import LocalEmbedder

    # fastembed pools this multilingual model without normalising (a vector of another
    # length) and reads it from model_optimized.onnx: the same files stand in for it
    folder = tmp_path / "model"
    folder.mkdir()
    for f in Path(MODEL_DIR).iterdir():
        (folder / f.name).symlink_to(f)
    (folder / "model_optimized.onnx").symlink_to(Path(MODEL_DIR) / "model.onnx")
    other = "local/sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"
    embedder = LocalEmbedder(other, model_path=str(folder))
    vector = embedder.embed([FACTS[0]])[0]
    assert embedder.runtime == "fastembed"
    assert len(vector) == 384 and abs(sum(x * x for x in vector) - 1.0) > 1e-3


def _graph_folders(cache: Path) -> list[Path]:
    from memcli.providers.local import GRAPHS

    return sorted((cache / GRAPHS).iterdir()) if (cache / GRAPHS).is_dir() else []


def test_a_later_process_loads_the_optimised_graph_kept_in_the_cache(tmp_path: Path) -> None:
    import onnxruntime as ort  # type: ignore[import-untyped]

    from memcli.providers.local import LocalEmbedder

    texts = [FACTS[0], "puppy", "Résumé — café, 日本語"]
    plain = LocalEmbedder(MODEL, model_path=MODEL_DIR).embed(texts)  # optimised here only
    first = LocalEmbedder(MODEL, model_path=MODEL_DIR, cache_dir=tmp_path)
    assert first.embed(texts) == plain
    (folder,) = _graph_folders(tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == ["graph.onnx", "weights.bin"]
    # the next load runs the saved graph, not optimising again: the same vectors, bit for bit
    later = LocalEmbedder(MODEL, model_path=MODEL_DIR, cache_dir=tmp_path)
    assert later.embed(texts) == plain
    options = later.load().session.get_session_options()
    assert options.graph_optimization_level == ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    assert _graph_folders(tmp_path) == [folder]


def test_a_damaged_optimised_graph_is_made_again(tmp_path: Path) -> None:
    from memcli.providers.local import LocalEmbedder

    want = LocalEmbedder(MODEL, model_path=MODEL_DIR, cache_dir=tmp_path).embed([FACTS[1]])
    (folder,) = _graph_folders(tmp_path)
    weights = folder / "weights.bin"
    size = weights.stat().st_size
    with weights.open("r+b") as fh:
        fh.truncate(size // 2)
    assert LocalEmbedder(MODEL, model_path=MODEL_DIR, cache_dir=tmp_path).embed([FACTS[1]]) == want
    assert _graph_folders(tmp_path) == [folder] and weights.stat().st_size == size


def test_a_cache_that_cannot_be_written_still_gives_the_vectors(tmp_path: Path) -> None:
    from memcli.providers.local import LocalEmbedder

    want = LocalEmbedder(MODEL, model_path=MODEL_DIR).embed([FACTS[2]])
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    embedder = LocalEmbedder(MODEL, model_path=MODEL_DIR, cache_dir=blocked)
    assert embedder.embed([FACTS[2]]) == want


# --- the multilingual model (multilingual-e5-small), beside the English one -----------------

E5 = "local/intfloat/multilingual-e5-small"
E5_DIR = str(Path(MODEL_DIR).parent / "multilingual-e5-small-q4-onnx") if MODEL_DIR else ""
needs_e5 = pytest.mark.skipif(
    not E5_DIR or not (Path(E5_DIR) / "model.onnx").is_file(), reason="no multilingual model"
)
ZH_FACT = "会话缓存从 Redis 迁移到了 Valkey 集群"


def _registered_e5(texts: list[str]) -> list[list[float]]:
    """What fastembed computes for the folder registered as its README says (mean pooling,
    normalised, 384 dimensions)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    name = "intfloat/multilingual-e5-small"
    if name not in [m["model"] for m in TextEmbedding.list_supported_models()]:
        TextEmbedding.add_custom_model(
            model=name,
            pooling=PoolingType.MEAN,
            normalization=True,
            sources=ModelSource(hf=name),
            dim=384,
            model_file="model.onnx",
        )
    model = TextEmbedding(model_name=name, specific_model_path=E5_DIR)
    return [v.tolist() for v in model.embed(texts, batch_size=1)]


@needs_e5
def test_the_multilingual_model_gets_its_prefixes() -> None:
    from memcli.providers.local import LocalEmbedder

    embedder = LocalEmbedder("local/multilingual-e5-small", model_path=E5_DIR)
    stored = embedder.embed([ZH_FACT, FACTS[0]])
    question = embedder.embed_query("what does the session cache use now")
    assert embedder.runtime == "onnxruntime"
    want = _registered_e5(
        [
            f"query: {ZH_FACT}",
            f"query: {FACTS[0]}",
            "query: what does the session cache use now",
        ]
    )
    for g, w in zip([*stored, question], want, strict=True):
        assert len(g) == 384
        assert max(abs(a - b) for a, b in zip(g, w, strict=True)) < 1e-4


@needs_e5
def test_a_model_fastembed_does_not_know_is_registered_from_its_folder(tmp_path: Path) -> None:
    from memcli.providers.local import LocalEmbedder

    # the same files under a name neither memcli nor fastembed knows: fastembed runs it once
    # registered (pooling, normalisation, dimension from the folder), with the folder's prompts
    folder = tmp_path / "model"
    folder.mkdir()
    for f in Path(E5_DIR).iterdir():
        (folder / f.name).symlink_to(f)
    prompts = {"prompts": {"query": "query: ", "passage": "passage: "}}
    (folder / "config_sentence_transformers.json").write_text(json.dumps(prompts))
    embedder = LocalEmbedder("local/example/e5-copy", model_path=str(folder))
    got = [*embedder.embed([ZH_FACT]), embedder.embed_query("session cache")]
    assert embedder.runtime == "fastembed"
    want = _registered_e5([f"passage: {ZH_FACT}", "query: session cache"])
    for g, w in zip(got, want, strict=True):
        assert max(abs(a - b) for a, b in zip(g, w, strict=True)) < 1e-4


@needs_e5
def test_an_english_question_finds_a_fact_written_in_chinese(cli: Cli, workspace: Path) -> None:
    facts = [ZH_FACT, "毎週金曜日の夜にデータベースをバックアップする", "Caroline adopted a dog."]
    for i, fact in enumerate(facts):
        (workspace / "memory" / f"note{i}.md").write_text(f"- {fact}\n")
    assert cli("config", "set", "embedding.model", "local/multilingual-e5-small").exit_code == 0
    assert cli("config", "set", "embedding.model_path", E5_DIR).exit_code == 0
    assert cli("index").exit_code == 0
    r = cli("search", "--json", "-n", "1", "when is the database backed up")
    assert r.exit_code == 0, r.stderr
    assert r.json()["mode"] == "hybrid"
    assert "データベース" in r.json()["results"][0]["snippet"]
    top = cli("search", "--json", "-n", "1", "which store holds the session cache").json()
    assert "Valkey" in top["results"][0]["snippet"]


@needs_e5
def test_vectors_made_with_another_mark_are_made_again(cli: Cli, workspace: Path) -> None:
    from memcli.index.embedder import Fingerprint
    from memcli.index.store import Store

    (workspace / "memory" / "note.md").write_text(f"- {ZH_FACT}\n")
    assert cli("config", "set", "embedding.model", "local/multilingual-e5-small").exit_code == 0
    assert cli("config", "set", "embedding.model_path", E5_DIR).exit_code == 0
    assert cli("index").exit_code == 0
    store = Store.open(workspace / ".memcli" / "index.db")
    try:
        now = Fingerprint.parse(store.get_meta("embedding"))
        assert now is not None and now.prefix == "query: "
        # as an index whose vectors were made with another mark before each stored text
        with store.transaction():
            store.set_meta("embedding", now._replace(prefix="passage: ").key)
    finally:
        store.close()
    r = cli("index")
    assert r.exit_code == 0, r.stderr
    assert "changed from local/multilingual-e5-small (texts marked 'passage:')" in r.stderr
    assert "re-embedding 2 chunks" in r.stderr
    store = Store.open(workspace / ".memcli" / "index.db")
    try:
        assert store.get_meta("embedding") == now.key
    finally:
        store.close()


def test_a_model_folder_unreadable_from_a_subfolder_keeps_the_vectors(
    local: Cli, workspace: Path, tmp_path: Path
) -> None:
    # a model memcli does not know, in a folder given relative to the workspace, whose prompts
    # mark texts: a search run from a subfolder cannot read that folder, and must not take it
    # for another model (dropping every vector, then failing to embed them again)
    folder = workspace / "models" / "mini"
    folder.mkdir(parents=True)
    for f in Path(MODEL_DIR).iterdir():
        (folder / f.name).symlink_to(f)
    prompts = {"prompts": {"query": "q: ", "document": "d: "}}
    (folder / "config_sentence_transformers.json").write_text(json.dumps(prompts))
    env = {
        **os.environ,
        "MEMCLI_EMBEDDING_MODEL": "local/example/minilm-copy",
        "MEMCLI_EMBEDDING_MODEL_PATH": "models/mini",
    }

    def memcli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        run = [sys.executable, "-m", "memcli", *args]
        return subprocess.run(run, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)

    assert memcli(workspace, "index").returncode == 0
    before = json.loads(memcli(workspace, "status", "--json").stdout)["embedding"]["vectors"]
    assert before > 0
    memcli(workspace / "memory", "search", "--json", "who has a pet")
    assert (
        json.loads(memcli(workspace, "status", "--json").stdout)["embedding"]["vectors"] == before
    )
