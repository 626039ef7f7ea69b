"""Only ``init`` creates a workspace: every other command pointed at a plain folder exits 3
and writes nothing there (``memcli -w /etc status`` once created /etc/.memcli/index.db)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcli.cli.app import main
from memcli.errors import ExitCode

COMMANDS = [
    ["status"],
    ["add", "a fact"],
    ["index"],
    ["search", "x"],
    ["files"],
    ["get", "memory/MEMORY.md"],
    ["watch"],
    ["diff"],
]


def run(args: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(args)
    return int(stop.value.code or 0)


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_a_plain_folder_is_refused_and_left_as_it_was(
    tmp_path: Path, args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "notes.txt").write_text("not a memory\n")
    assert run(["-w", str(plain), *args]) == ExitCode.WORKSPACE
    assert "is not a memcli workspace" in capsys.readouterr().err
    assert sorted(p.name for p in plain.iterdir()) == ["notes.txt"]


def test_the_environment_variable_is_held_to_the_same_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.setenv("MEMCLI_WORKSPACE", str(plain))
    assert run(["status"]) == ExitCode.WORKSPACE
    assert list(plain.iterdir()) == []


def test_init_makes_it_a_workspace_and_then_it_is_one(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert run(["-w", str(plain), "init"]) == 0
    assert run(["-w", str(plain), "add", "a fact"]) == 0
    assert (plain / "memory").is_dir() and (plain / ".memcli").is_dir()


def test_a_workspace_whose_memory_folder_was_removed_still_opens(tmp_path: Path) -> None:
    """Its .memcli/ shows memcli made it: commands keep working (and see no files)."""
    ws = tmp_path / "ws"
    assert run(["-w", str(ws), "init"]) == 0
    assert run(["-w", str(ws), "index"]) == 0
    for p in sorted((ws / "memory").rglob("*"), reverse=True):
        p.unlink()
    (ws / "memory").rmdir()
    assert run(["-w", str(ws), "files"]) == 0
