"""Git hooks: they fire on real git commands, re-index, chain, never fail git, uninstall cleanly."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memcli.errors import GitError
from memcli.git import hooks
from tests.conftest import Cli
from tests.test_git import append, git, repo_workspace, write

FOREGROUND = {"MEMCLI_HOOK_FOREGROUND": "1"}


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra}


def status(root: Path) -> dict:
    """``memcli status --json`` in a real subprocess (what a user would run)."""
    proc = subprocess.run(
        [sys.executable, "-m", "memcli", "-w", str(root), "status", "--json"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def git_with_hooks(
    repo: Path, *args: str, environ: dict[str, str] | None = None, exe: str = "git"
) -> subprocess.CompletedProcess[str]:
    """A git command whose hooks run (in the foreground by default); the caller checks it."""
    return subprocess.run(
        [exe, *args],
        cwd=repo,
        env=environ or env(**FOREGROUND),
        capture_output=True,
        text=True,
    )


def log_text(root: Path) -> str:
    path = root / ".memcli" / hooks.LOG_NAME
    return path.read_text() if path.exists() else ""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = repo_workspace(tmp_path / "r")
    assert Cli(root)("index").exit_code == 0
    return root


@pytest.mark.slow
def test_install_status_and_commit_reindexes(repo: Path) -> None:
    cli = Cli(repo)
    r = cli("hooks", "install", "--json")
    assert r.exit_code == 0, r.stderr
    report = r.json()
    assert Path(report["hooks_dir"]) == repo / ".git" / "hooks"
    for name in hooks.HOOK_NAMES:
        path = repo / ".git" / "hooks" / name
        assert path.stat().st_mode & stat.S_IXUSR
    st = cli("hooks", "status", "--json").json()
    assert [(h["name"], h["state"], h["python_exists"]) for h in st["hooks"]] == [
        (n, "installed", True) for n in hooks.HOOK_NAMES
    ]

    write(repo / "memory" / "2026-11-22.md", "- 10:00 [decision] Hooks keep the index fresh.\n")
    assert status(repo)["dirty"] == ["memory/2026-11-22.md"]
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a fact", env=env(**FOREGROUND))
    after = status(repo)
    assert after["dirty"] == [], log_text(repo)
    assert after["git"]["dirty_memory_files"] == []
    assert log_text(repo) == ""
    hit = cli("search", "--json", "hooks fresh").json()["results"]
    assert hit and hit[0]["path"] == "memory/2026-11-22.md"


@pytest.mark.slow
def test_merge_checkout_and_rewrite_reindex(repo: Path) -> None:
    hooks.install(repo)
    git(repo, "switch", "-q", "-c", "side", env=env(**FOREGROUND))
    write(repo / "memory" / "side.md", "- a fact learned on a branch\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "side", env=env(**FOREGROUND))
    # checkout back: post-checkout removes side.md from the index
    git(repo, "switch", "-q", "main", env=env(**FOREGROUND))
    assert status(repo)["dirty"] == [], log_text(repo)
    assert status(repo)["files"] == 1
    # merge: post-merge indexes the file the merge brought in
    git(repo, "merge", "-q", "--no-ff", "--no-edit", "side", env=env(**FOREGROUND))
    st = status(repo)
    assert st["dirty"] == [] and st["files"] == 2, log_text(repo)
    # rewrite: amend changes the file; post-rewrite (and post-commit) re-index it
    append(repo / "memory" / "side.md", "- amended fact\n")
    git(repo, "commit", "-q", "-a", "--amend", "--no-edit", env=env(**FOREGROUND))
    assert status(repo)["dirty"] == [], log_text(repo)
    assert log_text(repo) == ""


@pytest.mark.slow
def test_background_hook_does_not_block_and_catches_up(repo: Path) -> None:
    hooks.install(repo)
    write(repo / "memory" / "bg.md", "- indexed in the background\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "bg")  # returns without waiting for the index
    deadline = time.monotonic() + 60
    while status(repo)["dirty"] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert status(repo)["dirty"] == [], log_text(repo)


def test_missing_memcli_never_fails_git(repo: Path, tmp_path: Path) -> None:
    hooks.install(repo, python=str(tmp_path / "no" / "python"))
    write(repo / "memory" / "x.md", "- fact\n")
    git(repo, "add", "-A")
    path = os.pathsep.join([str(Path(shutil.which("git") or "git").parent), "/bin", "/usr/bin"])
    assert shutil.which("memcli", path=path) is None
    no_memcli = env(PATH=path, **FOREGROUND)
    proc = git_with_hooks(repo, "commit", "-q", "-m", "x", environ=no_memcli)
    assert proc.returncode == 0, proc.stderr
    assert "no memcli" in log_text(repo)
    # a checkout's exit status is the hook's: it must stay 0
    proc = git_with_hooks(repo, "switch", "-q", "-c", "other", environ=no_memcli)
    assert proc.returncode == 0, proc.stderr


def test_hook_without_memcli_on_path_and_no_coreutils(repo: Path, tmp_path: Path) -> None:
    """PATH holding only git: the hook cannot even find mkdir or wc; git still succeeds."""
    hooks.install(repo, python=str(tmp_path / "gone"))
    only_git = tmp_path / "only-git"
    only_git.mkdir()
    git_exe = subprocess.run(
        ["sh", "-c", "command -v git"], capture_output=True, text=True
    ).stdout.strip()
    os.symlink(git_exe, only_git / "git")
    write(repo / "memory" / "y.md", "- fact\n")
    git(repo, "add", "-A")
    for args in (["commit", "-q", "-m", "y"], ["checkout", "-q", "-b", "z"]):
        proc = git_with_hooks(
            repo, *args, environ=env(PATH=str(only_git)), exe=str(only_git / "git")
        )
        assert proc.returncode == 0, proc.stderr


def test_failing_memcli_is_logged_and_git_succeeds(repo: Path, tmp_path: Path) -> None:
    broken = write(tmp_path / "broken-python", "#!/bin/sh\necho 'boom: cannot start' >&2\nexit 7\n")
    broken.chmod(0o755)
    hooks.install(repo, python=str(broken))
    write(repo / "memory" / "z.md", "- fact\n")
    git(repo, "add", "-A")
    proc = git_with_hooks(repo, "commit", "-q", "-m", "z")
    assert proc.returncode == 0, proc.stderr
    log = log_text(repo)
    assert "boom: cannot start" in log
    assert "exited with status 7" in log
    proc = git_with_hooks(repo, "checkout", "-q", "-b", "w")
    assert proc.returncode == 0


@pytest.mark.slow
def test_broken_index_folder_is_logged_not_fatal(repo: Path) -> None:
    hooks.install(repo)
    # an index memcli must not touch: one written by a newer memcli (a damaged one, or a
    # folder named index.db, would simply be rebuilt)
    conn = sqlite3.connect(repo / ".memcli" / "index.db")
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    write(repo / "memory" / "q.md", "- fact\n")
    git(repo, "add", "-A")
    proc = git_with_hooks(repo, "commit", "-q", "-m", "q")
    assert proc.returncode == 0, proc.stderr
    assert "exited with status" in log_text(repo)


@pytest.mark.slow
def test_chains_existing_hook_and_uninstall_restores_it(repo: Path) -> None:
    hook = repo / ".git" / "hooks" / "post-commit"
    marker = repo.parent / "original-ran.txt"
    original = f'#!/bin/sh\n# team hook\necho "original $*" >> "{marker}"\nexit 0\n'.encode()
    hook.write_bytes(original)
    hook.chmod(0o750)
    rewrite_hook = repo / ".git" / "hooks" / "post-rewrite"
    rewrite_marker = repo.parent / "rewrite-stdin.txt"
    rewrite_hook.write_text(f'#!/bin/sh\ncat > "{rewrite_marker}"\n')
    rewrite_hook.chmod(0o755)

    report = hooks.install(repo)
    states = {h.name: (h.state, h.chained) for h in report.hooks}
    assert states["post-commit"] == ("installed", True)
    assert states["post-merge"] == ("installed", False)
    assert (hook.parent / ("post-commit" + hooks.CHAINED_SUFFIX)).read_bytes() == original

    write(repo / "memory" / "c.md", "- chained\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "c", env=env(**FOREGROUND))
    assert marker.read_text() == "original \n"  # the original ran
    assert status(repo)["dirty"] == []  # and memcli ran
    git(repo, "commit", "-q", "--amend", "-m", "c2", env=env(**FOREGROUND))
    old_sha, new_sha = rewrite_marker.read_text().split()[:2]  # post-rewrite's stdin reached it
    assert len(old_sha) == len(new_sha) == 40 and old_sha != new_sha
    assert marker.read_text().count("original") == 2

    # installing twice changes nothing and does not chain itself
    again = hooks.install(repo)
    assert {h.action for h in again.hooks} == {"already installed"}

    gone = hooks.uninstall(repo)
    assert {h.name: h.state for h in gone.hooks} == {
        "post-commit": "foreign",
        "post-merge": "missing",
        "post-checkout": "missing",
        "post-rewrite": "foreign",
    }
    assert hook.read_bytes() == original
    assert stat.S_IMODE(hook.stat().st_mode) == 0o750
    assert not (hook.parent / ("post-commit" + hooks.CHAINED_SUFFIX)).exists()
    assert not (hook.parent / "post-merge").exists()
    assert rewrite_hook.read_text().startswith("#!/bin/sh\ncat")


def test_hand_edited_hook_is_left_alone(repo: Path) -> None:
    hooks.install(repo)
    hook = repo / ".git" / "hooks" / "post-merge"
    append(hook, "echo my addition\n")
    edited = hook.read_bytes()
    r = Cli(repo)("hooks", "uninstall", "--json")
    assert r.exit_code == 0
    assert "edited by hand" in r.stderr
    assert hook.read_bytes() == edited
    assert {h["name"]: h["state"] for h in r.json()["hooks"]}["post-merge"] == "modified"
    assert not (repo / ".git" / "hooks" / "post-commit").exists()


def test_cannot_chain_when_the_chained_name_is_taken(repo: Path) -> None:
    hooks_dir = repo / ".git" / "hooks"
    write(hooks_dir / "post-commit", "#!/bin/sh\necho mine\n")
    write(hooks_dir / ("post-commit" + hooks.CHAINED_SUFFIX), "#!/bin/sh\necho old\n")
    with pytest.raises(GitError, match="already exists"):
        hooks.install(repo)
    assert (hooks_dir / "post-commit").read_text() == "#!/bin/sh\necho mine\n"


@pytest.mark.slow
def test_respects_core_hooks_path_and_subfolder_workspace(tmp_path: Path) -> None:
    top = tmp_path / "mono"
    top.mkdir()
    git(top, "init", "-q", "-b", "main")
    git(top, "config", "core.hooksPath", ".githooks")
    ws = top / "team" / "mem"
    r = Cli(ws)("init", "--hooks", "--json")
    assert r.exit_code == 0, r.stderr
    assert {Path(h["path"]).parent for h in r.json()["hooks"]} == {top / ".githooks"}
    assert not (top / ".git" / "hooks" / "post-commit").exists()
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", "init", env=env(**FOREGROUND))
    write(ws / "memory" / "2026-11-22.md", "- indexed through core.hooksPath\n")
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", "fact", env=env(**FOREGROUND))
    st = status(ws)
    assert st["dirty"] == [] and st["files"] == 2, log_text(ws)
    status_json = Cli(ws)("hooks", "status", "--json").json()
    assert status_json["workspace"] == "team/mem"
    assert {h["workspaces"][0] for h in status_json["hooks"]} == {"team/mem"}


@pytest.mark.slow
def test_two_workspaces_share_one_hook(tmp_path: Path) -> None:
    top = tmp_path / "mono"
    top.mkdir()
    git(top, "init", "-q", "-b", "main")
    a, b = top / "a", top / "b"
    for ws in (a, b):
        assert Cli(ws)("init", "--hooks").exit_code == 0
    text = (top / ".git" / "hooks" / "post-commit").read_text()
    assert "memcli_reindex a" in text and "memcli_reindex b" in text
    write(a / "memory" / "x.md", "- in a\n")
    write(b / "memory" / "y.md", "- in b\n")
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", "both", env=env(**FOREGROUND))
    assert status(a)["dirty"] == [] and status(b)["dirty"] == []
    hooks.uninstall(a)
    text = (top / ".git" / "hooks" / "post-commit").read_text()
    assert "memcli_reindex a" not in text and "memcli_reindex b" in text
    assert hooks.status(b).hooks[0].state == "installed"
    hooks.uninstall(b)
    assert not (top / ".git" / "hooks" / "post-commit").exists()


def test_falls_back_to_memcli_on_path(repo: Path, tmp_path: Path) -> None:
    """When the recorded interpreter is gone, the hook runs 'memcli' from PATH."""
    hooks.install(repo, python=str(tmp_path / "uninstalled" / "python"))
    bin_dir = tmp_path / "bin"
    seen = tmp_path / "memcli-args.txt"
    fake = write(bin_dir / "memcli", f'#!/bin/sh\necho "$@" > "{seen}"\n')
    fake.chmod(0o755)
    write(repo / "memory" / "p.md", "- fact\n")
    git(repo, "add", "-A")
    path = os.pathsep.join([str(bin_dir), os.environ["PATH"]])
    git(repo, "commit", "-q", "-m", "p", env=env(PATH=path, **FOREGROUND))
    assert seen.read_text().split() == ["--quiet", "-w", str(repo), "index"]
    assert log_text(repo) == ""
