"""``memcli config``: show with origins, get, set/unset keeping TOML comments, path, no secrets."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.cli.app import app
from memcli.config import DEFAULTS, user_config_path
from tests.conftest import Cli, Run

TEAM_TOML = """\
# Team settings: reviewed in pull requests.
[search]
limit = 6   # agents want few results
# strategy = "hybrid"   (not yet)

[decay]   # time matters here
enabled = true
"""


def run_here(*args: str) -> Run:
    """Invoke without -w, from the current directory."""
    result = CliRunner().invoke(app, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Run(result.exit_code, result.stdout, result.stderr)


# -- show -----------------------------------------------------------------------------------
def test_shows_every_setting_with_default_origin(cli: Cli) -> None:
    d = cli("config", "--json").json()
    expected = {f"{s}.{n}": v for s, names in DEFAULTS.items() for n, v in names.items()}
    assert list(d["settings"]) == list(expected)
    for key, entry in d["settings"].items():
        assert entry["value"] == expected[key] == entry["default"]
        assert entry["origin"] == "default"
    assert d["settings"]["search.limit"]["env"] == "MEMCLI_SEARCH_LIMIT"


def test_origins_of_every_layer(cli: Cli, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = user_config_path()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('[search]\nlimit = 3\nstrategy = "keyword"\n[decay]\nhalf_life_days = 9\n')
    (workspace / "memcli.toml").write_text("[search]\nlimit = 4\n")
    monkeypatch.setenv("MEMCLI_DECAY_HALF_LIFE_DAYS", "12")
    d = cli("config", "--json").json()
    s = d["settings"]
    assert (s["search.limit"]["value"], s["search.limit"]["origin"]) == (4, "workspace")
    assert (s["search.strategy"]["value"], s["search.strategy"]["origin"]) == ("keyword", "user")
    assert (s["decay.half_life_days"]["value"], s["decay.half_life_days"]["origin"]) == (
        12.0,
        "env",
    )
    assert s["index.chunk_chars"]["origin"] == "default"
    assert d["files"]["user"] == {"path": str(user), "exists": True}
    assert d["files"]["workspace"]["exists"] is True
    # the piped table: tab-separated, with a header
    lines = cli("config").stdout.splitlines()
    assert lines[0] == "setting\tvalue\torigin"
    assert "search.limit\t4\tworkspace" in lines
    assert 'search.strategy\t"keyword"\tuser' in lines
    assert "decay.half_life_days\t12.0\tenv" in lines


def test_outside_a_workspace_shows_defaults_user_and_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMCLI_SEARCH_LIMIT", "2")
    r = run_here("config", "--json")
    assert r.exit_code == 0
    assert r.json()["workspace"] is None and r.json()["files"]["workspace"] is None
    assert r.json()["settings"]["search.limit"] == {
        "value": 2,
        "origin": "env",
        "default": 8,
        "env": "MEMCLI_SEARCH_LIMIT",
        "ignored": None,
    }
    assert "no workspace" in run_here("config").stderr


# -- get --------------------------------------------------------------------------------------
def test_get_prints_the_bare_value(cli: Cli, workspace: Path) -> None:
    (workspace / "memcli.toml").write_text('[embedding]\nmodel = "openai/text-embedding-3-small"\n')
    untrusted = cli("config", "get", "embedding.model")
    assert untrusted.stdout == "\n" and "not trusted (memcli trust)" in untrusted.stderr
    assert cli("config", "get", "--json", "embedding.model").json()["ignored"] == {
        "value": "openai/text-embedding-3-small",
        "origin": "workspace",
        "reason": "untrusted",
    }
    assert cli("trust").exit_code == 0
    assert cli("config", "get", "embedding.model").stdout == "openai/text-embedding-3-small\n"
    assert cli("config", "get", "search.limit").stdout == "8\n"
    assert cli("config", "get", "decay.enabled").stdout == "false\n"
    assert cli("config", "get", "index.include").stdout == '["memory/**/*.md"]\n'
    d = cli("config", "get", "--json", "embedding.model").json()
    assert d == {
        "key": "embedding.model",
        "value": "openai/text-embedding-3-small",
        "origin": "workspace",
        "default": "",
        "env": "MEMCLI_EMBEDDING_MODEL",
        "ignored": None,
    }


def test_get_unknown_setting_is_usage_error(cli: Cli) -> None:
    r = cli("config", "get", "search.nope")
    assert r.exit_code == 2 and "unknown setting" in r.stderr and "memcli config" in r.stderr
    assert r.stdout == ""


# -- set and unset ------------------------------------------------------------------------------
def test_set_keeps_comments_and_layout(cli: Cli, workspace: Path) -> None:
    toml = workspace / "memcli.toml"
    toml.write_text(TEAM_TOML)
    assert cli("config", "set", "search.limit", "3").exit_code == 0
    assert cli("config", "set", "decay.half_life_days", "14").exit_code == 0
    assert cli("config", "set", "embedding.model", "openai/nomic-embed-text").exit_code == 0
    text = toml.read_text()
    assert text.startswith("# Team settings: reviewed in pull requests.\n[search]\n")
    assert "limit = 3   # agents want few results\n" in text
    assert '# strategy = "hybrid"   (not yet)\n' in text
    assert "[decay]   # time matters here\nenabled = true\nhalf_life_days = 14.0\n" in text
    assert text.endswith('[embedding]\nmodel = "openai/nomic-embed-text"\n')
    d = cli("config", "--json").json()["settings"]
    assert (d["search.limit"]["value"], d["search.limit"]["origin"]) == (3, "workspace")
    assert d["decay.half_life_days"]["value"] == 14.0
    # unset removes just that line and keeps the rest
    assert cli("config", "unset", "decay.half_life_days").exit_code == 0
    assert toml.read_text() == text.replace("half_life_days = 14.0\n", "")


def test_set_converts_types(cli: Cli, workspace: Path) -> None:
    cli("config", "set", "decay.enabled", "yes")
    cli("config", "set", "index.include", '["memory/**/*.md", "notes/*.md"]')
    cli("config", "set", "index.max_file_mb", "2")
    cli("config", "set", "search.limit", "5")
    text = (workspace / "memcli.toml").read_text()
    assert "enabled = true\n" in text
    assert 'include = ["memory/**/*.md", "notes/*.md"]\n' in text
    assert "max_file_mb = 2.0\n" in text and "limit = 5\n" in text
    cli("config", "set", "index.include", "memory/**/*.md, docs/*.md")
    assert cli("config", "get", "index.include").stdout == '["memory/**/*.md", "docs/*.md"]\n'


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("search.limit", "many", "expects int"),
        ("decay.enabled", "perhaps", "expects bool"),
        ("search.nope", "1", "unknown setting"),
        ("nope.limit", "1", "unknown setting"),
    ],
)
def test_set_refuses_bad_values_and_leaves_the_file(
    cli: Cli, workspace: Path, key: str, value: str, message: str
) -> None:
    toml = workspace / "memcli.toml"
    toml.write_text(TEAM_TOML)
    r = cli("config", "set", key, value)
    assert r.exit_code == 2 and message in r.stderr
    assert toml.read_text() == TEAM_TOML


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("embedding.api_key", "sk-proj-abcdefghijklmnopqrstuvwxyz012345"),
        ("llm.token", "abc"),
        ("llm.client_secret", "abc"),
        ("embedding.api_key_env", "sk-proj-abcdefghijklmnopqrstuvwxyz012345"),
        ("embedding.api_base", "https://alice:s3cretpassw0rd@models.example.com/v1"),
        ("llm.prompt_file", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
    ],
)
def test_set_refuses_secrets(cli: Cli, workspace: Path, key: str, value: str) -> None:
    r = cli("config", "set", key, value)
    assert r.exit_code == 2, r.stderr
    assert "secret" in r.stderr or "environment variable" in r.stderr
    assert value not in r.stderr + r.stdout
    assert not (workspace / "memcli.toml").exists()
    r = cli("config", "set", "--user", key, value)
    assert r.exit_code == 2 and not user_config_path().exists()


def test_api_key_env_names_a_variable(cli: Cli, workspace: Path) -> None:
    r = cli("config", "set", "embedding.api_key_env", "OPENAI_API_KEY")
    assert r.exit_code == 0
    assert 'api_key_env = "OPENAI_API_KEY"' in (workspace / "memcli.toml").read_text()
    assert cli("config", "set", "search.keyword_weight", "0.4").exit_code == 0  # not a "key"


def test_set_user_writes_the_user_config(cli: Cli, workspace: Path) -> None:
    r = cli("config", "set", "--user", "--json", "search.limit", "2")
    assert r.exit_code == 0
    d = r.json()
    assert d["scope"] == "user" and d["file"] == str(user_config_path())
    assert d["effective"] == {"value": 2, "origin": "user"}
    assert user_config_path().read_text() == "[search]\nlimit = 2\n"
    assert not (workspace / "memcli.toml").exists()


def test_set_warns_when_a_higher_layer_wins(
    cli: Cli, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_SEARCH_LIMIT", "9")
    r = cli("config", "set", "--json", "search.limit", "3")
    assert r.exit_code == 0 and r.json()["effective"] == {"value": 9, "origin": "env"}
    assert "MEMCLI_SEARCH_LIMIT" in r.stderr and "wins" in r.stderr
    (workspace / "memcli.toml").write_text("[search]\nlimit = 4\n")
    monkeypatch.delenv("MEMCLI_SEARCH_LIMIT")
    r = cli("config", "set", "--user", "search.limit", "5")
    assert "workspace" in r.stderr and "wins over user" in r.stderr


def test_set_without_workspace_needs_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = run_here("config", "set", "search.limit", "3")
    assert r.exit_code == 3 and "--user" in r.stderr
    assert run_here("config", "set", "--user", "search.limit", "3").exit_code == 0


def test_set_refuses_to_touch_a_broken_file(cli: Cli, workspace: Path) -> None:
    toml = workspace / "memcli.toml"
    toml.write_text("[search\nlimit = 3\n")
    r = cli("config", "set", "search.limit", "4")
    assert r.exit_code == 2 and "invalid TOML" in r.stderr
    assert toml.read_text() == "[search\nlimit = 3\n"


def test_set_keeps_file_mode_and_reports_no_change(cli: Cli, workspace: Path) -> None:
    toml = workspace / "memcli.toml"
    toml.write_text("[search]\nlimit = 3\n")
    toml.chmod(0o600)
    assert cli("config", "set", "search.limit", "4").exit_code == 0
    assert stat.S_IMODE(toml.stat().st_mode) == 0o600
    again = cli("config", "set", "--json", "search.limit", "4").json()
    assert again["changed"] is False
    gone = cli("config", "unset", "--json", "decay.enabled").json()
    assert gone["changed"] is False and gone["effective"]["origin"] == "default"


def test_a_set_value_is_used_by_other_commands(cli: Cli) -> None:
    for i in range(4):
        cli("add", "--to", f"topic{i}.md", f"Valkey fact number {i} about caching.")
    assert len(cli("search", "--json", "valkey").json()["results"]) == 4
    cli("config", "set", "search.limit", "2")
    assert len(cli("search", "--json", "valkey").json()["results"]) == 2


# -- path ---------------------------------------------------------------------------------------
def test_path(cli: Cli, workspace: Path) -> None:
    d = cli("config", "path", "--json").json()
    assert d == {"user": str(user_config_path()), "workspace": str(workspace / "memcli.toml")}
    assert cli("config", "path", "--user").stdout == f"{user_config_path()}\n"
    assert cli("config", "path", "--workspace").stdout == f"{workspace / 'memcli.toml'}\n"
    lines = cli("config", "path").stdout.splitlines()
    assert lines == [f"user: {user_config_path()}", f"workspace: {workspace / 'memcli.toml'}"]


# -- allowed values -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("search.limit", "0", "search.limit must be from 1 to 1000, got 0"),
        ("search.strategy", "fuzzy", 'must be one of auto, keyword, vector, hybrid, got "fuzzy"'),
        ("search.fusion", "borda", "search.fusion must be one of rrf, weighted"),
        ("git.sync_strategy", "squash", "git.sync_strategy must be one of rebase, merge"),
        ("search.keyword_weight", "-1", "search.keyword_weight must be from 0 to 100, got -1"),
        ("index.lock_timeout", "-1", "index.lock_timeout must be from 0 to 86400"),
        ("embedding.timeout", "0", "embedding.timeout must be above 0 and at most 3600, got 0"),
    ],
)
def test_set_refuses_values_outside_the_allowed_ones(
    cli: Cli, workspace: Path, key: str, value: str, message: str
) -> None:
    toml = workspace / "memcli.toml"
    toml.write_text(TEAM_TOML)
    for args in (
        ("config", "set", "--", key, value),
        ("config", "set", "--user", "--", key, value),
    ):
        r = cli(*args)
        lines = r.stderr.splitlines()
        assert r.exit_code == 2 and len(lines) == 1, r.stderr
        assert lines[0].startswith("Error: ") and message in lines[0]
    assert toml.read_text() == TEAM_TOML and not user_config_path().exists()


def test_a_hand_edited_bad_value_stops_the_first_command(cli: Cli, workspace: Path) -> None:
    toml = workspace / "memcli.toml"
    toml.write_text(TEAM_TOML.replace("limit = 6", "limit = 0"))
    r = cli("search", "anything")
    assert r.exit_code == 2
    assert r.stderr.strip().splitlines() == [
        f"Error: {toml}: search.limit must be from 1 to 1000, got 0"
    ]
    # doctor names the key and the file; config path still answers; config set repairs it
    d = cli("doctor", "--json")
    assert d.exit_code == 1
    check = {c["name"]: c for c in d.json()["checks"]}["config"]
    assert check["status"] == "problem"
    assert check["summary"] == f"{toml}: search.limit must be from 1 to 1000, got 0"
    assert "memcli config set" in check["hint"]
    assert cli("config", "path", "--workspace").stdout == f"{toml}\n"
    assert cli("config", "set", "search.limit", "5").exit_code == 0
    assert "limit = 5   # agents want few results" in toml.read_text()
    assert cli("search", "anything").exit_code == 1  # runs again (nothing found)


def test_doctor_reports_every_bad_value_of_both_files(cli: Cli, workspace: Path) -> None:
    user = user_config_path()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('[search]\nfusion = "borda"\n')
    (workspace / "memcli.toml").write_text("[decay]\nhalf_life_days = 0\n")
    r = cli("doctor", "--json")
    check = {c["name"]: c for c in r.json()["checks"]}["config"]
    assert check["status"] == "problem" and "(and 1 more)" in check["summary"]
    assert check["details"]["problems"] == [
        f'{user}: search.fusion must be one of rrf, weighted, got "borda"',
        f"{workspace / 'memcli.toml'}: decay.half_life_days must be above 0 and at most 36500,"
        " got 0",
    ]


def test_a_bad_variable_is_named_by_the_first_command(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_SEARCH_STRATEGY", "fuzzy")
    r = cli("status")
    assert r.exit_code == 2
    assert r.stderr.strip().splitlines() == [
        "Error: MEMCLI_SEARCH_STRATEGY: search.strategy must be one of auto, keyword, vector,"
        ' hybrid, got "fuzzy"'
    ]
    check = {c["name"]: c for c in cli("doctor", "--json").json()["checks"]}["config"]
    assert check["status"] == "problem" and "MEMCLI_SEARCH_STRATEGY" in check["summary"]
    assert check["hint"] == "fix or unset the variable"
