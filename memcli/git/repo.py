"""The git room's one layer: a repository holding a workspace, and running ``git`` in it.

Every git operation in memcli runs the ``git`` executable through :func:`run_git` (or, for
the two that stream bytes, :func:`git_process`): no GitPython. memcli only ever shells out
to git, so a library wrapping those calls added nothing but its import time (a tenth of a
second on every git command) and a second way to fail; ``status`` already had to bypass it
to stay fast. Failures become :class:`~memcli.errors.GitError` with git's last line as the
one-line message and a hint where one helps.

A workspace may come from someone else's repository, so git never looks for the repository
itself: memcli finds it (the nearest ``.git`` above the workspace, :func:`locate_repo`),
checks it (a ``.git`` file naming a folder of a work tree, or another user's repository that
git does not trust, is refused) and names it on every call (``--git-dir``, ``--work-tree``),
with ``safe.bareRepository=explicit`` and ``core.fsmonitor=false``, in an environment without
the variables that point git elsewhere. A committed folder shaped like a git folder, with a
``config`` that sets ``core.fsmonitor``, ``core.hooksPath``, ``core.sshCommand`` or
``gpg.program``, is then never used: only the config files git reads for the user's own
repository (system, global, its ``.git/config``) apply, and the hooks they name.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from memcli.errors import GitError
from memcli.notes.gitindex import git_dir_of
from memcli.notes.workspace import find_git_root

NOT_A_REPO_HINT = (
    "run 'git init' there (or 'memcli init --git'), or pick a workspace ('memcli -w DIR')"
)
IDENTITY_HINT = "set your identity: git config user.name 'Name'; git config user.email 'you@host'"

#: Variables that point git at another repository, index, object store or config file (git
#: sets some for hooks): memcli names the repository itself, so none is passed on.
GIT_LOCAL_ENV = frozenset(
    {
        "GIT_DIR",
        "GIT_INDEX_FILE",
        "GIT_WORK_TREE",
        "GIT_PREFIX",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_COMMON_DIR",
        "GIT_NAMESPACE",
        "GIT_QUARANTINE_PATH",
        "GIT_CONFIG",
    }
)


@dataclass(frozen=True)
class Repo:
    """A non-bare repository: its work tree's top and its (absolute) git folder."""

    top: Path
    git_dir: Path


def git_env() -> dict[str, str]:
    """The environment for git: no hook variables, messages in English (they are parsed)."""
    env = {k: v for k, v in os.environ.items() if k not in GIT_LOCAL_ENV}
    env["LANGUAGE"] = "C"
    env["LC_ALL"] = "C"
    return env


#: Set on every git call memcli makes: no repository is taken that git would find by itself
#: (a committed folder shaped like a git folder), and no fsmonitor command runs.
SAFE_CONFIG = ("-c", "safe.bareRepository=explicit", "-c", "core.fsmonitor=false")


def repo_args(repo: Repo) -> list[str]:
    """The options that pin a git call to ``repo``: its git folder and work tree, named."""
    return [f"--git-dir={repo.git_dir}", f"--work-tree={repo.top}", *SAFE_CONFIG]


