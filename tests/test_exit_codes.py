"""One error path: exceptions become exit codes in exactly one place, from the command's flags."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memcli.cli.app import main
from memcli.cli.runtime import State, exit_code_for
from memcli.errors import BadInput, ExitCode, GitError, ProviderError


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (BadInput("bad"), ExitCode.USAGE),
        (GitError("no repo"), ExitCode.WORKSPACE),
        (ProviderError("down"), ExitCode.PROVIDER),
        (KeyboardInterrupt(), ExitCode.INTERRUPTED),
        (RuntimeError("surprise"), ExitCode.WORKSPACE),
    ],
)
def test_each_error_has_its_code_and_one_line(
    exc: BaseException, code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert exit_code_for(exc, State(no_color=True)) == code
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and "Traceback" not in err


def test_the_flags_come_from_the_state_not_from_argv(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["memcli", "--debug", "--no-color", "get", "x"])
    assert exit_code_for(BadInput("bad"), State()) == ExitCode.USAGE  # argv is not read
    assert "BadInput" not in capsys.readouterr().err
    assert exit_code_for(BadInput("bad"), State(debug=True)) == ExitCode.USAGE
    assert "memcli.errors.BadInput: bad" in capsys.readouterr().err  # the exception shown
    monkeypatch.setenv("MEMCLI_DEBUG", "1")
    assert exit_code_for(GitError("no repo"), State()) == ExitCode.WORKSPACE
    assert "memcli.errors.GitError: no repo" in capsys.readouterr().err


@pytest.mark.slow
def test_debug_shows_the_traceback_and_keeps_the_exit_code(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--debug adds the traceback; the exit code is the one the error carries either way."""
    for debug in ([], ["--debug"]):
        with pytest.raises(SystemExit) as stop:
            main([*debug, "-w", str(workspace), "get", "nosuch.md"])
        assert stop.value.code == ExitCode.USAGE
        assert ("Traceback" in capsys.readouterr().err) == bool(debug)
    for debug in ([], ["--debug"]):  # a workspace problem stays 3, not Python's 1
        r = subprocess.run(
            [sys.executable, "-m", "memcli", *debug, "-w", str(workspace / "nowhere"), "search"]
            + ["x"],
            capture_output=True,
            text=True,
        )
        assert r.returncode == ExitCode.WORKSPACE, r.stderr


def test_a_bad_date_is_usage_even_where_no_workspace_is(tmp_path: Path) -> None:
    """The request is checked before the workspace is looked for: exit 2, not 3."""
    with pytest.raises(SystemExit) as stop:
        main(["-w", str(tmp_path / "nowhere"), "search", "--since", "bogus", "x"])
    assert stop.value.code == ExitCode.USAGE


def test_a_bad_setting_does_not_block_git_history(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """diff, log and hooks read no setting: a bad one is a warning there, an error elsewhere."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "memcli.toml").write_text("[search]\nlimit = 0\n")
    with pytest.raises(SystemExit) as stop:
        main(["-w", str(workspace), "log", "--json"])
    assert stop.value.code == ExitCode.SUCCESS
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {"commits": []}
    assert "search.limit must be from 1 to 1000, got 0 (ignored)" in captured.err
    with pytest.raises(SystemExit) as stop:
        main(["-w", str(workspace), "search", "x"])
    assert stop.value.code == ExitCode.USAGE
