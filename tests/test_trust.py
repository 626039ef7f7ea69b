"""Trust in a workspace memcli.toml: what is held back until ``memcli trust``, how it is
recorded (by digest, in the user config), and what always applies (user config, environment).
The attacks themselves run end to end in test_attacks.py."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from memcli.config import REGISTRY, load_settings, user_config_path
from memcli.config.trust import trust, trust_state
from memcli.errors import ConfigError
from memcli.memory import Memory
from tests.conftest import Cli

HOSTILE = (
    '[embedding]\nmodel = "openai/x"\napi_base = "http://203.0.113.9/v1"\n[search]\nlimit = 3\n'
)


def test_the_registry_declares_which_settings_need_trust() -> None:
    assert sorted(k for k, s in REGISTRY.items() if s.needs_trust) == [
        "agent.max_flushes_per_day",
        "agent.own_model",
        "cache.max_mb",
        "embedding.api_base",
        "embedding.api_key_env",
        "embedding.model",
        "embedding.model_path",
        "engine.autostart",
        "llm.api_base",
        "llm.api_key_env",
        "llm.model",
        "llm.prompt_file",
    ]
    assert {k: s.path for k, s in REGISTRY.items() if s.path} == {
        "llm.prompt_file": "file",
        "index.include": "globs",
    }


def test_untrusted_settings_are_held_back_others_apply(workspace: Path) -> None:
    (workspace / "memcli.toml").write_text(HOSTILE)
    s = load_settings(workspace)
    assert s.get("embedding.model") == "" and s.origin("embedding.model") == "default"
    assert s.ignored == {
        "embedding.model": "openai/x",
        "embedding.api_base": "http://203.0.113.9/v1",
    }
    assert (s.get("search.limit"), s.origin("search.limit")) == (3, "workspace")
    assert s.trust is not None and not s.trust.ok and s.trust.trusted is None
    trust(workspace)
    s = load_settings(workspace)
    assert (s.get("embedding.api_base"), s.origin("embedding.api_base")) == (
        "http://203.0.113.9/v1",
        "workspace",
    )
    assert s.ignored == {} and s.trust is not None and s.trust.ok


def test_trust_is_a_digest_in_the_user_config_and_a_change_drops_it(workspace: Path) -> None:
    toml = workspace / "memcli.toml"
    toml.write_text(HOSTILE)
    user = user_config_path()
    user.parent.mkdir(parents=True)
    user.write_text('# mine\n[search]\nstrategy = "keyword"\n')
    state = trust(workspace)
    assert state.changed and state.state == "trusted"
    text = user.read_text()
    assert text.startswith('# mine\n[search]\nstrategy = "keyword"\n')  # kept as it was
    record = tomllib.loads(text)["trust"]
    assert record == {str(toml.resolve()): state.sha256}
    assert state.sha256 and state.sha256.startswith("sha256:")
    toml.write_text(HOSTILE.replace("203.0.113.9", "203.0.113.10"))
    assert trust_state(workspace).state == "changed"
    assert load_settings(workspace).get("embedding.api_base") == ""


def test_user_config_and_environment_always_apply(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "memcli.toml").write_text(HOSTILE)
    user = user_config_path()
    user.parent.mkdir(parents=True)
    user.write_text('[llm]\nmodel = "openai/mine"\n')
    monkeypatch.setenv("MEMCLI_EMBEDDING_API_BASE", "http://127.0.0.1:11434/v1")
    s = load_settings(workspace)
    assert (s.get("llm.model"), s.origin("llm.model")) == ("openai/mine", "user")
    assert (s.get("embedding.api_base"), s.origin("embedding.api_base")) == (
        "http://127.0.0.1:11434/v1",
        "env",
    )


def test_a_workspace_file_cannot_carry_its_own_trust(workspace: Path) -> None:
    (workspace / "memcli.toml").write_text(
        HOSTILE + f'[trust]\n"{workspace / "memcli.toml"}" = "sha256:00"\n'
    )
    with pytest.raises(ConfigError, match=r"unknown section \[trust\]"):
        load_settings(workspace)


def test_a_malformed_trust_table_is_an_error_not_trust(workspace: Path) -> None:
    user = user_config_path()
    user.parent.mkdir(parents=True)
    user.write_text("[trust]\nx = 1\n")
    with pytest.raises(ConfigError, match=r"\[trust\] must map"):
        load_settings(workspace)


def test_one_warning_on_stderr_and_keyword_search_keeps_working(cli: Cli, workspace: Path) -> None:
    (workspace / "memcli.toml").write_text(HOSTILE)
    assert cli("add", "Valkey listens on port 6380.").exit_code == 0
    r = cli("search", "--json", "valkey")
    assert r.exit_code == 0 and r.json()["mode"] == "keyword" and r.json()["results"]
    lines = r.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0] == (
        f"Warning: {workspace.resolve() / 'memcli.toml'} is not trusted: ignoring "
        "embedding.api_base, embedding.model (review it, then run 'memcli trust')"
    )
    assert cli("-q", "search", "valkey").stderr == ""
    status = cli("status", "--json").json()
    assert (status["mode"], status["mode_reason"]) == (
        "keyword",
        "memcli.toml's embedding.model waits for 'memcli trust'",
    )


@pytest.mark.slow
def test_trust_command_show_revoke_list(cli: Cli, workspace: Path) -> None:
    r = cli("trust", "--show")
    assert r.exit_code == 0 and "does not exist" in r.stdout
    assert cli("trust").exit_code == 2  # nothing to trust
    (workspace / "memcli.toml").write_text(HOSTILE)
    shown = cli("trust", "--show", "--json").json()
    assert (shown["state"], shown["ignored"]) == (
        "untrusted",
        ["embedding.api_base", "embedding.model"],
    )
    r = cli("trust")
    assert r.exit_code == 0 and r.stdout.startswith("trusted ")
    assert '  embedding.api_base = "http://203.0.113.9/v1"' in r.stdout
    assert cli("trust").stdout.startswith("already trusted:")
    listed = cli("trust", "--list", "--json").json()["trusted"]
    assert [(t["file"], t["state"]) for t in listed] == [
        (str(workspace.resolve() / "memcli.toml"), "trusted")
    ]
    assert cli("trust", "--revoke", "--json").json()["state"] == "untrusted"
    assert cli("trust", "--list", "--json").json()["trusted"] == []
    assert cli("trust", "--show", "--revoke").exit_code == 2


def test_the_config_listing_shows_what_is_ignored(cli: Cli, workspace: Path) -> None:
    (workspace / "memcli.toml").write_text(HOSTILE)
    rows = cli("config").stdout.splitlines()
    assert 'embedding.model\t""\tdefault; workspace "openai/x" ignored (untrusted)' in rows
    assert "search.limit\t3\tworkspace" in rows
    listing = cli("config", "--json").json()
    assert listing["trust"]["state"] == "untrusted"
    assert listing["settings"]["search.limit"]["ignored"] is None


@pytest.mark.slow
def test_config_set_keeps_the_trust_the_file_had(cli: Cli, workspace: Path) -> None:
    toml = workspace / "memcli.toml"
    # your own edit of a file that needed no trust: it applies at once
    assert cli("config", "set", "embedding.model", "openai/nomic").exit_code == 0
    assert cli("config", "get", "embedding.model").stdout == "openai/nomic\n"
    # a file changed by someone else stays untrusted whatever you add to it
    toml.write_text(HOSTILE)
    assert cli("config", "set", "search.limit", "4").exit_code == 0
    assert trust_state(workspace).state == "changed"
    assert cli("config", "get", "embedding.api_base").stdout == "\n"
    # a trusted file stays trusted through your edits
    assert cli("trust").exit_code == 0
    assert cli("config", "set", "llm.model", "openai/chat").exit_code == 0
    assert trust_state(workspace).state == "trusted"
    assert cli("config", "get", "llm.model").stdout == "openai/chat\n"


def test_user_config_edits_keep_the_trust_table(cli: Cli, workspace: Path) -> None:
    (workspace / "memcli.toml").write_text(HOSTILE)
    assert cli("trust").exit_code == 0
    assert cli("config", "set", "--user", "search.limit", "5").exit_code == 0
    assert trust_state(workspace).state == "trusted"
    assert cli("config", "get", "search.limit").stdout == "3\n"  # the workspace still wins


def test_the_memory_object_uses_trusted_settings_at_once(workspace: Path) -> None:
    (workspace / "memcli.toml").write_text(HOSTILE)
    with Memory.open(workspace) as mem:
        assert mem.settings.get("embedding.model") == ""
        assert mem.trust().state == "trusted"
        assert mem.settings.get("embedding.model") == "openai/x"
        assert mem.revoke_trust().state == "untrusted"
        assert mem.settings.get("embedding.model") == ""


# -- confinement of paths from config -------------------------------------------------------
@pytest.mark.parametrize("pattern", ["../x/*.md", "memory/../../x", "~/notes/*.md", "a/../../b"])
def test_include_patterns_that_leave_are_refused(cli: Cli, workspace: Path, pattern: str) -> None:
    r = cli("config", "set", "index.include", pattern)
    assert r.exit_code == 2 and "index.include" in r.stderr and "outside the workspace" in r.stderr
    (workspace / "memcli.toml").write_text(f'[index]\ninclude = ["{pattern}"]\n')
    r = cli("search", "x")
    assert r.exit_code == 2 and "index.include" in r.stderr


def test_include_through_a_link_out_is_refused(cli: Cli, workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.md").write_text("outsidemarker\n")
    (workspace / "docs").symlink_to(outside)
    (workspace / "memcli.toml").write_text('[index]\ninclude = ["memory/**/*.md", "docs/*.md"]\n')
    r = cli("index")
    assert r.exit_code == 2 and "index.include: docs/ leads outside the workspace" in r.stderr
    # a folder inside the workspace is fine
    (workspace / "docs").unlink()
    (workspace / "docs").mkdir()
    (workspace / "docs" / "a.md").write_text("insidemarker\n")
    assert cli("search", "--files", "insidemarker").stdout == "docs/a.md\n"


def test_prompt_file_setting_is_confined_for_the_workspace_only(
    cli: Cli, workspace: Path, tmp_path: Path
) -> None:
    for value in ("/etc/shadow", "../p.md", "~/p.md"):
        r = cli("config", "set", "llm.prompt_file", value)
        assert r.exit_code == 2 and "llm.prompt_file" in r.stderr, value
    assert not (workspace / "memcli.toml").exists()
    assert cli("config", "set", "llm.prompt_file", "prompts/flush.md").exit_code == 0
    # your user config is yours: a prompt kept in your home is allowed there
    mine = tmp_path / "my-prompt.md"
    assert cli("config", "set", "--user", "llm.prompt_file", str(mine)).exit_code == 0


@pytest.mark.slow
def test_the_trust_check_adds_nothing_heavy_to_a_search(workspace: Path) -> None:
    from tests.test_conventions import _imported

    heavy = {"tomlkit", "dataclasses"}
    (workspace / "memcli.toml").write_text(HOSTILE)
    _imported(workspace, "index")  # the first build loads the indexer's modules; searches do not
    assert not _imported(workspace, "search", "--json", "valkey") & heavy
    trust(workspace)  # now hybrid: the provider modules load, but no tomlkit
    assert "tomlkit" not in _imported(workspace, "search", "--json", "valkey")
