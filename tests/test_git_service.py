"""The git service (Memory's diff, log, sync, hooks and commits) and the git layer under it.

Real repositories in tmp_path, the git executable, the real Memory object: what an MCP server
or an agent hook would call instead of the CLI.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from memcli.errors import ExitCode, GitError
from memcli.git.commit import commit_paths
from memcli.git.repo import open_repo
from memcli.memory import Memory
from memcli.notes.workspace import find_git_root, init_workspace
from memcli.service.datatypes import DiffOptions, LogOptions, SyncOptions
from tests.conftest import Cli
from tests.test_git import append, committed_files, git, head, make_repo, repo_workspace, write

DAY = "memory/2026-11-22.md"
MEMCLI = Path(__file__).resolve().parents[1] / "memcli"


def test_add_with_commit_names_the_fact_and_commits_only_that_file(tmp_path: Path) -> None:
    root = repo_workspace(tmp_path / "ws")
    write(root / "unrelated.txt", "staged, stays out\n")
    git(root, "add", "unrelated.txt")
    with Memory.open(root) as mem:
        assert mem.require_repo() == root.resolve()
        result = mem.add("Deploys need a change ticket.", to="notes.md", commit=True)
        sha = result.commit
        again = mem.add("Deploys need a change ticket.", to="notes.md", commit=True)
        assert again.added is False  # a duplicate: no write, no commit
        assert again.commit is None and again.as_dict()["commit"] is None
    assert sha == head(root) and result.as_dict()["commit"] == sha
    assert git(root, "log", "-1", "--format=%s").strip() == "memory: Deploys need a change ticket."
    assert committed_files(root) == ["memory/notes.md"]
    assert git(root, "diff", "--cached", "--name-only").strip() == "unrelated.txt"


def test_commit_returns_none_when_the_paths_hold_no_change(tmp_path: Path) -> None:
    root = repo_workspace(tmp_path / "ws")
    with Memory.open(root) as mem:
        assert mem.commit([root / "memory" / "MEMORY.md"], "nothing") is None


def test_require_repo_outside_git_is_a_workspace_error(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    init_workspace(plain)
    with Memory.open(plain) as mem, pytest.raises(GitError) as caught:
        mem.require_repo()
    assert "is not in a git repository" in caught.value.message
    assert caught.value.exit_code == ExitCode.WORKSPACE
    assert not (plain / "memory" / "2026-11-22.md").exists()


def test_diff_and_log_match_the_cli_json(tmp_path: Path) -> None:
    root = repo_workspace(tmp_path / "ws")
    write(root / DAY, "# 2026-11-22\n\n- 09:00 [decision] Use Valkey. #cache\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "valkey")
    append(root / DAY, "- 10:00 Backups run nightly.\n")
    with Memory.open(root) as mem:
        worktree = mem.diff()
        last = mem.diff(DiffOptions(rev_range="HEAD~1..HEAD"))
        commits = mem.log(LogOptions(limit=1))
    assert worktree.as_dict() == Cli(root)("diff", "--json").json()
    assert [f.text for f in worktree.files[0].added] == ["Backups run nightly."]
    assert [(f.kind, f.text) for f in last.files[0].added] == [
        ("line", "# 2026-11-22"),
        ("fact", "Use Valkey."),
    ]
    assert last.as_dict() == Cli(root)("diff", "--json", "HEAD~1..HEAD").json()
    assert [c.as_dict() for c in commits] == Cli(root)("log", "--json", "-n", "1").json()["commits"]
    assert commits[0].subject == "valkey" and commits[0].added == 1


@pytest.mark.slow
def test_sync_commits_pulls_and_reindexes(tmp_path: Path) -> None:
    remote = make_repo(tmp_path / "remote.git", bare=True)
    a = repo_workspace(tmp_path / "a")
    git(a, "remote", "add", "origin", str(remote))
    git(a, "push", "-q", "-u", "origin", "main")
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(remote), str(b))
    with Memory.open(b) as mem:
        mem.index()
    write(a / DAY, "# 2026-11-22\n\n- 08:00 Alpha learned on machine A.\n")
    with Memory.open(a) as mem:
        pushed = mem.sync(SyncOptions(strategy="merge"))
    assert pushed.sync.committed and pushed.sync.pushed == 1
    assert git(a, "log", "-1", "--format=%s").strip() == "memory: Alpha learned on machine A."

    with Memory.open(b) as mem:
        pulled = mem.sync(SyncOptions(push=False))
        assert pulled.sync.strategy == "rebase"  # the setting's default
        assert pulled.sync.pulled == 1 and pulled.sync.changed == [DAY]
        assert pulled.index.added == 1  # re-indexed by the service, not by the caller
        payload = pulled.as_dict()
        assert payload["index"] == pulled.index.as_dict()
        assert {k: payload[k] for k in pulled.sync.as_dict()} == pulled.sync.as_dict()
        indexed = [f["path"] for f in mem.files()]
    assert DAY in indexed


def test_hooks_through_the_service(tmp_path: Path) -> None:
    root = repo_workspace(tmp_path / "ws")
    with Memory.open(root) as mem:
        installed = mem.hooks_install()
        assert {h.state for h in mem.hooks_status().hooks} == {"installed"}
        removed = mem.hooks_uninstall()
    assert all(h.action == "installed" for h in installed.hooks)
    assert {h.state for h in removed.hooks} == {"missing"}
    assert installed.as_dict()["hooks_dir"] == str(root.resolve() / ".git" / "hooks")


def test_git_runs_in_the_workspace_repo_even_with_hook_variables_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A memcli started from another repository's hook inherits GIT_DIR; it must not follow it."""
    other = make_repo(tmp_path / "other")
    root = repo_workspace(tmp_path / "ws")
    write(root / DAY, "- 08:00 a fact\n")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    sha = commit_paths(root, [root / DAY], "memory: a fact")
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert sha == head(root)
    assert git(other, "rev-parse", "--verify", "--quiet", "HEAD", check=False) == ""


