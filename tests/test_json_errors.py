"""`--json` means JSON on stdout for errors too: ``{"error": {...}}``, the exit code and the
stderr line unchanged, for every command, the search fast path included."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main

from memcli.cli.app import app
from tests.conftest import Cli
from tests.test_json_contract import ERROR, ERROR_BODY


def json_commands() -> Iterator[tuple[str, ...]]:
    """The command path of every command that has a ``--json`` option."""

    def walk(command: Any, path: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
        if hasattr(command, "commands"):  # a group (Typer may carry its own copy of Click)
            for name, sub in command.commands.items():
                yield from walk(sub, (*path, name))
        elif any("--json" in p.opts for p in command.params):
            yield path

    yield from walk(typer.main.get_command(app), ())


def check_error(code: int, stdout: str, stderr: str) -> dict[str, Any]:
    """The error document on stdout agrees with the exit code and the line on stderr."""
    doc = json.loads(stdout.splitlines()[-1])
    assert set(doc) == ERROR or (set(doc) == ERROR | {"event"} and doc["event"] == "error")
    error = doc["error"]
    assert set(error) == ERROR_BODY
    assert error["exit_code"] == code
    assert f"Error: {error['message']}" in " ".join(stderr.split())
    return dict(error)


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(json_commands()), ids=" ".join)
def test_a_usage_error_is_json_on_stdout(cli: Cli, command: tuple[str, ...]) -> None:
    args = ["-w", str(cli.root), *command, "--json", "--no-such-option"]
    run = subprocess.run(
        [sys.executable, "-m", "memcli", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
    )
    assert run.returncode == 2, run.stderr
    check_error(run.returncode, run.stdout, run.stderr)


@pytest.mark.parametrize(
    "args",
    [
        ("status", "--json"),
        ("files", "--json"),
        ("get", "--json", "memory/a.md"),
        ("add", "--json", "a fact"),
        ("diff", "--json"),
        ("log", "--json"),
        ("search", "--json", "x"),
        ("search", "--jsonl", "x"),
        ("search", "--format", "json", "x"),
    ],
    ids=" ".join,
)
def test_outside_a_workspace_the_error_is_json(tmp_path: Path, args: tuple[str, ...]) -> None:
    run = Cli(tmp_path / "nowhere")(*args)
    assert run.exit_code == 3
    error = check_error(run.exit_code, run.stdout, run.stderr)
    assert "memcli init" in (error["hint"] or "") + error["message"]


def test_a_bad_value_is_json_with_its_exit_code(cli: Cli) -> None:
    run = cli("search", "--json", "-n", "0", "x")
    assert run.exit_code == 2
    check_error(run.exit_code, run.stdout, run.stderr)
    run = cli("get", "--json", "memory/nowhere.md")
    assert run.exit_code == 2
    assert check_error(run.exit_code, run.stdout, run.stderr)["message"].startswith("no such")
    run = cli("get", "memory/nowhere.md")  # without --json, stdout stays empty
    assert run.exit_code == 2 and run.stdout == ""
    commands = set(json_commands())  # what the usage-error test walks
    assert {("search",), ("status",), ("get",), ("diff",), ("config", "get")} <= commands


@pytest.mark.parametrize(
    "args", [("search", "--json", "-n", "0", "x"), ("search", "--json", "x")], ids=" ".join
)
def test_the_fast_path_answers_json_too(tmp_path: Path, args: tuple[str, ...]) -> None:
    """The console script's search runs without Typer (memcli.cli.fastpath)."""
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    run = subprocess.run(
        [sys.executable, "-m", "memcli", *args],
        capture_output=True,
        text=True,
        cwd=nowhere,
        env=dict(os.environ),
    )
    assert run.returncode in (2, 3), run.stderr
    check_error(run.returncode, run.stdout, run.stderr)
