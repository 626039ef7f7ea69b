"""Committing memory files: exactly the paths given, with a message that names the facts."""

from __future__ import annotations

from pathlib import Path

from memcli.errors import GitError
from memcli.git.repo import (
    Repo,
    git_process,
    has_head,
    open_repo,
    operation_in_progress,
    rel_to_top,
    run_git,
)


def commit_paths(root: Path, paths: list[Path], message: str) -> str:
    """Commit exactly ``paths`` (new, changed or deleted files) and return the new sha.

    Anything else that is staged stays staged and out of the commit. Returns an
    empty string when those paths hold no change to commit. Raises
    :class:`GitError` when ``root`` is not in a git repository or git refuses.
    """
    repo = open_repo(root)
    top = repo.top
    rels = sorted({rel_to_top(top, Path(root).resolve(), p) for p in paths})
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
    if has_head(repo):  # deleted from the index already (git rm, git mv): still committable
        _, in_head, _ = run_git(repo, "ls-tree", "-r", "-z", "--name-only", "HEAD", "--", *rels)
        known.update(in_head.split("\0"))
    rels = [r for r in rels if r in known]
    if not rels:
        return ""
    _, staged, _ = run_git(repo, "ls-files", "--stage", "-z", "--", *rels)
    run_git(repo, "add", "--all", "--", *rels)
    try:
        return _commit_staged(repo, rels, message)
    except GitError:
        _restore_index(repo, rels, staged)  # a refused commit leaves git's index as it was
        raise


def _commit_staged(repo: Repo, rels: list[str], message: str) -> str:
    """Commit ``rels``, just staged; the new sha, or "" when they hold no change."""
    if has_head(repo):
        status, _, _ = run_git(
            repo, "diff-index", "--cached", "--quiet", "HEAD", "--", *rels, check=False
        )
        if status == 0:
            return ""
    else:
        _, listed, _ = run_git(repo, "ls-files", "--", *rels)
        if not listed.strip():
            return ""
    run_git(repo, "commit", "--quiet", "-m", message, "--only", "--", *rels)
    _, sha, _ = run_git(repo, "rev-parse", "HEAD")
    return sha.strip()


def _restore_index(repo: Repo, rels: list[str], staged: str) -> None:
    """Put back the index entries ``rels`` had (``git ls-files --stage -z`` output)."""
    run_git(repo, "update-index", "--force-remove", "--", *rels, check=False)
    if staged:
        git_process(repo, ["update-index", "-z", "--index-info"], input=staged.encode())


def check_committable(root: Path) -> list[str]:
    """Refuse (GitError) before anything is written when a commit cannot be made: a merge,
    rebase, cherry-pick or revert under way. Returns warnings: a detached HEAD."""
    repo = open_repo(root)
    busy = operation_in_progress(repo)
    if busy:
        raise GitError(
            f"a {busy} is in progress in {repo.top}: nothing was written",
            hint=f"finish or abort the {busy} (git status explains how), then add again",
        )
    return detached_warning(repo)


def detached_warning(repo: Repo) -> list[str]:
    """A warning when HEAD is detached: a commit made now is on no branch."""
    status, _, _ = run_git(repo, "symbolic-ref", "--quiet", "HEAD", check=False)
    if status == 0:
        return []
    return ["HEAD is detached: the commit is on no branch ('git switch -c NAME' keeps it)"]


def head_text(root: Path, path: Path) -> str | None:
    """The committed (HEAD) text of ``path``; None when HEAD does not hold it."""
    repo = open_repo(root)
    rel = rel_to_top(repo.top, Path(root).resolve(), path)
    status, out, _ = run_git(repo, "show", f"HEAD:{rel}", check=False)
    return out if status == 0 else None


def facts_message(texts: list[str], *, removed: int = 0, files: int = 1) -> str:
    """``memory: <the fact>`` for one fact; a count and a list of them for several."""
    if len(texts) == 1 and not removed:
        return f"memory: {_short(texts[0])}"
    parts = [f"{len(texts)} added"] + ([f"{removed} removed"] if removed else [])
    head = f"memory: {', '.join(parts)} in {files} file{'s' if files != 1 else ''}"
    body = "\n".join(f"- {_short(t)}" for t in texts[:20])
    more = f"\n- ... and {len(texts) - 20} more" if len(texts) > 20 else ""
    return f"{head}\n\n{body}{more}" if body else head


def _short(text: str, width: int = 72) -> str:
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 1].rstrip() + "\u2026"
