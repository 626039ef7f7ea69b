"""Usage as people and agents type it: one-line usage errors, global options after the command,
unquoted multi-word queries, contradictory options refused, one batch answer per input line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memcli.cli.argv import hoist_globals
from memcli.errors import ExitCode


def run(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``memcli ARGS`` as a real process, as the console script runs it."""
    return subprocess.run(
        [sys.executable, "-m", "memcli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        input=stdin,
        timeout=120,
    )


@pytest.fixture
def facts(workspace: Path) -> Path:
    r = run(workspace, "-w", str(workspace), "add", "we use valkey for the session cache")
    assert r.returncode == 0, r.stderr
    return workspace


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ["search", "--bogus", "x"],  # an option search does not have
        ["log", "-n", "x"],  # a value of the wrong type
        ["config", "set"],  # a missing argument, in a group
        ["get"],
        ["nosuchcommand"],
        ["search", "--json=yes", "x"],
    ],
)
def test_a_usage_error_is_one_line_and_a_hint(facts: Path, args: list[str]) -> None:
    r = run(facts, *args)
    assert r.returncode == ExitCode.USAGE
    lines = r.stderr.splitlines()
    assert len(lines) == 2, r.stderr  # Click's block was Usage:, Try ..., a blank, Error:
    assert lines[0].startswith("Error: ") and lines[1].startswith("Hint: memcli")
    assert lines[1].endswith("-h shows the usage")
    assert r.stdout == ""


@pytest.mark.slow
def test_help_and_the_bare_command_are_unchanged(facts: Path) -> None:
    assert run(facts, "search", "-h").stdout.startswith("Usage: memcli search")
    bare = run(facts)
    assert bare.returncode == ExitCode.USAGE and "Commands:" in bare.stderr


@pytest.mark.slow
def test_global_options_after_the_command(facts: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for args in (
        ["search", "-w", str(facts), "valkey", "--json"],
        ["search", "valkey", "--json", f"--workspace={facts}", "-q", "--no-color"],
        ["status", "--json", "-w", str(facts)],
        ["files", "--json", "--workspace", str(facts), "--debug"],
    ):
        r = run(elsewhere, *args)
        assert r.returncode == 0, (args, r.stderr)
        assert json.loads(r.stdout)
    assert "valkey" in run(elsewhere, "search", "-w", str(facts), "valkey").stdout


def test_a_command_keeps_the_options_it_declares_itself() -> None:
    """``watch -q`` is watch's own quiet; ``--`` ends the options."""
    assert hoist_globals(["watch", "-q"], {"-q", "--quiet"}) == ["watch", "-q"]
    assert hoist_globals(["watch", "-q", "-w", "D"], {"-q"}) == ["-w", "D", "watch", "-q"]
    assert hoist_globals(["add", "--", "-w", "x"]) == ["add", "--", "-w", "x"]
    assert hoist_globals(["search", "x", "--debug"]) == ["--debug", "search", "x"]
    assert hoist_globals(["--help"]) == ["--help"]


@pytest.mark.slow
def test_an_unquoted_query_is_joined(facts: Path) -> None:
    quoted = run(facts, "search", "--json", "which session cache do we use")
    unquoted = run(facts, "search", "--json", "which", "session", "cache", "do", "we", "use")
    assert unquoted.returncode == 0, unquoted.stderr
    assert json.loads(unquoted.stdout) == json.loads(quoted.stdout)
    assert json.loads(unquoted.stdout)["query"] == "which session cache do we use"


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ["--json", "--files", "valkey"],
        ["--json", "--jsonl", "valkey"],
        ["--jsonl", "--files", "valkey"],
        ["--format", "json", "--files", "valkey"],
        ["--batch", "--jsonl"],
        ["--batch", "--files"],
    ],
)
def test_contradictory_output_options_are_refused(facts: Path, args: list[str]) -> None:
    r = run(facts, "search", *args, stdin="valkey\n")
    assert r.returncode == ExitCode.USAGE, r.stdout
    assert json.loads(r.stdout)["error"]["exit_code"] == ExitCode.USAGE  # JSON was asked for
    assert r.stderr.startswith("Error: ") and "cannot be combined" in r.stderr


@pytest.mark.slow
def test_batch_answers_every_line_in_order(facts: Path) -> None:
    r = run(facts, "search", "--batch", stdin="valkey\n\n   \nsession cache\n")
    assert r.returncode == 0, r.stderr
    answers = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(answers) == 4  # one per input line, blank ones included
    assert [a["query"] for a in answers] == ["valkey", "", "   ", "session cache"]
    assert answers[0]["results"] and answers[3]["results"]
    assert answers[1]["error"] == answers[2]["error"] == "empty query"
    assert run(facts, "search", "--batch", "--json", stdin="valkey\n").returncode == 0
