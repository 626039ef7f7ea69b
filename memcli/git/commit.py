"""Committing memory files: exactly the paths given, with a message that names the facts."""

from __future__ import annotations

from pathlib import Path

from memcli.errors import GitError
from memcli.git.repo import has_head, open_repo, operation_in_progress, rel_to_top, run_git


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
    run_git(repo, "add", "--all", "--", *rels)
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
