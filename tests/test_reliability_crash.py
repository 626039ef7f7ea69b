"""Crash safety: kill -9 at any moment leaves an index that opens and Markdown that parses."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from memcli.index import db
from memcli.notes.entries import parse_entries
from memcli.notes.workspace import init_workspace
from tests.test_reliability import MEMCLI, memcli

pytestmark = pytest.mark.slow

WORDS = (
    "alpha beta gamma delta cache valkey redis postgres kafka deploy rollback schema index "
    "lock queue worker retry budget latency replica shard"
).split()


def make_corpus(root: Path, files: int, seed: int = 7) -> None:
    """``files`` dated Markdown files in 30 folders, three chunks each."""
    rnd = random.Random(seed)
    for i in range(files):
        folder = root / "memory" / f"team{i % 30}"
        folder.mkdir(parents=True, exist_ok=True)
        items = "\n".join(f"- {' '.join(rnd.choices(WORDS, k=8))} n{i}" for _ in range(6))
        prose = " ".join(rnd.choices(WORDS, k=60))
        (folder / f"2026-01-{i % 28 + 1:02d}-note{i}.md").write_text(
            f"# Note {i}\n\n{items}\n\n## Details\n\n{prose}\n", encoding="utf-8"
        )


def _kill_after(args: list[str], delay: float, lock: Path | None = None) -> int:
    """Start ``args``, SIGKILL it ``delay`` seconds later (counted from the moment it holds
    the writer lock ``lock``, when given); return its exit code."""
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if lock is not None:
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if lock.exists() and lock.read_text().strip() == str(proc.pid):
                break
            time.sleep(0.005)
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
    return proc.wait(timeout=60)


def _integrity(root: Path) -> str:
    conn = db.connect(root / ".memcli" / "index.db")
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


def _index_state(root: Path) -> dict[str, object]:
    """Everything the index says about the files, minus timestamps."""
    r = memcli(root, "files", "--json", check=True)
    files = [
        {k: v for k, v in f.items() if k != "indexed_at"} for f in json.loads(r.stdout)["files"]
    ]
    conn = db.connect(root / ".memcli" / "index.db")
    try:
        chunks = conn.execute(
            "SELECT f.path, c.start_line, c.end_line, c.heading, c.hash FROM chunks c"
            " JOIN files f ON f.id = c.file_id ORDER BY 1, 2"
        ).fetchall()
        fts = conn.execute("SELECT count(*) FROM chunks_fts").fetchone()[0]
        facts = conn.execute("SELECT count(*) FROM facts").fetchone()[0]
        conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")
    finally:
        conn.close()
    return {"files": files, "chunks": [list(c) for c in chunks], "fts": fts, "facts": facts}


def _mutate(root: Path, rnd: random.Random, step: int) -> None:
    """Edit, delete and add a few files between crashes, so the repair has real work."""
    notes = sorted((root / "memory").rglob("*.md"))
    for p in rnd.sample(notes, 4):
        with p.open("a", encoding="utf-8") as fh:
            fh.write(f"\n- edited after crash {step} zebra{step}\n")
    for p in rnd.sample(notes, 2):
        if p.name != "MEMORY.md":
            p.unlink()
    for k in range(2):
        (root / "memory" / f"new-{step}-{k}.md").write_text(f"# New {step}\n\nquokka {step} {k}\n")


def test_kill9_during_index_force_is_repaired(workspace: Path, tmp_path: Path) -> None:
    make_corpus(workspace, 3000)
    cmd = [*MEMCLI, "-w", str(workspace), "index", "--force"]
    t0 = time.monotonic()
    memcli(workspace, "index", "--force", check=True)
    full = time.monotonic() - t0
    shutil.rmtree(workspace / ".memcli")  # the first crash hits the creation of the index

    rnd = random.Random(20261122)
    lock = workspace / ".memcli" / "lock"
    kills = 0
    for step in range(8):
        # Even steps: any moment of the run (start-up, creating the index, clearing it...).
        # Odd steps: while it writes, a random moment after it took the writer lock.
        if step % 2 == 0:
            delay = rnd.uniform(0.05, full * 1.1)
            code = _kill_after(cmd, delay)
        else:
            delay = rnd.uniform(0.0, full / 3)
            code = _kill_after(cmd, delay, lock)
        kills += code == -signal.SIGKILL
        if (workspace / ".memcli" / "index.db").exists():
            assert _integrity(workspace) == "ok", f"step {step}, killed after {delay:.2f}s"
            r = memcli(workspace, "status", "--json")
            assert r.returncode == 0, r.stderr
            assert not json.loads(r.stdout)["warnings"], (step, delay)  # opened, not rebuilt
        _mutate(workspace, rnd, step)
    assert kills >= 4  # at least every run killed while writing

    r = memcli(workspace, "index", "--json")
    assert r.returncode == 0, r.stderr
    assert "rebuilt" not in r.stderr
    repaired = _index_state(workspace)

    # A fresh rebuild of the same Markdown in another workspace is the reference.
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    init_workspace(fresh)
    shutil.rmtree(fresh / "memory")
    shutil.copytree(workspace / "memory", fresh / "memory")
    memcli(fresh, "index", check=True)
    expected = _index_state(fresh)
    assert repaired["files"] == expected["files"]
    assert repaired["chunks"] == expected["chunks"]
    assert repaired["fts"] == len(expected["chunks"])  # type: ignore[arg-type]
    assert repaired["facts"] == expected["facts"]

    # And search agrees with the reference.
    for q in ("zebra3", "quokka", "valkey rollback"):
        a = json.loads(memcli(workspace, "search", "--json", "-n", "20", q).stdout)["results"]
        b = json.loads(memcli(fresh, "search", "--json", "-n", "20", q).stdout)["results"]
        key = [(h["path"], h["start_line"], h["end_line"]) for h in a]
        assert key == [(h["path"], h["start_line"], h["end_line"]) for h in b], q


def _fact(i: int) -> tuple[str, list[str]]:
    """A long multi-line fact: (stdin text, the lines it must appear as in the file)."""
    body = [f"crash fact {i} line {k} " + "x" * 60 + f" m{i}m" for k in range(400)]
    return "\n".join(body) + "\n", body


def test_kill9_during_add_leaves_whole_entry_or_none(workspace: Path) -> None:
    target = workspace / "memory" / "crash.md"
    cmd = [*MEMCLI, "-w", str(workspace), "add", "--to", "crash.md", "-"]
    t0 = time.monotonic()
    text, _ = _fact(999)
    assert subprocess.run(cmd, input=text, text=True, capture_output=True).returncode == 0
    full = time.monotonic() - t0

    rnd = random.Random(99)
    outcomes = {}
    for i in range(16):
        text, _ = _fact(i)
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert proc.stdin is not None
        proc.stdin.write(text)
        proc.stdin.close()
        try:
            proc.wait(timeout=rnd.uniform(0.3, 1.0) * full)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
        outcomes[i] = proc.wait(timeout=60)

    data = target.read_text(encoding="utf-8")
    assert data.endswith("\n")
    entries = parse_entries(data)
    present = set()
    for i in range(16):
        _, lines = _fact(i)
        marker = f" m{i}m"
        count = data.count(marker)
        if count == 0:
            assert outcomes[i] != 0, f"add {i} exited {outcomes[i]} but wrote nothing"
            continue
        assert count == len(lines), f"fact {i}: {count} of {len(lines)} lines present"
        present.add(i)
        entry = [e for e in entries if marker in e.text]
        assert len(entry) == 1
        assert entry[0].text.splitlines() == lines
    # Every entry in the file is one of the whole facts (nothing torn, nothing glued).
    assert len(entries) == len(present) + 1
    # A later add still lands on a line of its own.
    memcli(workspace, "add", "--to", "crash.md", "after the crashes", check=True)
    last = target.read_text(encoding="utf-8").splitlines()[-1]
    assert last.endswith(" after the crashes") and last.startswith("- ")


def test_kill9_releases_writer_lock(workspace: Path) -> None:
    from memcli.index.indexfile import writer_lock
    from memcli.notes.workspace import Workspace

    make_corpus(workspace, 1500)
    proc = subprocess.Popen(
        [*MEMCLI, "-w", str(workspace), "index", "--force"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    lock = writer_lock(Workspace(workspace))
    deadline = time.monotonic() + 60
    while lock.holder_pid() != proc.pid and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert lock.holder_pid() == proc.pid  # it held the lock ...
    assert not lock.try_acquire()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    assert lock.try_acquire()  # ... and its death released it at once
    lock.release()
    r = memcli(workspace, "index", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["files"] == 1501
