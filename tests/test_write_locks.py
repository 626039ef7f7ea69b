"""Each half of "no write lands in a replaced file", apart: a writer re-checks, once it holds a
file's lock, that the file is still the one at the path (a file an editor or another tool
renamed over it meanwhile is opened again), and ``sync`` waits for the writers under way
before git rewrites memory files. Real memcli processes, a lock held from the test to open
the window (tests/test_fleet_safety.py runs the two together).
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from memcli.notes.entries import parse_entries
from memcli.notes.entryparse import entry_id
from tests.test_fleet_safety import _workspace, run, start
from tests.test_git_sync import DAY, clones  # noqa: F401 (a fixture)

pytestmark = pytest.mark.slow


def _wait_until_open(proc: subprocess.Popen[str], path: Path, timeout: float = 30) -> None:
    """Until ``proc`` has ``path`` open (it then waits on the lock the test holds)."""
    fds = Path(f"/proc/{proc.pid}/fd")
    if not fds.is_dir():
        pytest.skip("needs /proc to see the writer's open files")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        for fd in list(fds.iterdir()) if fds.is_dir() else []:
            try:
                if os.readlink(fd) == str(path):
                    time.sleep(0.2)  # from open to the blocking flock
                    return
            except OSError:
                continue
        time.sleep(0.02)
    raise AssertionError(f"{proc.args!r} never opened {path}")


def _replace(path: Path, text: str) -> None:
    """Write ``text`` to a new file renamed over ``path``, as an editor or git does."""
    tmp = path.with_name(f".{path.name}.new")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def test_an_add_waiting_on_a_file_renamed_over_lands_in_the_new_file(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    notes = root / "memory" / "notes.md"
    notes.write_text("# Notes\n\n- The first note.\n", encoding="utf-8")
    held = os.open(notes, os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX)
    add = start(root, "add", "--to", "memory/notes.md", "--json", "The added fact.")
    try:
        _wait_until_open(add, notes)
        _replace(notes, "# Notes\n\n- The first note.\n- A note an editor saved.\n")
    finally:
        fcntl.flock(held, fcntl.LOCK_UN)
        os.close(held)
    out, err = add.communicate(timeout=60)
    assert add.returncode == 0, err
    assert json.loads(out)["added"] is True
    text = notes.read_text(encoding="utf-8")
    assert "The added fact." in text, text  # before: written into the file renamed away
    assert "A note an editor saved." in text


def test_a_confirm_waiting_on_a_file_renamed_over_marks_the_new_file(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    evergreen = root / "memory" / "MEMORY.md"
    fact = entry_id("The session cache is Redis.")
    assert run(root, "index").returncode == 0
    held = os.open(evergreen, os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX)
    confirm = start(root, "confirm", fact, "--by", "ops")
    try:
        _wait_until_open(confirm, evergreen)
        _replace(evergreen, evergreen.read_text(encoding="utf-8") + "- Pages go to on-call.\n")
    finally:
        fcntl.flock(held, fcntl.LOCK_UN)
        os.close(held)
    _, err = confirm.communicate(timeout=60)
    assert confirm.returncode == 0, err
    text = evergreen.read_text(encoding="utf-8")
    [redis] = [e for e in parse_entries(text) if "Redis" in e.text]
    assert any("confirmed" in s and "by ops" in s for s in redis.status), text
    assert "Pages go to on-call." in text


def test_sync_waits_for_a_writer_before_git_rewrites_memory_files(
    clones: tuple[Path, Path, Path],  # noqa: F811
) -> None:
    """A writer is inside a memory file (the test holds the writers' lock shared, as every
    add, flush and lifecycle write does): sync fetches, but merges B's change into the daily
    file only once the writer is done."""
    _, a, b = clones
    assert run(b, "add", "--to", DAY, "Beta learned on machine B.").returncode == 0
    assert run(b, "sync").returncode == 0
    daily = a / DAY
    before = daily.read_bytes(), os.stat(daily).st_ino
    assert run(a, "status").returncode == 0  # .memcli/ made
    lock = os.open(a / ".memcli" / "writers.lock", os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(lock, fcntl.LOCK_SH)
    sync = start(a, "sync", "--json")
    try:
        time.sleep(3.0)  # before: sync has merged by now
        assert (daily.read_bytes(), os.stat(daily).st_ino) == before, daily.read_text()
        assert sync.poll() is None
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        os.close(lock)
    out, err = sync.communicate(timeout=60)
    assert sync.returncode == 0, err
    assert json.loads(out)["pulled"] == 1
    assert "Beta learned on machine B." in daily.read_text(encoding="utf-8")
