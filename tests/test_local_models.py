"""The list of local models, their prefixes, and ``init --local-model list`` (no model loaded)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memcli.index.embedcache import EmbedCache
from memcli.index.embedder import Fingerprint
from memcli.providers import models
from memcli.providers.cached import CachedEmbedder, text_hash
from tests.conftest import Cli

pytestmark = pytest.mark.slow


class Recording(CachedEmbedder):
    """An embedder that records what the model is given; a vector says which text it was."""

    query_prefix = "query: "
    passage_prefix = "passage: "

    def __init__(self, cache: EmbedCache | None = None) -> None:
        super().__init__(Fingerprint("local", "local/test", 0), batch_size=8, cache=cache)
        self.given: list[str] = []

    def _compute(self, texts: list[str], quick: bool) -> list[list[float]]:
        self.given += texts
        return [[float(len(t)), float(t.startswith("query: "))] for t in texts]


def test_known_models_by_full_or_short_name() -> None:
    e5 = models.find("local/multilingual-e5-small")
    assert e5 is not None and e5.name == "intfloat/multilingual-e5-small"
    assert (e5.query_prefix, e5.passage_prefix) == ("query: ", "query: ")
    assert models.find("sentence-transformers/all-MiniLM-L6-v2") is models.DEFAULT
    assert models.DEFAULT.query_prefix == models.DEFAULT.passage_prefix == ""
    assert models.find("someone/else") is None
    assert models.full_name("multilingual-e5-small") == "intfloat/multilingual-e5-small"
    assert models.full_name("local/someone/else") == "someone/else"


def test_the_embedder_adds_each_prefix_and_keeps_queries_apart(tmp_path: Path) -> None:
    embedder = Recording(EmbedCache(tmp_path / "cache.db"))
    passage = embedder.embed(["Valkey"])[0]
    query = embedder.embed_query("Valkey")
    assert embedder.given == ["passage: Valkey", "query: Valkey"]
    assert passage != query  # the same words as a question: a vector of its own
    # a passage's cache key is still the hash of its text as stored (chunks.hash)
    assert embedder.cache is not None
    assert embedder.cache.get_many(embedder.fingerprint.key, [text_hash("Valkey")]) == {
        text_hash("Valkey"): passage
    }
    again = Recording(EmbedCache(tmp_path / "cache.db"))
    assert again.embed_query("Valkey") == query and again.embed(["Valkey"]) == [passage]
    assert again.given == []  # both from the cache


def test_the_mark_before_stored_texts_is_part_of_a_models_fingerprint(tmp_path: Path) -> None:
    from memcli.config import Settings
    from memcli.providers.cached import local_fingerprint
    from memcli.providers.embeddings import fingerprint_of

    e5 = local_fingerprint("local/multilingual-e5-small")
    assert e5.prefix == "query: " and json.loads(e5.key)["prefix"] == "query: "
    assert Fingerprint.parse(e5.key) == e5
    # a model without a mark keeps the key its vectors were stored under
    assert local_fingerprint("local/sentence-transformers/all-MiniLM-L6-v2").key == (
        '{"dimensions": 0, "model": "local/sentence-transformers/all-MiniLM-L6-v2",'
        ' "provider": "local"}'
    )
    old = '{"dimensions": 0, "model": "local/intfloat/multilingual-e5-small", "provider": "local"}'
    parsed = Fingerprint.parse(old)
    assert parsed is not None and parsed.prefix == "" and parsed != e5
    # a model memcli does not know: its settings alone, whatever its folder declares (a
    # folder unreadable from where a command runs must not look like another model)
    prompts = {"prompts": {"query": "query: ", "document": "passage: "}}
    (tmp_path / "config_sentence_transformers.json").write_text(json.dumps(prompts))
    settings = Settings.defaults()
    settings.set("embedding.model", "local/example/e5-copy", "test")
    settings.set("embedding.model_path", str(tmp_path), "test")
    assert fingerprint_of(settings) == Fingerprint("local", "local/example/e5-copy", 0)


def test_a_model_folder_describes_what_fastembed_does_not_know(tmp_path: Path) -> None:
    assert models.folder_pooling(tmp_path) == ("mean", True)
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true}')
    (tmp_path / "modules.json").write_text('[{"type": "sentence_transformers.models.Pooling"}]')
    assert models.folder_pooling(tmp_path) == ("cls", False)
    assert models.folder_dimensions(tmp_path) == 0
    (tmp_path / "config.json").write_text('{"hidden_size": 768}')
    assert models.folder_dimensions(tmp_path) == 768
    prompts = {"prompts": {"query": "query: ", "document": "passage: "}}
    (tmp_path / "config_sentence_transformers.json").write_text(json.dumps(prompts))
    assert models.folder_prefixes(tmp_path) == ("query: ", "passage: ")


def test_init_lists_the_models_and_sets_nothing_up(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    r = Cli(root)("init", "--local", "--local-model", "list", "--json")
    assert r.exit_code == 0, r.stderr
    listed = {m["short"]: m for m in r.json()["models"]}
    assert set(listed) == {"all-MiniLM-L6-v2", "multilingual-e5-small"}
    assert listed["all-MiniLM-L6-v2"]["default"] is True
    for m in listed.values():
        assert m["size_mb"] > 0 and m["load_s"] > 0 and m["passage_ms"] > 0 and m["query_ms"] > 0
        assert 0 < m["recall_similarity"] < 1
        rule = m["recall_rule"]  # when recall gives an entry: each value of the rule
        assert set(rule) == {"floor", "margin", "agreed_score", "agreed_margin", "related_margin"}
        assert rule["floor"] == m["recall_similarity"]
        assert rule["related_margin"] <= rule["margin"]  # a related entry needs no more
    # each model's own: E5's similarities all sit high, MiniLM's spread from 0
    assert listed["multilingual-e5-small"]["recall_similarity"] > 0.8
    assert listed["all-MiniLM-L6-v2"]["recall_similarity"] < 0.5
    assert not (root / "memory").exists()


def test_a_bare_local_model_option_lists_them_too(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "memcli", "-w", str(tmp_path), "init", "--local", "--local-model"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert "multilingual-e5-small" in r.stdout and "MB" in r.stdout
    assert not (tmp_path / "memory").exists()


def test_init_takes_a_short_name(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    r = Cli(root)("init", "--local", "--local-model", "multilingual-e5-small", "--json")
    assert r.exit_code == 0, r.stderr
    want = "embedding.model = local/intfloat/multilingual-e5-small"
    assert any(want in c for c in r.json()["created"])


def test_a_model_fastembed_cannot_fetch_asks_for_its_folder() -> None:
    """No folder, and not a model fastembed can fetch: said at once, without asking the hub.
    In a process of its own: fastembed's list of models is global, and other tests register
    the multilingual model from its folder."""
    pytest.importorskip("fastembed")
    code = (
        "from memcli.errors import ProviderError\n"
        "from memcli.providers.local import LocalEmbedder\n"
        "try:\n"
        "    LocalEmbedder('local/multilingual-e5-small').embed(['会话缓存'])\n"
        "except ProviderError as exc:\n"
        "    print(exc.message)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "fastembed cannot fetch local/intfloat/multilingual-e5-small" in r.stdout, r.stdout
