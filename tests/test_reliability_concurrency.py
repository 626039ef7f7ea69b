"""Concurrency: many memcli processes at once lose nothing and never see 'database is locked'."""

from __future__ import annotations

import collections
import queue
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from memcli.notes.entries import parse_entries
from tests.test_reliability import MEMCLI, memcli
from tests.test_watch import WatchProcess

pytestmark = pytest.mark.slow

WORKERS = 8
ADDS_PER_WORKER = 25

# One worker: a Python process that runs `python -m memcli add` ADDS_PER_WORKER times in a
# row and reports every failure (exit code and stderr) on its own stdout as JSON lines.
WORKER = textwrap.dedent(
    """
    import json, subprocess, sys
    cmd, root = json.loads(sys.argv[1]), sys.argv[2]
    worker, count = int(sys.argv[3]), int(sys.argv[4])
    for i in range(count):
        text = f"fact from worker {worker} number {i} token w{worker}x{i}q"
        p = subprocess.run([*cmd, "-w", root, "add", "--json", text], capture_output=True,
                           text=True)
        out = {"code": p.returncode, "stderr": p.stderr, "stdout": p.stdout}
        print(json.dumps(out), flush=True)
    """
)


def _start_workers(root: Path, count: int) -> list[subprocess.Popen[str]]:
    import json

    return [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, json.dumps(MEMCLI), str(root), str(w), str(count)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(WORKERS)
    ]


def test_parallel_adds_keep_every_fact_once(workspace: Path) -> None:
    import json

    procs = _start_workers(workspace, ADDS_PER_WORKER)
    runs: list[dict[str, Any]] = []
    for p in procs:
        out, err = p.communicate(timeout=900)
        assert p.returncode == 0, err
        runs.extend(json.loads(line) for line in out.splitlines())
    assert len(runs) == WORKERS * ADDS_PER_WORKER
    failures = [r for r in runs if r["code"] != 0]
    assert failures == []
    assert not any("locked" in r["stderr"].lower() for r in runs)
    paths = {json.loads(r["stdout"])["path"] for r in runs}
    assert len(paths) == 1, paths  # all went to today's daily file (no day change mid-test)

    text = (workspace / paths.pop()).read_text(encoding="utf-8")
    tokens = re.findall(r"token w(\d+)x(\d+)q", text)
    counts = collections.Counter(tokens)
    expected = {(str(w), str(i)) for w in range(WORKERS) for i in range(ADDS_PER_WORKER)}
    assert set(counts) == expected  # every fact is there
    assert max(counts.values()) == 1  # and only once
    # Each fact is one whole line of its own: no interleaving, no torn or glued lines.
    fact_lines = [ln for ln in text.splitlines() if "token w" in ln]
    assert len(fact_lines) == len(expected)
    for ln in fact_lines:
        assert re.fullmatch(r"- \d\d:\d\d fact from worker (\d+) number (\d+) token w\1x\2q", ln), (
            ln
        )
    entries = parse_entries(text)
    assert len(entries) == len(expected)
    # Only the date heading, blank lines and the facts: nothing else was written.
    other = [ln for ln in text.splitlines() if ln.strip() and "token w" not in ln]
    assert len(other) == 1 and other[0].startswith("# "), other

    # The index saw them too: the last fact of a worker is found by its token.
    r = memcli(workspace, "search", "--json", "-n", "1", "w3x24q", check=True)
    assert "w3x24q" in json.loads(r.stdout)["results"][0]["snippet"]


# A mixed workload: each script is a loop of one kind of command.
def _loop(cmd: list[str], n: int, ok_codes: tuple[int, ...]) -> str:
    import json

    return textwrap.dedent(
        f"""
        import json, subprocess, sys
        cmd = {json.dumps(cmd)}
        for i in range({n}):
            args = [a.replace("{{i}}", str(i)) for a in cmd]
            p = subprocess.run(args, capture_output=True, text=True)
            print(json.dumps({{"args": args[3:], "code": p.returncode, "stderr": p.stderr,
                               "ok": p.returncode in {list(ok_codes)}}}), flush=True)
        """
    )


def _drain(lines: queue.Queue[str | None]) -> list[str]:
    out = []
    while (line := lines.get(timeout=60)) is not None:
        out.append(line)
    return out


