"""Writes that fail: a full disk during add, a read-only .memcli/ or memory/ folder.

A full disk is simulated for real with the file size limit of the process (RLIMIT_FSIZE, as
``ulimit -f`` sets): a write past it is cut short, then fails with EFBIG, exactly where a
full disk fails. A read-only folder is a real ``chmod``; the tests run memcli as an
unprivileged user when they run as root (root writes through any permission).
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.test_reliability import memcli, tree_digest

pytestmark = pytest.mark.slow


def run_limited(root: Path, max_bytes: int, *args: str) -> subprocess.CompletedProcess[str]:
    """memcli in a process that cannot grow any file past ``max_bytes`` (a full disk)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, max_bytes))

    return memcli(root, *args, preexec_fn=limit)


def _daily(root: Path) -> Path:
    (daily,) = (root / "memory").glob("2*.md")
    return daily


@pytest.fixture
def with_facts(workspace: Path) -> Path:
    for i in range(3):
        memcli(workspace, "add", f"fact number {i} about the pager rotation", check=True)
    return workspace


def test_full_disk_add_leaves_the_file_whole_and_names_the_cause(with_facts: Path) -> None:
    daily = _daily(with_facts)
    before = daily.read_bytes()
    r = run_limited(
        with_facts, len(before) + 20, "add", "a long fact that cannot fit on the full disk at all"
    )
    assert r.returncode == 3, r.stderr
    assert "disk full" in r.stderr and "nothing was written" in r.stderr, r.stderr
    assert "rollback" not in r.stderr and "Traceback" not in r.stderr
    assert daily.read_bytes() == before  # no partial entry
    # space again: the same add works, and the index was never thrown away
    r = memcli(with_facts, "add", "a long fact that cannot fit on the full disk at all")
    assert r.returncode == 0, r.stderr
    r = memcli(with_facts, "search", "--json", "pager rotation", "-n", "10")
    assert r.returncode == 0 and "rebuilt" not in r.stdout + r.stderr


def test_full_disk_for_the_index_keeps_the_fact_and_the_index(with_facts: Path) -> None:
    """The Markdown has room, the index has none: the fact is saved (exit 0, as on disk),
    a warning names the cause, and the old index is kept, not thrown away."""
    daily = _daily(with_facts)
    r = run_limited(
        with_facts, daily.stat().st_size + 200, "add", "--json", "the index is full of cats"
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout and '"added": true' in r.stdout
    assert "not indexed yet" in r.stderr and "cannot be written" in r.stderr, r.stderr
    assert "the index is full of cats" in daily.read_text()
    # a search on the full disk answers from the index as it is
    (with_facts / "memory" / "MEMORY.md").write_text("- hand edit about the weekly pager\n")
    r = run_limited(with_facts, daily.stat().st_size + 200, "search", "--json", "pager")
    assert r.returncode == 0, r.stderr
    assert r.stdout and '"stale": true' in r.stdout
    # with space again the index catches up by itself, with no rebuild
    r = memcli(with_facts, "search", "--json", "full of cats")
    assert r.returncode == 0, r.stderr
    assert "rebuilt" not in r.stdout + r.stderr


def test_full_disk_index_command_is_a_clear_error(with_facts: Path) -> None:
    memcli(with_facts, "index", check=True)
    for i in range(40):
        (with_facts / "memory" / f"note{i}.md").write_text(f"- note {i} " + "words " * 400 + "\n")
    index_db = with_facts / ".memcli" / "index.db"
    r = run_limited(with_facts, index_db.stat().st_size, "index")
    assert r.returncode == 3, r.stderr
    assert "cannot be written" in r.stderr or "cannot write index" in r.stderr, r.stderr
    assert "rollback" not in r.stderr and "Traceback" not in r.stderr
    r = memcli(with_facts, "index", "--json")
    assert r.returncode == 0 and "rebuilt" not in r.stderr, r.stderr


@pytest.fixture
def shared_ws() -> Iterator[Path]:
    """An initialised workspace in a folder an unprivileged user can enter."""
    from memcli.notes.workspace import init_workspace

    base = Path(tempfile.mkdtemp(prefix="memcli-ro-"))
    os.chmod(base, 0o777)
    root = base / "ws"
    root.mkdir()
    init_workspace(root)
    try:
        yield root
    finally:
        for dirpath, _, _ in os.walk(base):
            os.chmod(dirpath, 0o777)
        shutil.rmtree(base, ignore_errors=True)


def _as_user(root: Path) -> tuple[list[str], dict[str, str]]:
    """The command prefix running memcli as a user who owns ``root`` (not root)."""
    env = {**os.environ, "MEMCLI_CACHE_DIR": str(root.parent / "c")}
    env["MEMCLI_CONFIG_DIR"] = str(root.parent / "cfg")
    if os.geteuid() != 0:
        return [], env
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot drop privileges")
    for dirpath, dirnames, filenames in os.walk(root.parent):
        for name in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
            os.chown(name, 65534, 65534)
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"], env


def test_read_only_state_folder(shared_ws: Path) -> None:
    root = shared_ws
    (root / "memory" / "MEMORY.md").write_text("- the cache is valkey\n")
    prefix, env = _as_user(root)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [*prefix, sys.executable, "-m", "memcli", "-w", str(root), *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)

    assert run("index").returncode == 0
    state = root / ".memcli"
    for f in state.iterdir():
        os.chmod(f, 0o444)
    os.chmod(state, 0o555)
    (root / "memory" / "MEMORY.md").write_text("- the cache is valkey\n- the queue is kafka\n")
    r = run("search", "--json", "valkey")
    assert r.returncode == 0, r.stderr
    assert '"stale": true' in r.stdout and "cannot be written" in r.stdout + r.stderr
    for args in (("files", "--json"), ("status", "--json")):
        r = run(*args)
        assert r.returncode == 0, (args, r.stderr)
    before = tree_digest(state)
    r = run("add", "--json", "the pager rotation is weekly")
    assert r.returncode == 0, r.stderr  # the fact is on disk: success, with a warning
    assert "not indexed yet" in r.stderr and "read-only" in r.stderr, r.stderr
    assert "pager rotation is weekly" in _daily(root).read_text()
    r = run("index")
    assert r.returncode == 3 and "read-only" in r.stderr, r.stderr
    assert tree_digest(state) == before  # the index was neither replaced nor removed


def test_read_only_memory_folder_refuses_add(shared_ws: Path) -> None:
    root = shared_ws
    prefix, env = _as_user(root)
    memory = root / "memory"
    before = tree_digest(memory)
    os.chmod(memory / "MEMORY.md", 0o444)
    os.chmod(memory, 0o555)
    for args in (("add", "a fact for today"), ("add", "--evergreen", "an evergreen fact")):
        cmd = [*prefix, sys.executable, "-m", "memcli", "-w", str(root), *args]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
        assert r.returncode == 3, (args, r.stderr)
        assert "read-only" in r.stderr and "nothing was written" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr
    assert tree_digest(memory) == before
