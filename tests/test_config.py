"""Settings layers: default < user < workspace < env < flag, with origins."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcli.config import load_settings, user_config_path
from memcli.errors import ConfigError
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