def _corpus(root: Path, files: int = 200) -> None:
    for i in range(files):
        folder = root / "memory" / f"team{i % 4}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [f"- item {j} of note {i}: the cache uses valkey, not redis" for j in range(15)]
        (folder / f"note-{i}.md").write_text(f"# Note {i}\n\n" + "\n".join(lines) + "\n")


def test_add_index_search_together_never_locked(workspace: Path) -> None:
    """add, add --ns, index, index --force, search, search --json and a watcher, all at once,
    from a workspace that has no index yet (so the first processes race to create it)."""
    import json
    import signal

    _corpus(workspace)
    base = [*MEMCLI, "-w", str(workspace)]
    jobs = [
        (_loop([*base, "add", "concurrent fact {i} alpha"], 12, (0,))),
        (_loop([*base, "add", "--ns", "team1", "namespaced fact {i} beta"], 12, (0,))),
        (_loop([*base, "index"], 10, (0,))),
        (_loop([*base, "index", "--force"], 5, (0,))),
        (_loop([*base, "search", "valkey cache", "-n", "3"], 15, (0, 1))),
        (_loop([*base, "search", "--json", "concurrent fact"], 15, (0, 1))),
    ]
    watcher = WatchProcess(workspace, "--debounce", "50")
    procs = [
        subprocess.Popen([sys.executable, "-c", job], stdout=subprocess.PIPE, text=True)
        for job in jobs
    ]
    runs: list[dict[str, Any]] = []
    for p in procs:
        out, _ = p.communicate(timeout=900)
        assert p.returncode == 0
        runs.extend(json.loads(line) for line in out.splitlines())
    watcher.ready()
    # The other processes index what they write, so the watcher may have had nothing left
    # to do: a file written behind everyone's back proves it is still syncing.
    (workspace / "memory" / "after-jobs.md").write_text("- written after the jobs\n")
    watcher.synced("memory/after-jobs.md")
    watcher.signal(signal.SIGINT)
    assert watcher.wait() == 0
    events = watcher.seen + watcher.rest()
    assert events[-1]["event"] == "stopped", events
    assert [e for e in events if e["event"] == "error"] == []
    stderr = "".join(watcher.stderr_seen) + "".join(_drain(watcher.stderr_lines))
    assert "locked" not in ("".join(watcher.stdout_lines) + stderr).lower()
    assert len(runs) == 12 + 12 + 10 + 5 + 15 + 15
    locked = [r for r in runs if "locked" in r["stderr"].lower() or "busy" in r["stderr"].lower()]
    assert locked == []
    assert [r for r in runs if not r["ok"] or "Error" in r["stderr"]] == []

    # Nothing was lost: every add is in the Markdown and, after a final index, searchable.
    memcli(workspace, "index", check=True)
    for i in range(12):
        r = memcli(workspace, "search", "--json", f'"concurrent fact {i} alpha"', "-n", "20")
        hits = json.loads(r.stdout)["results"]
        assert any(f"concurrent fact {i} alpha" in h["snippet"] for h in hits), i
    md = "".join(p.read_text() for p in (workspace / "memory").rglob("*.md"))
    for i in range(12):
        assert md.count(f"concurrent fact {i} alpha") == 1
        assert md.count(f"namespaced fact {i} beta") == 1


def test_add_succeeds_when_index_lock_is_busy(workspace: Path) -> None:
    """The Markdown is the source of truth: a busy index must not fail an add that already
    wrote its fact (a retry would then only say 'duplicate')."""
    from memcli.index.indexfile import writer_lock
    from memcli.notes.workspace import Workspace

    lock = writer_lock(Workspace(workspace)).acquire(1)
    try:
        r = memcli(
            workspace,
            "add",
            "--json",
            "written while the index is busy",
            env=_env(MEMCLI_INDEX_LOCK_TIMEOUT="1"),
        )
    finally:
        lock.release()
    assert r.returncode == 0, r.stderr
    assert "index" in r.stderr.lower()  # a warning says the index will catch up
    text = "".join(p.read_text() for p in (workspace / "memory").glob("*.md"))
    assert text.count("written while the index is busy") == 1
    r = memcli(workspace, "search", "--json", "written while busy")
    assert r.returncode == 0, r.stderr


def _env(**extra: str) -> dict[str, str]:
    import os

    return {**os.environ, **extra}
