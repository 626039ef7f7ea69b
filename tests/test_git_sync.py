"""memcli sync between clones through a bare repository on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcli.git.repo import open_repo, operation_in_progress
from memcli.notes.workspace import init_workspace
from tests.conftest import Cli
from tests.test_git import append, git, head, make_repo, write

DAY = "memory/2026-11-22.md"


@pytest.fixture
def clones(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A bare 'remote' and two clones A and B of a committed workspace."""
    remote = make_repo(tmp_path / "remote.git", bare=True)
    a = make_repo(tmp_path / "a")
    init_workspace(a)
    write(a / DAY, "# 2026-11-22\n\n- 08:00 seed fact\n")
    git(a, "add", "-A")
    git(a, "commit", "-q", "-m", "init memory")
    git(a, "remote", "add", "origin", str(remote))
    git(a, "push", "-q", "-u", "origin", "main")
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(remote), str(b))
    return remote, a, b


def no_markers(text: str) -> bool:
    return not any(m in text for m in ("<<<<<<<", "=======", ">>>>>>>"))


@pytest.mark.slow
def test_concurrent_appends_to_the_same_daily_file_are_merged(
    clones: tuple[Path, Path, Path],
) -> None:
    remote, a, b = clones
    ra = Cli(a)("add", "--to", DAY, "--commit", "--json", "Alpha learned on machine A.")
    rb = Cli(b)("add", "--to", DAY, "--commit", "--json", "Beta learned on machine B.")
    assert ra.exit_code == 0 and rb.exit_code == 0, (ra.stderr, rb.stderr)

    r = Cli(a)("sync", "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["pushed"] == 1 and r.json()["pulled"] == 0

    r = Cli(b)("sync", "--json")  # B is behind and ahead: rebase, union merge, push
    assert r.exit_code == 0, r.stderr
    out = r.json()
    assert out["pulled"] == 1 and out["pushed"] == 1 and out["strategy"] == "rebase"
    assert out["changed"] == [DAY]
    assert out["index"]["files"] >= 2

    r = Cli(a)("sync", "--json")  # A fast-forwards to B's push
    assert r.exit_code == 0, r.stderr
    assert r.json()["pulled"] == 1 and r.json()["pushed"] == 0

    text_a, text_b = (a / DAY).read_text(), (b / DAY).read_text()
    assert text_a == text_b
    assert "Alpha learned on machine A." in text_a and "Beta learned on machine B." in text_a
    assert no_markers(text_a)
    assert head(a) == head(b) == git(remote, "rev-parse", "main").strip()
    # linear history (rebase), and both indexes know both facts
    assert git(a, "rev-list", "--merges", "HEAD").strip() == ""
    for clone in (a, b):
        st = Cli(clone)("status", "--json").json()
        assert st["dirty"] == []
        assert st["git"]["ahead"] == 0 and st["git"]["behind"] == 0
        for word in ("Alpha", "Beta"):
            hits = Cli(clone)("search", "--json", word).json()["results"]
            assert hits and hits[0]["path"] == DAY


@pytest.mark.slow
def test_merge_strategy_and_uncommitted_memory_is_committed(
    clones: tuple[Path, Path, Path],
) -> None:
    _, a, b = clones
    append(a / DAY, "- 09:00 from A, committed by sync\n")
    append(b / DAY, "- 09:01 from B, committed by sync\n")
    write(b / "scratch.txt", "not memory, stays uncommitted\n")
    assert Cli(a)("sync").exit_code == 0
    assert git(a, "log", "-1", "--format=%s").strip() == "memory: from A, committed by sync"

    r = Cli(b)("sync", "--strategy", "merge", "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["committed"]
    text = (b / DAY).read_text()
    assert "from A, committed by sync" in text and "from B, committed by sync" in text
    assert no_markers(text)
    assert git(b, "rev-list", "--merges", "HEAD").strip() != ""  # a merge commit
    assert git(b, "status", "--porcelain").strip() == "?? scratch.txt"


@pytest.mark.slow
def test_real_conflict_stops_cleanly_with_exit_3(clones: tuple[Path, Path, Path]) -> None:
    _, a, b = clones
    ever = "memory/MEMORY.md"
    for clone, words in ((a, "Deploys happen on Tuesday."), (b, "Deploys happen on Friday.")):
        write(clone / ever, f"# Memory\n\n{words}\n")
        git(clone, "commit", "-q", "-am", f"edit: {words}")
    assert Cli(a)("sync").exit_code == 0
    b_head = head(b)

    r = Cli(b)("sync", "--json")
    assert r.exit_code == 3
    assert "memory/MEMORY.md" in r.stderr and "changed on both sides" in r.stderr
    assert "Hint:" in r.stderr and "Traceback" not in r.stderr
    assert json.loads(r.stdout)["error"]["exit_code"] == 3  # --json: the error as JSON too
    # the rebase was aborted: B is exactly as before, no markers, nothing pushed
    repo = open_repo(b)
    assert operation_in_progress(repo) is None
    assert head(b) == b_head
    assert (b / ever).read_text() == "# Memory\n\nDeploys happen on Friday.\n"
    assert git(b, "status", "--porcelain").strip() == ""
    assert "Tuesday" in (a / ever).read_text()


@pytest.mark.slow
def test_no_push_pulls_only(clones: tuple[Path, Path, Path]) -> None:
    remote, a, b = clones
    Cli(a)("add", "--to", DAY, "--commit", "from A")
    Cli(a)("sync")
    Cli(b)("add", "--to", DAY, "--commit", "from B")
    before_remote = git(remote, "rev-parse", "main").strip()
    r = Cli(b)("sync", "--no-push", "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["pulled"] == 1 and r.json()["pushed"] == 0
    assert git(remote, "rev-parse", "main").strip() == before_remote
    assert Cli(b)("status", "--json").json()["git"]["ahead"] == 1


def test_no_commit_refuses_with_pending_changes(clones: tuple[Path, Path, Path]) -> None:
    _, a, _ = clones
    append(a / DAY, "- pending\n")
    r = Cli(a)("sync", "--no-commit")
    assert r.exit_code == 3 and "uncommitted" in r.stderr


def test_no_upstream_is_a_clear_error(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "solo")
    init_workspace(root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    r = Cli(root)("sync")
    assert r.exit_code == 3
    assert "no upstream" in r.stderr and "git push -u" in r.stderr
    git(root, "switch", "-q", "--detach")
    r = Cli(root)("sync")
    assert r.exit_code == 3 and "detached" in r.stderr


def test_unreachable_remote_exit_3(clones: tuple[Path, Path, Path], tmp_path: Path) -> None:
    remote, a, _ = clones
    remote.rename(tmp_path / "moved.git")
    r = Cli(a)("sync")
    assert r.exit_code == 3
    assert r.stderr.startswith("Error: fetch from origin failed after 1 attempt")
    assert "does not appear to be a git repository" in r.stderr


def test_bad_strategy_is_usage_error(clones: tuple[Path, Path, Path]) -> None:
    _, a, _ = clones
    r = Cli(a)("sync", "--strategy", "octopus")
    assert r.exit_code == 2


@pytest.mark.slow
def test_lifecycle_changes_on_two_clones_merge_and_round_trip(
    clones: tuple[Path, Path, Path],
) -> None:
    """A supersede on A and a confirm of the same fact on B: both status lines survive the
    union merge, and each index gives the same answer after sync and after index --force."""
    _, a, b = clones
    fid = Cli(a)("search", "seed fact", "--json").json()["results"][0]["ids"][0]
    assert Cli(b)("confirm", fid, "--by", "bob", "--commit").exit_code == 0
    r = Cli(a)("supersede", fid, "The seed fact was replaced.", "--commit", "--json")
    assert r.exit_code == 0, r.stderr
    for clone in (a, b, a):
        r = Cli(clone)("sync", "--json")
        assert r.exit_code == 0, r.stderr
    text_a, text_b = (a / DAY).read_text(), (b / DAY).read_text()
    assert text_a == text_b and no_markers(text_a)
    assert "  - confirmed " in text_a and "  - superseded " in text_a
    for clone in (a, b):
        for force in (False, True):
            if force:
                assert Cli(clone)("index", "--force").exit_code == 0
            hits = Cli(clone)("search", "seed fact", "--json").json()["results"]
            snippet = "\n".join(h["snippet"] for h in hits)
            assert "The seed fact was replaced." in snippet
            assert "08:00 seed fact" not in snippet


@pytest.mark.slow
def test_a_status_line_a_merge_moves_under_another_fact_still_counts_for_its_own(
    clones: tuple[Path, Path, Path],
) -> None:
    """A forgets the last fact of a day file while B appends one to it; B's ``git pull``
    (a merge, union for memory files) leaves A's ``retracted`` line under B's new fact. The
    line names its fact, so the forgotten one stays hidden and the new one is found."""
    from tests.test_reliability import memcli

    _remote, a, b = clones
    memcli(a, "forget", f"{DAY}:3", "--reason", "it was wrong", check=True)
    git(a, "commit", "-qam", "forget the seed")
    git(a, "push", "-q")
    memcli(b, "add", "--to", DAY, "Beta learned on machine B.", check=True)
    git(b, "commit", "-qam", "beta")
    git(b, "pull", "-q", "--no-rebase", "--no-edit")
    lines = (b / DAY).read_text().splitlines()
    assert lines[2] == "- 08:00 seed fact" and "Beta learned" in lines[3]
    assert lines[4].startswith("  - retracted ")  # under Beta's fact now
    found = memcli(b, "search", "--json", "Beta learned on machine B", check=True)
    assert "Beta learned" in json.loads(found.stdout)["results"][0]["snippet"]
    seed = json.loads(memcli(b, "search", "--json", "seed fact").stdout)["results"]
    assert not any("seed fact" in hit["snippet"] for hit in seed)
