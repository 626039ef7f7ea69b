"""A supersede is one change for git too: no commit that sync makes, and so no clone, ever
holds its successor without the mark under the old fact. Real clones of a bare remote and
real memcli processes; the old fact's file is locked from the test to hold the supersede
between its two writes (tests/test_fleet_safety.py has the other lifecycle findings).
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from memcli.notes.entryparse import entry_id
from tests.test_fleet_safety import run, start
from tests.test_git import git
from tests.test_git_sync import clones  # noqa: F401 (a fixture)

pytestmark = pytest.mark.slow

OLD = "The session cache is Redis."
NEW = "The session cache is Valkey."


def _shared_fact(a: Path, b: Path) -> Path:
    """OLD in A's MEMORY.md, committed and on the remote; B has it too."""
    evergreen = a / "memory" / "MEMORY.md"
    with evergreen.open("a", encoding="utf-8") as fh:
        fh.write(f"\n- {OLD}\n")
    assert run(a, "sync").returncode == 0
    assert run(b, "sync").returncode == 0
    assert run(a, "index").returncode == 0
    return evergreen


def _wait_for_successor(root: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any("Valkey" in p.read_text() for p in (root / "memory").glob("2*.md")):
            time.sleep(0.2)
            return
        time.sleep(0.05)
    raise AssertionError("the successor was never written")


def _halves(repo: Path, rev: str) -> tuple[bool, bool]:
    """Whether commit ``rev`` holds the successor, and the mark naming it."""

    def has(pattern: str) -> bool:
        found = subprocess.run(
            ["git", "grep", "-q", "-F", pattern, rev, "--", "memory"], cwd=repo, check=False
        )
        return found.returncode == 0

    return has(NEW), has(f"by {entry_id(NEW)}")


def _commits_are_whole(repo: Path) -> None:
    for rev in git(repo, "rev-list", "HEAD").split():
        successor, mark = _halves(repo, rev)
        assert successor == mark, f"commit {rev[:10]}: successor {successor}, mark {mark}"


def test_a_sync_during_a_supersede_commits_both_writes_or_neither(
    clones: tuple[Path, Path, Path],  # noqa: F811
) -> None:
    _, a, b = clones
    evergreen = _shared_fact(a, b)
    held = os.open(evergreen, os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX)  # the mark under the old fact waits for it
    supersede = start(a, "supersede", entry_id(OLD), NEW)
    try:
        _wait_for_successor(a)
        sync = start(a, "sync", "--json")
        try:
            sync.wait(timeout=3)  # before: it committed and pushed the successor alone
        except subprocess.TimeoutExpired:
            pass  # now: it waits for the supersede's second write
    finally:
        fcntl.flock(held, fcntl.LOCK_UN)
        os.close(held)
    _, err = supersede.communicate(timeout=60)
    assert supersede.returncode == 0, err
    _, err = sync.communicate(timeout=60)
    assert sync.returncode == 0, err
    assert run(a, "sync").returncode == 0
    assert run(b, "sync").returncode == 0
    for clone in (a, b):
        _commits_are_whole(clone)
        assert _halves(clone, "HEAD") == (True, True)


def test_a_sync_after_a_supersede_was_killed_between_its_writes_pushes_it_whole(
    clones: tuple[Path, Path, Path],  # noqa: F811
) -> None:
    _, a, b = clones
    evergreen = _shared_fact(a, b)
    held = os.open(evergreen, os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX)
    supersede = start(a, "supersede", entry_id(OLD), NEW)
    try:
        _wait_for_successor(a)
        supersede.send_signal(signal.SIGKILL)
        supersede.wait()
    finally:
        fcntl.flock(held, fcntl.LOCK_UN)
        os.close(held)
    r = run(a, "sync", "--json")
    assert r.returncode == 0, r.stderr
    assert run(b, "sync").returncode == 0
    for clone in (a, b):
        _commits_are_whole(clone)
        assert _halves(clone, "HEAD") == (True, True), (clone / "memory" / "MEMORY.md").read_text()
