"""memcli sync while other clones push at the same time: real clones of a real bare repository,
each syncing in its own process. Contention is retried with jittered backoff up to
``git.sync_timeout``; a final failure shows git's own words; the summary is one honest line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memcli.notes.workspace import init_workspace
from tests.test_git import git, make_repo, write

pytestmark = pytest.mark.slow

DAY = "memory/2026-11-22.md"
TIMEOUT = 240


def memcli(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "memcli", "-w", str(root), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def run(root: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    proc = memcli(root, *args, env=env)
    out, err = proc.communicate(timeout=TIMEOUT)
    return proc.returncode, out, err


def remote_and_clones(tmp_path: Path, n: int) -> tuple[Path, list[Path]]:
    remote = make_repo(tmp_path / "remote.git", bare=True)
    seed = make_repo(tmp_path / "seed")
    init_workspace(seed)
    write(seed / DAY, "# 2026-11-22\n\n- 08:00 seed fact\n")
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "init memory")
    git(seed, "remote", "add", "origin", str(remote))
    git(seed, "push", "-q", "-u", "origin", "main")
    clones = []
    for i in range(n):
        clone = tmp_path / f"clone{i}"
        git(tmp_path, "clone", "-q", str(remote), str(clone))
        clones.append(clone)
    return remote, clones


def test_six_clones_syncing_at_once_all_succeed(tmp_path: Path) -> None:
    remote, clones = remote_and_clones(tmp_path, 6)
    facts: list[str] = []
    for round_ in range(2):
        for i, clone in enumerate(clones):
            fact = f"Fact {i} of round {round_} from clone {i}."
            code, _, err = run(clone, "add", "--to", DAY, "--commit", fact)
            assert code == 0, err
            facts.append(fact)
        procs = [memcli(clone, "sync", "--json") for clone in clones]
        answers = [p.communicate(timeout=TIMEOUT) for p in procs]
        for p, (out, err) in zip(procs, answers, strict=True):
            assert p.returncode == 0, err
            assert json.loads(out)["pushed"] >= 1
    for clone in clones:  # one more pass brings every clone to the remote's state
        code, _, err = run(clone, "sync", "--json")
        assert code == 0, err
    tip = git(remote, "rev-parse", "main").strip()
    for clone in clones:
        assert git(clone, "rev-parse", "HEAD").strip() == tip
        text = (clone / DAY).read_text()
        assert all(fact in text for fact in facts), text
        assert "<<<<<<<" not in text
    remote_text = git(remote, "show", f"main:{DAY}")
    assert sorted(ln for ln in remote_text.splitlines() if "round" in ln) == sorted(
        ln for ln in (clones[0] / DAY).read_text().splitlines() if "round" in ln
    )
    assert sum(1 for ln in remote_text.splitlines() if "round" in ln) == len(facts)


def test_a_ref_lock_held_for_a_moment_is_waited_out(tmp_path: Path) -> None:
    remote, (a,) = remote_and_clones(tmp_path, 1)
    code, _, err = run(a, "add", "--to", DAY, "--commit", "A fact pushed once the lock is gone.")
    assert code == 0, err
    lock = remote / "refs" / "heads" / "main.lock"
    lock.write_text("another push holds this ref\n")
    proc = memcli(a, "sync", "--json")
    time.sleep(1.5)
    lock.unlink()
    out, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 0, err
    answer = json.loads(out)
    assert answer["pushed"] == 1 and answer["attempts"] > 1
    assert "A fact pushed once the lock is gone." in git(remote, "show", f"main:{DAY}")


def test_contention_past_the_time_limit_fails_with_gits_cause(tmp_path: Path) -> None:
    remote, (a,) = remote_and_clones(tmp_path, 1)
    code, _, err = run(a, "add", "--to", DAY, "--commit", "A fact that cannot be pushed.")
    assert code == 0, err
    (remote / "refs" / "heads" / "main.lock").write_text("held\n")
    started = time.monotonic()
    code, out, err = run(a, "sync", env={"MEMCLI_GIT_SYNC_TIMEOUT": "2"})
    took = time.monotonic() - started
    assert code == 3 and out == ""
    first = err.splitlines()[0]
    assert first.startswith("Error: push to origin failed after "), err
    assert "attempts in " in first
    # git's own words, not only "failed to push some refs"
    assert "main.lock" in first and "File exists" in first, err
    assert "Hint:" in err and "git.sync_timeout" in err
    assert took < 60  # the limit holds (it is 2 s; start-up on a busy machine is the rest)
    # the fact is committed here and says so nowhere falsely: nothing was pushed
    assert "A fact that cannot be pushed." not in git(remote, "show", f"main:{DAY}")


def test_a_time_limit_of_zero_means_one_attempt(tmp_path: Path) -> None:
    remote, (a,) = remote_and_clones(tmp_path, 1)
    assert run(a, "add", "--to", DAY, "--commit", "One attempt only.")[0] == 0
    (remote / "refs" / "heads" / "main.lock").write_text("held\n")
    code, _, err = run(a, "sync", env={"MEMCLI_GIT_SYNC_TIMEOUT": "0"})
    assert code == 3 and "after 1 attempt in " in err, err


def test_summary_is_one_honest_line(tmp_path: Path) -> None:
    _, (a, b) = remote_and_clones(tmp_path, 2)
    (b / "memory" / "MEMORY.md").open("a").write("- Pending on B, committed by sync.\n")
    assert run(a, "add", "--to", DAY, "--commit", "Pushed from A.")[0] == 0
    assert run(a, "sync")[0] == 0
    code, out, err = run(b, "sync")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("main <-> origin/main: committed ")
    assert "pulled 1 commit (rebase), pushed 1 commit; re-indexed " in lines[0], lines[0]
    assert lines[1:] == [f"  changed: {DAY}"]
    code, out, _ = run(b, "sync")
    assert code == 0
    assert out == "main <-> origin/main: already in step, nothing to pull or push; index current\n"


def test_a_conflict_after_committing_does_not_say_nothing_changed(tmp_path: Path) -> None:
    _, (a, b) = remote_and_clones(tmp_path, 2)
    ever = "memory/MEMORY.md"
    write(a / ever, "# Memory\n\nDeploys happen on Tuesday.\n")
    git(a, "commit", "-q", "-am", "Tuesday")
    assert run(a, "sync")[0] == 0
    write(b / ever, "# Memory\n\nDeploys happen on Friday.\n")  # pending: sync commits it
    code, _, err = run(b, "sync")
    assert code == 3
    sha = git(b, "rev-parse", "--short=10", "HEAD").strip()
    assert "nothing was changed here" not in err
    assert f"committed here as {sha}, not pushed" in err, err