def git_process(
    repo: Repo | None,
    args: list[str],
    *,
    cwd: Path | None = None,
    input: bytes | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git args`` on ``repo`` (None: ``git init`` and the like, in ``cwd``) and capture
    its bytes; runs in ``cwd`` (default: the work tree's top). GitError when git cannot
    start."""
    where = cwd if cwd is not None else repo.top if repo is not None else Path.cwd()
    pinned = repo_args(repo) if repo is not None else list(SAFE_CONFIG)
    try:
        return subprocess.run(
            ["git", *pinned, *args],  # noqa: S607 - the git on PATH, as the user runs it
            cwd=where,
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True,
            env=git_env(),
            timeout=timeout,
        )
    except OSError as exc:  # no git executable, or cwd vanished
        raise GitError(f"git is not available: {exc}", hint="install git") from None


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def run_git(repo: Repo, *args: str, check: bool = True) -> tuple[int, str, str]:
    """Run ``git args`` in the work tree; (status, stdout, stderr). Raises GitError if check."""
    proc = git_process(repo, list(args))
    status, out, err = proc.returncode, _text(proc.stdout), _text(proc.stderr).rstrip("\n")
    if check and status != 0:
        raise GitError(f"git {args[0]} failed: {last_line(err or out)}", hint=hint_for(err))
    return status, out, err


def last_line(text: str) -> str:
    """The line of git's output that states the error."""
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    # "hint:" lines are advice; the error itself is the last non-hint line
    errors = [ln for ln in lines if not ln.startswith("hint:")]
    return (errors or lines or ["(no message)"])[-1]


def hint_for(err: str) -> str | None:
    """Advice for the git failures a user can fix (identity, remote access)."""
    low = (err or "").lower()
    if "tell me who you are" in low or "identity unknown" in low:
        return IDENTITY_HINT
    if "could not read from remote" in low or "unable to access" in low:
        return "check the remote URL and your network or credentials"
    return None


# -- discovery -----------------------------------------------------------------
def require_repo(root: Path) -> Path:
    """The top of the repository holding ``root``; GitError when there is none, or memcli
    refuses it (:func:`locate_repo`: cheap, no subprocess for a repository of the user's)."""
    repo, refused = locate_repo(root)
    if refused is not None:
        raise refused
    if repo is None:
        raise GitError(f"{Path(root).resolve()} is not in a git repository", hint=NOT_A_REPO_HINT)
    return repo.top


def find_repo(root: Path) -> Repo | None:
    """The repository holding ``root`` as memcli finds and checks it (:func:`locate_repo`);
    None when there is none memcli would use."""
    return locate_repo(root)[0]


def locate_repo(root: Path) -> tuple[Repo | None, GitError | None]:
    """The repository holding ``root``, found without running git: the nearest folder at or
    above it with a ``.git`` (a folder, or a file naming the git folder). Never a folder
    that only looks like a git folder (``HEAD``, ``objects/``, ``refs/`` and a ``config`` a
    clone committed), which git's own discovery would take. Then checked: a ``.git`` file
    must not name a folder of a work tree (content a repository ships), and a repository of
    another user must be one git itself accepts (``safe.directory``), since a git folder
    named on the command line skips git's own check. (None, the error saying why) when
    refused, (None, None) outside git."""
    top = find_git_root(root)
    if top is None:
        return None, None
    git_dir = git_dir_of(top)
    if git_dir is None:
        return None, None
    top, git_dir = top.resolve(), git_dir.resolve()
    if (top / ".git").is_file() and _in_work_tree(git_dir):
        return None, GitError(
            f"{top / '.git'} names {git_dir}, a folder in a work tree, not a git folder:"
            " memcli runs git only on a repository's own git folder",
            hint=f"remove {top / '.git'} if you did not make it",
        )
    if not _owned(top, git_dir):
        why = _refused_by_git(top, git_dir)
        if why is not None:
            return None, why
    return Repo(top, git_dir), None


def _in_work_tree(git_dir: Path) -> bool:
    """Whether ``git_dir`` lies in the work tree of a repository (outside its ``.git``):
    where a clone's files are, so where a committed folder shaped like a git folder is.
    A submodule's or a linked worktree's git folder is inside a ``.git`` folder."""
    enclosing = find_git_root(git_dir.parent)
    if enclosing is None:
        return False
    return git_dir.relative_to(enclosing).parts[:1] != (".git",)


def _owned(top: Path, git_dir: Path) -> bool:
    """Whether the work tree, its ``.git`` and the git folder are all the user's (the check
    git makes of a repository it discovers). No subprocess: the common case is cheap."""
    uid = os.geteuid()
    try:
        return all(os.stat(p).st_uid == uid for p in (top, top / ".git", git_dir))
    except OSError:
        return False


def _refused_by_git(top: Path, git_dir: Path) -> GitError | None:
    """Why git itself refuses the repository at ``top`` (another user's, not listed in
    ``safe.directory``), or None when it takes it. git discovers it from ``top``, whose
    ``.git`` it finds first, and makes its ownership check (``sudo``, ``safe.directory``)."""
    try:
        proc = git_process(None, ["rev-parse", "--absolute-git-dir"], cwd=top)
    except GitError as exc:
        return exc
    if proc.returncode != 0:
        err = _text(proc.stderr)
        fatal = [ln for ln in err.splitlines() if ln.startswith("fatal:")]
        return GitError(
            f"{top} belongs to another user and git does not trust it"
            f" ({(fatal or [last_line(err)])[0]}): memcli runs no git in it",
            hint=f"if you trust it: 'git config --global --add safe.directory {top}'",
        )
    found = _text(proc.stdout).strip()
    if not found or Path(found).resolve() != git_dir:
        return GitError(f"git takes {found or 'no git folder'} for {top}, not {git_dir}")
    return None


def open_repo(root: Path) -> Repo:
    """The repository holding ``root`` (the workspace may be a subfolder of it); GitError when
    there is none, or it is refused (:func:`locate_repo`)."""
    root = Path(root)
    repo, refused = locate_repo(root) if root.is_dir() else (None, None)
    if refused is not None:
        raise refused
    if repo is None:
        raise GitError(f"{root} is not in a git repository", hint=NOT_A_REPO_HINT)
    return repo


def git_init(root: Path) -> Path:
    """``git init`` in ``root``; returns the repository's top folder."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    proc = git_process(None, ["init", "--quiet"], cwd=root)
    if proc.returncode != 0:
        raise GitError(f"git init failed: {last_line(_text(proc.stderr))}")
    return root.resolve()


def operation_in_progress(repo: Repo) -> str | None:
    """'merge', 'rebase', 'cherry-pick' or 'revert' when one is under way, else None."""
    checks = [
        ("rebase", repo.git_dir / "rebase-merge"),
        ("rebase", repo.git_dir / "rebase-apply"),
        ("merge", repo.git_dir / "MERGE_HEAD"),
        ("cherry-pick", repo.git_dir / "CHERRY_PICK_HEAD"),
        ("revert", repo.git_dir / "REVERT_HEAD"),
    ]
    for name, marker in checks:
        if marker.exists():
            return name
    return None


def has_head(repo: Repo) -> bool:
    """True once the current branch has a commit."""
    status, _, _ = run_git(repo, "rev-parse", "--verify", "--quiet", "HEAD", check=False)
    return status == 0


def rel_to_top(top: Path, root: Path, path: Path | str) -> str:
    """``path`` (absolute, or relative to the workspace ``root``) relative to the work tree."""
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


def prefix_of(top: Path, root: Path) -> str:
    """The workspace folder as a pathspec prefix in the repository ('' at its top)."""
    rel = root.relative_to(top.resolve()).as_posix() if root != top.resolve() else ""
    return "" if rel in ("", ".") else rel + "/"
