"""Values a settings file or ``config set`` cannot hold: negative numbers given on the command
line, numbers too large for an integer setting, fractions for a whole-number one. Each is
refused with the key, the allowed range and (for a file) the file, never a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Cli


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("index.max_file_mb", "-1", "index.max_file_mb must be above 0"),
        ("watch.debounce_ms", "-5", "watch.debounce_ms must be"),
        ("search.limit", "-3", "search.limit must be from 1 to 1000, got -3"),
        ("search.limit", "1e309", "search.limit must be from 1 to 1000, got inf"),
        ("search.limit", "2.5", "setting search.limit expects int, got '2.5'"),
    ],
)
def test_set_names_the_range_of_a_negative_or_huge_value(
    cli: Cli, workspace: Path, key: str, value: str, message: str
) -> None:
    r = cli("config", "set", key, value)
    assert r.exit_code == 2, r.stderr
    assert r.stderr.splitlines()[0] == f"Error: {message}" or message in r.stderr, r.stderr
    assert "No such option" not in r.stderr
    assert not (workspace / "memcli.toml").exists()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("limit = 1e309", "search.limit must be from 1 to 1000, got inf"),
        ("limit = inf", "search.limit must be from 1 to 1000, got inf"),
        ("limit = 2.5", "setting search.limit expects int, got 2.5"),
    ],
)
def test_a_hand_edited_huge_or_fractional_number_is_named(
    cli: Cli, workspace: Path, line: str, message: str
) -> None:
    toml = workspace / "memcli.toml"
    toml.write_text(f"[search]\n{line}\n")
    r = cli("search", "anything")
    assert r.exit_code == 2, r.stderr
    assert r.stderr.strip().splitlines() == [f"Error: {toml}: {message}"]
    check = {c["name"]: c for c in cli("doctor", "--json").json()["checks"]}["config"]
    assert check["status"] == "problem" and check["summary"] == f"{toml}: {message}"


def test_a_whole_float_still_sets_an_integer(cli: Cli, workspace: Path) -> None:
    (workspace / "memcli.toml").write_text("[search]\nlimit = 4.0\n")
    assert cli("config", "get", "search.limit").stdout.strip() == "4"
