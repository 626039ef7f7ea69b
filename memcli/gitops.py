"""Git history of the memory: repository discovery, commits, diffs of facts, log, sync.

GitPython is imported inside the functions that need it (it takes a while to
import), so ``memcli --help`` and keyword search never pay for it. The cheap
helpers (:func:`find_git_root`, :func:`quick_status`) do not import it at all.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from memcli.errors import GitError

NOT_A_REPO_HINT = "run 'git init' there (or 'memcli init --git'), or use -w to pick a workspace"
IDENTITY_HINT = "set your identity: git config user.name 'Name'; git config user.email 'you@host'"


# -- discovery -----------------------------------------------------------------
def find_git_root(path: Path) -> Path | None:
    """The nearest folder at or above ``path`` holding ``.git`` (no subprocess, no import)."""
    start = Path(path).resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _git_module() -> Any:
    try:
        import git
    except ImportError as exc:  # GitPython missing, or no git executable found
        raise GitError(f"git is not available: {exc}", hint="install git and GitPython") from None
    return git


def open_repo(root: Path) -> Any:
    """The ``git.Repo`` holding ``root`` (the workspace may be a subfolder of it)."""
    git = _git_module()
    root = Path(root)
    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise GitError(f"{root} is not in a git repository", hint=NOT_A_REPO_HINT) from None
    if repo.bare or not repo.working_tree_dir:
        raise GitError(f"{root} is in a bare git repository (no work tree)", hint=NOT_A_REPO_HINT)
    return repo


def repo_top(repo: Any) -> Path:
    return Path(repo.working_tree_dir).resolve()


def run_git(repo: Any, *args: str, check: bool = True) -> tuple[int, str, str]:
    """Run ``git args`` in the work tree; (status, stdout, stderr). Raises GitError if check."""
    git = _git_module()
    try:
        status, out, err = repo.git.execute(
            ["git", *args],
            with_extended_output=True,
            with_exceptions=False,
            strip_newline_in_stdout=False,
        )
    except git.GitCommandNotFound as exc:  # pragma: no cover - git vanished
        raise GitError(f"git is not available: {exc}") from None
    if check and status != 0:
        raise GitError(f"git {args[0]} failed: {last_line(err or out)}", hint=_hint_for(err))
    return status, out, err


def last_line(text: str) -> str:
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    # "hint:" lines are advice; the error itself is the last non-hint line
    errors = [ln for ln in lines if not ln.startswith("hint:")]
    return (errors or lines or ["(no message)"])[-1]


def _hint_for(err: str) -> str | None:
    low = (err or "").lower()
    if "tell me who you are" in low or "identity unknown" in low:
        return IDENTITY_HINT
    if "could not read from remote" in low or "unable to access" in low:
        return "check the remote URL and your network or credentials"
    return None


def operation_in_progress(repo: Any) -> str | None:
    """'merge', 'rebase', 'cherry-pick' or 'revert' when one is under way, else None."""
    gitdir = Path(repo.git_dir)
    checks = [
        ("rebase", gitdir / "rebase-merge"),
        ("rebase", gitdir / "rebase-apply"),
        ("merge", gitdir / "MERGE_HEAD"),
        ("cherry-pick", gitdir / "CHERRY_PICK_HEAD"),
        ("revert", gitdir / "REVERT_HEAD"),
    ]
    for name, marker in checks:
        if marker.exists():
            return name
    return None


def _rel_to_top(top: Path, root: Path, path: Path | str) -> str:
    p = Path(path)
    if not p.is_absolute():
        p = root / p
    resolved = Path(os.path.abspath(p))
    real = resolved.parent.resolve() / resolved.name  # resolve folders, keep a symlinked file
    for candidate in (resolved, real):
        try:
            return candidate.relative_to(top).as_posix()
        except ValueError:
            continue
    raise GitError(f"{path} is not inside the git repository {top}")


def has_head(repo: Any) -> bool:
    status, _, _ = run_git(repo, "rev-parse", "--verify", "--quiet", "HEAD", check=False)
    return status == 0


# -- committing ------------------------------------------------------------------
def commit_paths(root: Path, paths: list[Path], message: str) -> str:
    """Commit exactly ``paths`` (new, changed or deleted files) and return the new sha.

    Anything else that is staged stays staged and out of the commit. Returns an
    empty string when those paths hold no change to commit. Raises
    :class:`GitError` when ``root`` is not in a git repository or git refuses.
    """
    repo = open_repo(root)
    top = repo_top(repo)
    rels = sorted({_rel_to_top(top, Path(root).resolve(), p) for p in paths})
    if not rels:
        return ""
    busy = operation_in_progress(repo)
    if busy:
        raise GitError(
            f"cannot commit: a {busy} is in progress in {top}",
            hint="finish it (git status explains how), then commit the memory files",
        )
    _, tracked, _ = run_git(repo, "ls-files", "-z", "--", *rels)
    known = set(tracked.split("\0")) | {r for r in rels if (top / r).exists()}
    rels = [r for r in rels if r in known]
    if not rels:
        return ""
    run_git(repo, "add", "--all", "--", *rels)
    if has_head(repo):
        status, _, _ = run_git(repo, "diff-index", "--cached", "--quiet", "HEAD", "--", *rels,
                               check=False)
        if status == 0:
            return ""
    else:
        _, listed, _ = run_git(repo, "ls-files", "--", *rels)
        if not listed.strip():
            return ""
    run_git(repo, "commit", "--quiet", "-m", message, "--only", "--", *rels)
    _, sha, _ = run_git(repo, "rev-parse", "HEAD")
    return sha.strip()


# -- cheap state for `memcli status` ------------------------------------------------
def quick_status(root: Path, memory_dir: str = "memory") -> dict[str, Any] | None:
    """``{branch, dirty_memory_files, ahead, behind}`` from one ``git status``; None if no repo.

    Uses the git executable directly (no GitPython import) so ``status`` stays fast.
    Paths are workspace-relative; ``ahead``/``behind`` are None without an upstream.
    """
    root = Path(root).resolve()
    top = find_git_root(root)
    if top is None:
        return None
    cmd = [
        "git", "--no-optional-locks", "-c", "core.quotePath=false",
        "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all",
        "--", memory_dir,
    ]
    env = {k: v for k, v in os.environ.items() if k not in _GIT_LOCAL_ENV}
    try:
        proc = subprocess.run(cmd, cwd=root, capture_output=True, timeout=20, env=env)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    return _parse_status_v2(proc.stdout.decode("utf-8", "replace"), _prefix(top, root))


#: Variables git sets for hooks; a memcli started from a hook must not inherit them.
_GIT_LOCAL_ENV = frozenset(
    {"GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_PREFIX", "GIT_OBJECT_DIRECTORY",
     "GIT_COMMON_DIR"}
)


def _prefix(top: Path, root: Path) -> str:
    rel = root.relative_to(top.resolve()).as_posix() if root != top.resolve() else ""
    return "" if rel in ("", ".") else rel + "/"


def _parse_status_v2(out: str, prefix: str) -> dict[str, Any]:
    branch: str | None = None
    ahead: int | None = None
    behind: int | None = None
    dirty: set[str] = set()
    fields = out.split("\0")
    i = 0
    while i < len(fields):
        rec = fields[i]
        i += 1
        if not rec:
            continue
        if rec.startswith("# branch.head "):
            head = rec[len("# branch.head "):]
            branch = None if head == "(detached)" else head
        elif rec.startswith("# branch.ab "):
            a, b = rec[len("# branch.ab "):].split()
            ahead, behind = int(a), -int(b)
        elif rec[0] in "1u?":
            parts = rec.split(" ", {"1": 8, "u": 10, "?": 1}[rec[0]])
            dirty.add(parts[-1])
        elif rec[0] == "2":
            dirty.add(rec.split(" ", 9)[-1])
            i += 1  # the original path of a rename follows in its own field
    rels = sorted(p[len(prefix):] if p.startswith(prefix) else p for p in dirty)
    return {"branch": branch, "dirty_memory_files": rels, "ahead": ahead, "behind": behind}
