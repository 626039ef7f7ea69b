"""The one fusion of a hybrid search (memcli.search.fusion.fuse), its parameters and their
defaults from the settings registry."""

from __future__ import annotations

import pytest

from memcli.errors import ConfigError
from memcli.search import fusion

P = fusion.FusionParams("rrf", 60, 0.5, 0.5)


def test_fuse_dispatches_on_mode_and_method() -> None:
    keyword = {("a.md", 0): 0.8, ("a.md", 1): 0.2}
    vector = {("a.md", 1): 0.9, ("b.md", 0): 0.4}
    assert fusion.fuse(keyword, vector, "vector", P) == vector
    assert fusion.fuse(keyword, vector, "hybrid", P) == fusion.rrf(keyword, vector, P)
    w = fusion.FusionParams("weighted", 60, 0.25, 0.75)
    fused = fusion.fuse(keyword, vector, "hybrid", w)
    assert fused == fusion.weighted(keyword, vector, w)
    assert fused[("b.md", 0)] == pytest.approx(0.75 * 0.4)
    assert fused[("a.md", 1)] == pytest.approx(0.25 * 0.2 + 0.75 * 0.9)


def test_parameters_are_checked_against_the_registry() -> None:
    assert fusion.FusionParams("RRF").check().method == "rrf"
    with pytest.raises(ConfigError, match="search.fusion must be one of rrf, weighted"):
        fusion.fuse({1: 1.0}, {}, "hybrid", fusion.FusionParams("borda"))
    with pytest.raises(ConfigError, match="search.rrf_k must be from 0 to 10000"):
        fusion.FusionParams(rrf_k=-1).check()
    with pytest.raises(ConfigError, match="search.vector_weight must be from 0 to 100"):
        fusion.FusionParams(vector_weight=-0.5).check()
