"""The settings operations of the service layer (memcli.service.settings), with and without a
workspace: typed results whose as_dict() is what ``memcli config --json`` prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcli.config import user_config_path
from memcli.config.operations import (
    SettingChange,
    config_paths,
    get_setting,
    list_settings,
    set_setting,
    unset_setting,
)
from memcli.errors import ConfigError, WorkspaceNotFound
from memcli.memory import Memory
from tests.conftest import Cli


def test_memory_sets_gets_and_unsets(cli: Cli, workspace: Path) -> None:
    with Memory.open(workspace, {"search.min_score": 0.2}) as mem:
        change = mem.config_set("search.limit", "3")
        assert isinstance(change, SettingChange) and change.changed and not change.shadowed
        assert change.file == workspace / "memcli.toml" and change.scope == "workspace"
        assert mem.settings.get("search.limit") == 3  # read again after the change
        assert mem.settings.origin("search.min_score") == "flag"  # the override is kept
        entry = mem.config_get("search.limit")
        assert (entry.value, entry.origin, entry.default) == (3, "workspace", 8)
        assert change.as_dict() == cli("config", "set", "--json", "search.limit", "3").json() | {
            "changed": True
        }
        listing = mem.config_list()
        assert listing.as_dict() == cli("config", "--json").json()
        gone = mem.config_unset("search.limit")
        assert gone.changed and not gone.is_set and "value" not in gone.as_dict()
        assert mem.settings.get("search.limit") == 8
        assert mem.config_paths().as_dict() == cli("config", "path", "--json").json()


def test_without_a_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    listing = list_settings()
    assert listing.workspace is None and listing.workspace_file is None
    assert config_paths().workspace is None
    with pytest.raises(WorkspaceNotFound) as err:
        set_setting("search.limit", "3")
    assert err.value.hint is not None and "--user" in err.value.hint
    change = set_setting("search.limit", "3", user=True)
    assert change.file == user_config_path() and change.effective.origin == "user"
    assert get_setting("search.limit").value == 3
    assert unset_setting("search.limit", user=True).changed
    assert user_config_path().read_text() == ""  # no empty [search] left behind


def test_refusals_come_before_any_file_is_read(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown setting"):
        get_setting("search.nope", tmp_path / "missing")
    with pytest.raises(ConfigError, match="search.limit must be from 1 to 1000, got 0"):
        set_setting("search.limit", "0", tmp_path / "missing")
    with pytest.raises(ConfigError, match="never stores API keys"):
        set_setting("embedding.api_key", "x", tmp_path / "missing")
