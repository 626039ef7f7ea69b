"""vectorplan.choose_mode, the one decision between keyword, vector and hybrid search."""

from __future__ import annotations

import pytest

from memcli.config.registry import lookup
from memcli.errors import BadInput
from memcli.index.embedder import Fingerprint
from memcli.index.vectorplan import (
    ModeChoice,
    VectorState,
    check_strategy,
    choose_mode,
    strategy_choices,
)

FP = Fingerprint("openai", "stub-embed", 0)


def _state(usable: bool, vectors: int = 4, chunks: int = 4) -> VectorState:
    reason = "embedding model stub-embed" if usable else "no vectors in the index yet"
    return VectorState(usable, reason, vectors, chunks, "stub-embed")


def _never(_fp: Fingerprint) -> VectorState:
    raise AssertionError("the vectors were not needed for this choice")


def test_no_model_is_keyword_and_an_explicit_strategy_is_refused_by_a_search() -> None:
    assert choose_mode("auto", None, _never) == ModeChoice(
        "keyword", "no embedding model configured"
    )
    assert choose_mode("vector", None, _never).mode == "keyword"  # status says so
    with pytest.raises(BadInput, match="strategy vector needs an embedding model"):
        choose_mode("vector", None, _never, query="q", strict=True)
    assert choose_mode("keyword", None, _never, query="q", strict=True).mode == "keyword"


def test_keyword_strategy_and_blank_query_never_look_at_vectors() -> None:
    assert choose_mode("keyword", FP, _never) == ModeChoice("keyword", "search.strategy is keyword")
    assert choose_mode("hybrid", FP, _never, query="  ", strict=True).mode == "keyword"


def test_usable_vectors_give_hybrid_or_vector_and_partial_coverage_warns() -> None:
    full = choose_mode("auto", FP, lambda _fp: _state(True))
    assert (full.mode, full.reason, full.warnings) == ("hybrid", "embedding model stub-embed", ())
    assert choose_mode("vector", FP, lambda _fp: _state(True)).mode == "vector"
    partial = choose_mode("hybrid", FP, lambda _fp: _state(True, vectors=1, chunks=4))
    assert partial.mode == "hybrid"
    assert partial.warnings == (
        "3 of 4 chunks without vectors yet (found by keyword only);"
        " run 'memcli index' to back-fill",
    )


def test_unusable_vectors_fall_back_to_keyword_with_the_reason() -> None:
    choice = choose_mode("auto", FP, lambda _fp: _state(False))
    assert (choice.mode, choice.reason) == ("keyword", "no vectors in the index yet")
    assert choice.warnings == (
        "vector search is off: no vectors in the index yet; keyword results only",
    )


def test_strategy_choices_come_from_the_settings_registry() -> None:
    assert strategy_choices() == lookup("search.strategy").choices
    assert check_strategy("HYBRID") == "hybrid" and check_strategy(None) == "auto"
    with pytest.raises(BadInput) as err:
        check_strategy("Fuzzy")
    assert err.value.message == "unknown search strategy 'fuzzy'"
    assert err.value.hint == "use auto, keyword, vector or hybrid"
