"""``add --commit`` when the commit cannot be made: a pre-commit hook that refuses, no git
identity, a merge or rebase under way, a detached HEAD. Real git repositories, real hooks,
memcli in a subprocess; every message says what is on disk and in git."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.test_git import git, head, repo_workspace
from tests.test_reliability import memcli

pytestmark = pytest.mark.slow


def _status(root: Path) -> str:
    return git(root, "status", "--porcelain")


def _daily(root: Path) -> Path:
    (daily,) = (root / "memory").glob("2*.md")
    return daily


def test_refused_commit_leaves_nothing_staged_and_the_retry_commits(tmp_path: Path) -> None:
    root = repo_workspace(tmp_path / "r")
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'lint: trailing words refused' >&2\nexit 1\n")
    hook.chmod(0o755)
    before = head(root)
    r = memcli(root, "add", "--commit", "the release train leaves on tuesday")
    assert r.returncode == 3, r.stderr
    assert "saved in memory/" in r.stderr and "not committed" in r.stderr, r.stderr
    assert "nothing is staged" in r.stderr
    assert head(root) == before
    daily = _daily(root).relative_to(root).as_posix()
    assert _status(root) == f"?? {daily}\n"  # on disk, not staged
    assert "release train" in _daily(root).read_text()

    hook.unlink()
    r = memcli(root, "add", "--json", "--commit", "the release train leaves on tuesday")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert '"added": false' in out and '"commit": null' not in out, out
    assert head(root) != before
    assert "release train" in git(root, "show", "HEAD:" + daily)
    assert "memory: the release train leaves on tuesday" in git(root, "log", "-1", "--format=%s")
    assert _status(root) == ""
    # a third time it is committed already: nothing to do
    r = memcli(root, "add", "--json", "--commit", "the release train leaves on tuesday")
    assert r.returncode == 0 and '"commit": null' in r.stdout


def test_user_staged_changes_survive_a_refused_commit(tmp_path: Path) -> None:
    root = repo_workspace(tmp_path / "r")
    evergreen = root / "memory" / "MEMORY.md"
    evergreen.write_text(evergreen.read_text() + "- staged by hand\n")
    git(root, "add", "memory/MEMORY.md")
    evergreen.write_text(evergreen.read_text() + "- not staged yet\n")
    staged = git(root, "diff", "--cached")
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexit 1\n")
    hook.chmod(0o755)
    r = memcli(root, "add", "--evergreen", "--commit", "the pager rotation is weekly")
    assert r.returncode == 3 and "not committed" in r.stderr, r.stderr
    assert git(root, "diff", "--cached") == staged  # the user's staging, exactly as it was


def test_no_identity_says_what_is_on_disk(tmp_path: Path) -> None:
    root = repo_workspace(tmp_path / "r")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_AUTHOR", "GIT_COMMITTER"))}
    env["HOME"] = str(tmp_path / "nohome")
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["EMAIL"] = ""
    git(root, "config", "user.useConfigOnly", "true")
    r = memcli(root, "add", "--commit", "identity is missing here", env=env)
    assert r.returncode == 3, r.stderr
    assert "saved in memory/" in r.stderr and "not committed" in r.stderr, r.stderr
    assert "git config user.name" in r.stderr  # the hint says how to fix it
    assert _status(root).startswith("??")
    r = memcli(root, "add", "--json", "--commit", "identity is missing here")
    assert r.returncode == 0 and '"commit": null' not in r.stdout, r.stdout
    assert _status(root) == ""


def test_mid_merge_and_mid_rebase_are_refused_before_writing(tmp_path: Path) -> None:
    root = repo_workspace(tmp_path / "r")
    (root / "a.txt").write_text("base\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-q", "-m", "base")
    git(root, "checkout", "-q", "-b", "other")
    (root / "a.txt").write_text("other\n")
    git(root, "commit", "-q", "-am", "other")
    git(root, "checkout", "-q", "main")
    (root / "a.txt").write_text("main\n")
    git(root, "commit", "-q", "-am", "main")
    git(root, "merge", "-q", "other", check=False)  # a conflict: the merge stays under way
    assert (root / ".git" / "MERGE_HEAD").exists()
    r = memcli(root, "add", "--commit", "a fact during the merge")
    assert r.returncode == 3, r.stderr
    assert "merge is in progress" in r.stderr and "nothing was written" in r.stderr, r.stderr
    assert not list((root / "memory").glob("2*.md"))
    git(root, "merge", "--abort")

    git(root, "checkout", "-q", "other")
    git(root, "rebase", "main", check=False)  # the same conflict, now mid-rebase
    r = memcli(root, "add", "--commit", "a fact during the rebase")
    assert r.returncode == 3 and "rebase is in progress" in r.stderr, r.stderr
    assert not list((root / "memory").glob("2*.md"))


def test_detached_head_commits_with_a_warning(tmp_path: Path) -> None:
    root = repo_workspace(tmp_path / "r")
    git(root, "checkout", "-q", "--detach")
    r = memcli(root, "add", "--commit", "a fact on a detached head")
    assert r.returncode == 0, r.stderr
    assert "HEAD is detached" in r.stderr, r.stderr
    assert "detached head" in git(root, "log", "-1", "--format=%s")
    r = memcli(root, "add", "a fact without commit on a detached head")
    assert "detached" not in r.stderr  # only a commit is on no branch
