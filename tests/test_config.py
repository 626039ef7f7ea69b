"""Settings layers: default < user < workspace < env < flag, with origins."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memcli.config import DEFAULTS, REGISTRY, SETTINGS, coerce, load_settings, user_config_path
from memcli.errors import ConfigError
from memcli.search.fusion import FusionParams
from memcli.search.options import SETTING_OF, SearchOptions
from tests.conftest import Cli


def test_layers_and_origins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = user_config_path()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("[search]\nlimit = 3\nmin_score = 0.1\n[decay]\nenabled = true\n")
    (tmp_path / "memcli.toml").write_text("[search]\nlimit = 4\n")
    monkeypatch.setenv("MEMCLI_SEARCH_MIN_SCORE", "0.2")
    s = load_settings(tmp_path, {"decay.half_life_days": 7})
    assert (s.get("search.limit"), s.origin("search.limit")) == (4, "workspace")
    assert (s.get("search.min_score"), s.origin("search.min_score")) == (0.2, "env")
    assert (s.get("decay.enabled"), s.origin("decay.enabled")) == (True, "user")
    assert (s.get("decay.half_life_days"), s.origin("decay.half_life_days")) == (7.0, "flag")
    assert s.origin("index.chunk_chars") == "default"


def test_bad_values_are_config_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCLI_SEARCH_LIMIT", "many")
    with pytest.raises(ConfigError, match="search.limit"):
        load_settings(tmp_path)
    monkeypatch.delenv("MEMCLI_SEARCH_LIMIT")
    (tmp_path / "memcli.toml").write_text("[nope]\nx = 1\n")
    with pytest.raises(ConfigError, match="unknown section"):
        load_settings(tmp_path)
    (tmp_path / "memcli.toml").write_text("not = [toml")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_settings(tmp_path)


def test_broken_config_is_exit_2(cli: Cli, workspace: Path) -> None:
    (workspace / "memcli.toml").write_text("[search]\nlimit = 'x'\n")
    r = cli("search", "anything")
    assert r.exit_code == 2
    assert "search.limit" in r.stderr


def test_sync_on_search_can_be_disabled(
    cli: Cli, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli("index")
    (workspace / "memory" / "new.md").write_text("zebra crossing\n")
    monkeypatch.setenv("MEMCLI_INDEX_SYNC_ON_SEARCH", "false")
    r = cli("search", "--json", "zebra")
    assert r.exit_code == 1 and r.json()["stale"] is None  # not even checked: no scan
    assert cli("status", "--json").json()["dirty"] == ["memory/new.md"]  # status still tells
    monkeypatch.setenv("MEMCLI_INDEX_SYNC_ON_SEARCH", "true")
    r = cli("search", "--json", "zebra")
    assert r.exit_code == 0 and r.json()["stale"] is False


# -- the registry ------------------------------------------------------------------------------
def test_every_setting_is_declared_once_with_a_valid_default() -> None:
    keys = [s.key for s in SETTINGS]
    assert len(keys) == len(set(keys)) == len(REGISTRY)
    assert [f"{sec}.{n}" for sec, names in DEFAULTS.items() for n in names] == keys
    for s in SETTINGS:
        assert s.help.endswith(".") and s.env == f"MEMCLI_{s.section.upper()}_{s.name.upper()}"
        assert coerce(s.key, s.default) == s.default  # a default is within its own bounds
        assert DEFAULTS[s.section][s.name] == s.default


def test_search_and_fusion_defaults_are_the_registrys() -> None:
    opts = SearchOptions()
    for name in SearchOptions._fields:
        key = f"search.{name}"
        if key in REGISTRY:
            assert getattr(opts, name) == REGISTRY[key].default, key
    assert SETTING_OF["half_life_days"] == "decay.half_life_days"
    for name, key in SETTING_OF.items():
        assert getattr(opts, name) == REGISTRY[key].default, key
    assert (opts.decay, opts.half_life_days) == (
        REGISTRY["decay.enabled"].default,
        REGISTRY["decay.half_life_days"].default,
    )
    p = FusionParams()
    assert (p.method, p.rrf_k, p.keyword_weight, p.vector_weight) == ("weighted", 60, 0.6, 0.4)
    assert opts.fusion_params() == p


@pytest.mark.parametrize(
    ("key", "value", "allowed"),
    [
        ("search.limit", 0, "from 1 to 1000"),
        ("search.limit", 1001, "from 1 to 1000"),
        ("search.min_score", 1.5, "from 0 to 1"),
        ("search.strategy", "fuzzy", "one of auto, keyword, vector, hybrid"),
        ("search.fusion", "borda", "one of rrf, weighted"),
        ("git.sync_strategy", "squash", "one of rebase, merge"),
        ("embedding.timeout", 0, "above 0 and at most 3600"),
        ("decay.half_life_days", float("nan"), "above 0"),
        ("embedding.batch_size", 0, "from 1 to 4096"),
    ],
)
def test_values_outside_the_allowed_ones_are_refused(key: str, value: object, allowed: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(f"{key} must be {allowed}")):
        coerce(key, value)


def test_choices_ignore_case() -> None:
    assert coerce("search.fusion", "Weighted") == "weighted"
    assert coerce("search.limit", "1000") == 1000 and coerce("search.min_score", "1") == 1.0


def test_a_bad_file_value_names_key_value_range_and_file(tmp_path: Path) -> None:
    (tmp_path / "memcli.toml").write_text("[search]\nlimit = 0\n")
    with pytest.raises(ConfigError) as err:
        load_settings(tmp_path)
    assert err.value.message == (
        f"{tmp_path / 'memcli.toml'}: search.limit must be from 1 to 1000, got 0"
    )
    user = user_config_path()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('[git]\nsync_strategy = "squash"\n')
    (tmp_path / "memcli.toml").unlink()
    with pytest.raises(ConfigError, match=re.escape(f"{user}: git.sync_strategy must be one of")):
        load_settings(tmp_path)


def test_a_bad_variable_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCLI_SEARCH_CANDIDATES", "0")
    with pytest.raises(ConfigError) as err:
        load_settings(tmp_path)
    assert err.value.message == (
        "MEMCLI_SEARCH_CANDIDATES: search.candidates must be from 1 to 10000, got 0"
    )


def test_problems_collects_every_bad_value_and_keeps_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "memcli.toml").write_text(
        '[search]\nlimit = 0\nfusion = "weighted"\nmmr_lambda = 2\n[nope]\nx = 1\n'
    )
    monkeypatch.setenv("MEMCLI_WATCH_DEBOUNCE_MS", "-5")
    problems: list[ConfigError] = []
    s = load_settings(tmp_path, problems=problems)
    messages = [p.message for p in problems]
    assert len(messages) == 4
    assert "search.limit must be from 1 to 1000, got 0" in messages[0]
    assert "search.mmr_lambda must be from 0 to 1, got 2" in messages[1]
    assert "unknown section [nope]" in messages[2]
    assert messages[3].startswith("MEMCLI_WATCH_DEBOUNCE_MS: watch.debounce_ms")
    assert (s.get("search.limit"), s.origin("search.limit")) == (8, "default")
    assert (s.get("search.fusion"), s.origin("search.fusion")) == ("weighted", "workspace")


def test_a_bad_command_line_value_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="watch.debounce_ms must be from 0 to 600000"):
        load_settings(tmp_path, {"watch.debounce_ms": 10**9})
