"""The small stumbles of a first hour: doctor's agent hint and plurals, a dry run's diff of a
file without a final newline, an interrupted rebuild said, the git hooks hint in status, one
kind of placeholder in --help and the search defaults shown."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from memcli.memory import Memory
from tests.conftest import Cli


def test_doctor_does_not_suggest_installing_what_is_installed(cli: Cli) -> None:
    assert cli("agent", "install", "claude-code").exit_code == 0
    checks = {c["name"]: c for c in cli("doctor", "--json").json()["checks"]}
    agent = checks["agent"]
    assert agent["hint"] != "memcli agent install", agent
    assert "installed" in agent["summary"] and "claude-code" in agent["summary"]


def test_one_entry_is_not_one_entries(cli: Cli) -> None:
    assert cli("add", "The only fact.").exit_code == 0
    assert cli("agent", "install", "claude-code").exit_code == 0
    said = cli("agent", "status").stderr
    assert "the briefing holds 1 entry" in said and "1 entries" not in said


def test_a_dry_run_diff_of_a_file_without_a_final_newline(cli: Cli, workspace: Path) -> None:
    (workspace / "CLAUDE.md").write_text("# Notes for agents")  # no final newline
    r = cli("agent", "install", "claude-code", "--dry-run")
    assert r.exit_code == 0, r.stderr
    assert "\\ No newline at end of file" in r.stdout
    for line in r.stdout.splitlines():  # a header never follows text on its line
        assert not re.search(r"\S(---|\+\+\+) ", line), line


def test_an_interrupted_rebuild_is_said_and_finished(cli: Cli, workspace: Path) -> None:
    for n in range(3):
        assert cli("add", "--to", f"f{n}.md", f"fact number {n} about caching").exit_code == 0

    def stop(done: int, total: int) -> None:
        if done:
            raise KeyboardInterrupt

    with Memory.open(workspace) as mem, pytest.raises(KeyboardInterrupt):
        mem.index(force=True, progress=stop)
    r = cli("search", "--json", "caching")
    assert r.exit_code == 0
    said = " ".join(r.json()["warnings"])
    assert "rebuild of the index" in said and "interrupted" in said
    assert len(r.json()["results"]) == 3  # every file indexed again
    again = cli("search", "--json", "caching")
    assert "interrupted" not in " ".join(again.json()["warnings"])  # the rebuild is finished


def test_status_hints_at_git_hooks_in_a_fresh_clone(cli: Cli, workspace: Path) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    r = cli("status")
    assert r.exit_code == 0 and "memcli hooks install" in r.stderr
    assert cli("hooks", "install").exit_code == 0
    assert "memcli hooks install" not in cli("status").stderr
    assert "hooks install" not in cli("status", "--json").stderr  # JSON: stdout says it all


@pytest.mark.slow
def test_help_has_one_kind_of_placeholder(cli: Cli) -> None:
    """Every command's --help: upper-case placeholders only (Typer's own were mixed)."""
    from tests.test_json_errors import json_commands

    def every(command: object, path: tuple[str, ...]) -> list[tuple[str, ...]]:
        subs = getattr(command, "commands", None)
        if subs is None:
            return [path]
        return [p for name, sub in subs.items() for p in every(sub, (*path, name))]

    import typer.main

    from memcli.cli.app import app

    commands = every(typer.main.get_command(app), ())
    assert len(commands) > 25 and set(json_commands()) <= set(commands)
    for command in commands:
        text = cli(*command, "--help").stdout
        assert not re.search(r"<[a-z]+>", text), text  # Typer's <str>, <int>, <path>
        assert not re.search(r"\{[a-z_]+\}", text), text  # {text}, {location}
        assert "WHEN" not in text, text


def test_search_help_shows_the_defaults_of_its_settings(cli: Cli) -> None:
    text = " ".join(cli("search", "--help").stdout.split())
    assert "-n, --limit N" in text and "[default: 8, the setting search.limit]" in text
