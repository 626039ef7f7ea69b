"""Usage that used to be accepted silently: a log of no commits, an index of a missing path."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Cli


@pytest.mark.parametrize("n", ["0", "-5"])
def test_log_needs_at_least_one_commit(cli: Cli, n: str) -> None:
    r = cli("log", "-n", n)
    assert r.exit_code == 2
    assert "-n/--limit must be at least 1" in r.stderr


def test_index_of_a_missing_path_is_refused(cli: Cli, workspace: Path) -> None:
    r = cli("index", "memory/nonexistent.md")
    assert r.exit_code == 2
    assert "no such file or folder: memory/nonexistent.md" in r.stderr


def test_index_of_a_deleted_file_removes_it(cli: Cli, workspace: Path) -> None:
    note = workspace / "memory" / "gone.md"
    note.write_text("- a fact about valkey\n")
    assert cli("index").exit_code == 0
    note.unlink()
    r = cli("index", "--json", "memory/gone.md")  # the index knows it: its removal is indexed
    assert r.exit_code == 0, r.stderr
    assert r.json()["removed"] == 1
    folder = workspace / "memory" / "team"
    folder.mkdir()
    (folder / "a.md").write_text("- valkey\n")
    assert cli("index").exit_code == 0
    (folder / "a.md").unlink()
    folder.rmdir()
    assert cli("index", "memory/team").exit_code == 0  # a folder the index knows
