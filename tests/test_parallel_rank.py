"""A large index's keyword query ranked in two halves on two connections: the same candidates,
in the same order, as the whole query; and no split where another connection could not see
what this one sees."""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path

import pytest

from memcli.index import parallel_rank
from memcli.memory import Memory
from memcli.search.candidates import keyword_candidates
from memcli.search.options import Filters
from memcli.search.query import parse_query
from tests.conftest import Cli

WORDS = "valkey cache redis session queue retry deploy backup region replica kafka".split()


@pytest.fixture
def big(workspace: Path) -> Path:
    """Sixty files of facts drawn from a few words: many matches and many equal scores."""
    rng = random.Random(5)
    for n in range(60):
        lines = [f"- {' '.join(rng.choices(WORDS, k=rng.randint(1, 6)))}." for _ in range(12)]
        (workspace / "memory" / f"f{n:02d}.md").write_text("\n\n".join(lines) + "\n")
    return workspace


def candidates(mem: Memory, query: str, limit: int = 40, **filters: object) -> list[object]:
    found = keyword_candidates(mem.store, parse_query(query), Filters(**filters), limit)  # type: ignore[arg-type]
    return list(found.items())


@pytest.mark.parametrize(
    "query", ["valkey cache", "retry", "kafka OR backup region", '"deploy backup"']
)
def test_two_halves_give_the_whole_query_s_candidates(
    big: Path, query: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = Memory.open(big)
    mem.index()
    whole = candidates(mem, query)
    assert parallel_rank.split_point(mem.store) is None  # a small index runs whole
    monkeypatch.setattr(parallel_rank, "SPLIT_FROM", 1)
    middle = parallel_rank.split_point(mem.store)
    assert middle is not None and middle > 1
    split = candidates(mem, query)
    assert mem.store.second is not None  # the other half ran on the second reader
    assert split == whole and len(whole) >= 15
    assert candidates(mem, query, sources=("memory",)) == whole  # the joined form
    mem.close()
    assert mem.store.second is None
    assert not [t for t in threading.enumerate() if t.name.startswith("memcli-reader")]


def test_no_split_inside_a_write_on_a_read_only_or_a_replaced_index(
    big: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = Memory.open(big)
    mem.index()
    monkeypatch.setattr(parallel_rank, "SPLIT_FROM", 1)
    with mem.store.transaction():
        assert (
            parallel_rank.split_point(mem.store) is None
        )  # its writes: unseen by another connection
    mem.store.readonly = "a read-only folder"
    assert parallel_rank.split_point(mem.store) is None
    mem.store.readonly = ""
    assert parallel_rank.split_point(mem.store) is not None
    replaced = big / "index-copy.db"
    replaced.write_bytes(mem.store.path.read_bytes())
    replaced.replace(mem.store.path)  # a repair put a new file where this one was opened
    assert parallel_rank.split_point(mem.store) is None  # a second connection would read another
    mem.close()


@pytest.mark.slow
def test_a_search_is_the_same_split_or_whole(
    big: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("index").exit_code == 0
    whole = cli("search", "valkey session retry", "-n", "15", "--json").stdout
    monkeypatch.setattr(parallel_rank, "SPLIT_FROM", 1)
    split = cli("search", "valkey session retry", "-n", "15", "--json").stdout
    assert json.loads(whole)["results"] and split == whole