def test_git_is_passed_no_variable_that_points_it_elsewhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memcli.git.repo import git_env

    elsewhere = (
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_COMMON_DIR",
        "GIT_NAMESPACE",
        "GIT_CONFIG",
    )
    for var in elsewhere:
        monkeypatch.setenv(var, "/elsewhere")
    env = git_env()
    assert [var for var in elsewhere if var in env] == []
    assert env["GIT_AUTHOR_NAME"] == "memcli tests"  # the rest is passed on


def test_open_repo_refuses_bare_and_missing(tmp_path: Path) -> None:
    bare = make_repo(tmp_path / "bare.git", bare=True)
    with pytest.raises(GitError, match="is not in a git repository"):  # no .git: never taken
        open_repo(bare)
    with pytest.raises(GitError, match="is not in a git repository"):
        open_repo(tmp_path / "nowhere")
    repo = open_repo(repo_workspace(tmp_path / "ws") / "memory")  # a subfolder finds the top
    assert repo.top == (tmp_path / "ws").resolve()
    assert repo.git_dir == (tmp_path / "ws" / ".git").resolve()


def test_find_git_root_sees_a_git_file(tmp_path: Path) -> None:
    """A linked worktree or submodule has a ``.git`` file, not a folder."""
    main = repo_workspace(tmp_path / "main")
    git(main, "worktree", "add", "-q", str(tmp_path / "linked"))
    assert (tmp_path / "linked" / ".git").is_file()
    assert find_git_root(tmp_path / "linked" / "memory") == (tmp_path / "linked").resolve()
    assert open_repo(tmp_path / "linked").top == (tmp_path / "linked").resolve()
    assert find_git_root(tmp_path) is None


@pytest.mark.slow
def test_the_git_layer_never_imports_gitpython() -> None:
    code = (
        "import sys, memcli.memory, memcli.git.hooks, memcli.git.sync, memcli.git.log;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'git'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_notes_room_does_not_reach_into_git() -> None:
    """Dependencies point git -> notes, never notes -> git."""
    for path in sorted((MEMCLI / "notes").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            assert not any(n.startswith("memcli.git") for n in names), (path.name, names)
