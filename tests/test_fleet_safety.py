"""A fact reported saved is saved, while other processes sync, supersede and re-create the
workspace: real memcli processes on real clones of a bare remote, with the lock-widening trick
(a lock held from the test) to open the race windows every time.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memcli.notes.entries import parse_entries
from memcli.notes.entryparse import entry_id
from tests.test_git import make_repo, write
from tests.test_git_sync import DAY, clones  # noqa: F401 (a fixture)

MEMCLI = [sys.executable, "-m", "memcli"]


def start(root: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*MEMCLI, "-w", str(root), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MEMCLI, "-w", str(root), *args], capture_output=True, text=True)


@pytest.mark.slow
def test_adds_waiting_while_sync_rewrites_their_file_are_kept(
    clones: tuple[Path, Path, Path],  # noqa: F811
) -> None:
    """Three adds wait on the daily file's lock while sync rebases that file (B pushed to
    it): each one that says "Added" is in the file afterwards, and on the remote."""
    _, a, b = clones
    assert run(b, "add", "--to", DAY, "Beta learned on machine B.").returncode == 0
    assert run(b, "sync").returncode == 0
    assert run(a, "add", "--to", DAY, "Alpha learned on machine A.").returncode == 0
    held = os.open(a / DAY, os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX)  # the adds below wait for it
    adds = [start(a, "add", "--to", DAY, "--json", f"Waiting fact {i}.") for i in range(3)]
    time.sleep(1.5)  # the adds are waiting on the file's lock
    sync = start(a, "sync", "--json")
    try:
        sync.wait(timeout=4)  # before: it rebased the file under the waiting adds
    except subprocess.TimeoutExpired:
        pass  # now: it waits for the writes under way
    fcntl.flock(held, fcntl.LOCK_UN)
    os.close(held)
    outs = [p.communicate(timeout=60) for p in adds]
    sync.communicate(timeout=120)
    assert sync.returncode == 0
    for proc, (out, err) in zip(adds, outs, strict=True):
        assert proc.returncode == 0, err
        assert json.loads(out)["added"] is True
    assert run(a, "sync").returncode == 0
    assert run(b, "sync").returncode == 0
    for clone in (a, b):
        text = (clone / DAY).read_text()
        for i in range(3):
            assert text.count(f"Waiting fact {i}.") == 1, (clone.name, text)
        assert "Alpha learned" in text and "Beta learned" in text


def _workspace(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "ws")
    subprocess.run([*MEMCLI, "init", str(root)], check=True, capture_output=True)
    write(root / "memory" / "MEMORY.md", "# Memory\n\n- The session cache is Redis.\n")
    return root


@pytest.mark.slow
def test_a_supersede_killed_between_its_writes_is_finished_by_the_next_command(
    tmp_path: Path,
) -> None:
    root = _workspace(tmp_path)
    evergreen = root / "memory" / "MEMORY.md"
    old = entry_id("The session cache is Redis.")
    held = os.open(evergreen, os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX)  # the mark under the old fact waits for it
    proc = start(root, "supersede", old, "The session cache is Valkey.")
    deadline = time.monotonic() + 30
    daily = root / "memory"
    while time.monotonic() < deadline:  # the successor is written first
        if any("Valkey" in p.read_text() for p in daily.glob("2*.md")):
            break
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    fcntl.flock(held, fcntl.LOCK_UN)
    os.close(held)
    review = run(root, "review", "--json")
    assert review.returncode in (0, 1), review.stderr
    [fact] = [e for e in parse_entries(evergreen.read_text()) if "Redis" in e.text]
    assert any(
        "superseded" in s and entry_id("The session cache is Valkey.") in s for s in fact.status
    ), evergreen.read_text()
    hits = run(root, "search", "session cache", "--json")
    texts = [r["snippet"] for r in json.loads(hits.stdout)["results"]]
    assert not any("Redis" in t and "superseded" not in t for t in texts)


@pytest.mark.slow
def test_two_supersedes_of_one_fact_give_one_winner(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    evergreen = root / "memory" / "MEMORY.md"
    old = entry_id("The session cache is Redis.")
    held = os.open(evergreen, os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX)
    first = start(root, "supersede", old, "The session cache is Valkey.")
    second = start(root, "supersede", old, "The session cache is Memcached.")
    time.sleep(1.5)
    fcntl.flock(held, fcntl.LOCK_UN)
    os.close(held)
    results = [(p, *p.communicate(timeout=60)) for p in (first, second)]
    codes = sorted(p.returncode for p, _, _ in results)
    assert codes == [0, 2], [(p.returncode, err) for p, _, err in results]
    loser = next(err for p, _, err in results if p.returncode == 2)
    assert "already superseded" in loser
    [fact] = [e for e in parse_entries(evergreen.read_text()) if "Redis" in e.text]
    assert sum("superseded" in s for s in fact.status) == 1


@pytest.mark.slow
def test_a_retracted_fact_cannot_be_superseded(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    old = entry_id("The session cache is Redis.")
    assert run(root, "forget", old, "--reason", "wrong").returncode == 0
    r = run(root, "supersede", old, "The session cache is Valkey.")
    assert r.returncode == 2 and "retracted" in r.stderr, r.stderr
    assert "Valkey" not in "".join(p.read_text() for p in (root / "memory").glob("*.md"))


@pytest.mark.slow
def test_an_engine_sees_its_workspace_made_anew(tmp_path: Path) -> None:
    """Deleted and made again at the same path while its engine runs: an add is an add, not
    a duplicate of a fact in the index of the workspace that is gone."""
    root = _workspace(tmp_path)
    serve = run(root, "serve", "--detach")
    assert serve.returncode == 0, serve.stderr
    try:
        r = run(root, "add", "--to", "memory/MEMORY.md", "--json", "Deploys go out on Tuesdays.")
        assert json.loads(r.stdout)["added"] is True
        subprocess.run(["rm", "-rf", str(root)], check=True)
        root.mkdir()
        subprocess.run([*MEMCLI, "init", str(root)], check=True, capture_output=True)
        r = run(root, "add", "--json", "Deploys go out on Tuesdays.")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["added"] is True, r.stdout
        assert "Tuesdays" in "".join(p.read_text() for p in (root / "memory").glob("*.md"))
        status = run(root, "serve", "--status", "--json")
        assert status.returncode == 0  # the same engine answered
    finally:
        run(root, "serve", "--stop")


@pytest.mark.slow
def test_a_supersede_mark_a_merge_moved_goes_back_under_its_fact(
    clones: tuple[Path, Path, Path],  # noqa: F811
) -> None:
    """A supersedes the last fact of a daily file while B appends to it: git's union merge
    keeps both sides' lines, B's first, so A's status line lands under B's new fact. After
    sync it stands under the fact it supersedes, in both clones."""
    _, a, b = clones
    assert run(a, "add", "--to", DAY, "The session cache is Redis.").returncode == 0
    assert run(a, "sync").returncode == 0
    assert run(b, "sync").returncode == 0
    assert run(b, "add", "--to", DAY, "Beta learned on machine B.").returncode == 0
    assert run(b, "sync").returncode == 0
    old = entry_id("The session cache is Redis.")
    new_text = "The session cache is Valkey."
    assert run(a, "supersede", old, new_text).returncode == 0
    for clone in (a, b, a):
        r = run(clone, "sync")
        assert r.returncode == 0, r.stderr
    for clone in (a, b):
        entries = parse_entries((clone / DAY).read_text())
        [redis] = [e for e in entries if "Redis" in e.text]
        [beta] = [e for e in entries if "Beta" in e.text]
        assert any(f"by {entry_id(new_text)}" in s for s in redis.status), (clone / DAY).read_text()
        assert beta.status == ()


def test_a_mark_both_clones_put_back_is_kept_once() -> None:
    """One clone put the mark back, the other still had it moved: the union merge keeps both
    lines, under two facts or twice under one; the next sync keeps one, under its fact."""
    from memcli.notes.annotate import rehome_superseded

    old, new = entry_id("The cache is Redis."), entry_id("The cache is Valkey.")
    mark = f"  - superseded 2026-11-28 by {new}\n"
    tail = f"- The cache is Valkey.\n  - supersedes {old}\n"
    want = f"- The cache is Redis.\n{mark}- Beta fact.\n{tail}"
    for merged in (
        f"- The cache is Redis.\n{mark}- Beta fact.\n{mark}{tail}",
        f"- The cache is Redis.\n{mark}{mark}- Beta fact.\n{tail}",
    ):
        assert rehome_superseded(merged) == want
    assert rehome_superseded(want) is None
