"""The history of ``memory/``: commits that touched it, with the facts each added and removed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memcli.git.diff import DiffResult, FileDiff, build, day_start
from memcli.git.repo import run_git
from memcli.git.scope import Change, Scope, blob_shas, parse_raw

LOG_BATCH = 64  # commits whose blobs are read at once


@dataclass
class LogEntry:
    """One commit that touched ``memory/``."""

    sha: str
    author: str
    date: str
    subject: str
    files: int
    added: int
    removed: int
    changed: int = 0  # facts superseded, forgotten, confirmed... (status lines only)

    def as_dict(self) -> dict[str, Any]:
        return {
            "sha": self.sha,
            "short": self.sha[:10],
            "author": self.author,
            "date": self.date,
            "subject": self.subject,
            "files": self.files,
            "added": self.added,
            "removed": self.removed,
            "changed": self.changed,
        }


def log(
    root: Path,
    rev: str | None = None,
    *,
    limit: int = 20,
    since: str | None = None,
    memory_dir: str = "memory",
) -> list[LogEntry]:
    """Commits that touched ``memory/`` (newest first) with facts added/removed by each."""
    scope = Scope(root, memory_dir)
    start = scope.resolve(rev) if rev else scope.head()
    if start is None:
        return []
    args = [
        "log",
        "--raw",
        "-z",
        "--no-abbrev",
        "-M",
        "--diff-merges=first-parent",
        "--no-ext-diff",
        "--format=%x1e%H%x1f%P%x1f%an%x1f%aI%x1f%s",
        f"-n{max(limit, 1)}",
    ]
    if since:
        args.append(f"--since={day_start(since)}")
    _, out, _ = run_git(scope.repo, *args, start, "--", scope.pathspec)
    commits: list[tuple[list[str], list[Change]]] = []
    for rec in out.split("\x1e")[1:]:
        header, _, raw = rec.partition("\0")
        commits.append((header.split("\x1f", 4), parse_raw(raw.lstrip("\n"))))
    entries: list[LogEntry] = []
    for i in range(0, len(commits), LOG_BATCH):
        batch = commits[i : i + LOG_BATCH]
        blobs = scope.read_blobs(set().union(*(blob_shas(changes) for _, changes in batch)))
        for (sha, parents, author, when, subject), changes in batch:
            first, *others = parents.split() or [""]
            d = build(scope, first or None, sha, changes, blobs)
            if others:
                d = _merge_own(scope, d, sha, others)
            t = d.totals
            entries.append(
                LogEntry(
                    sha, author, when, subject, t["files"], t["added"], t["removed"], t["changed"]
                )
            )
    return entries


def _merge_own(scope: Scope, first: DiffResult, sha: str, others: list[str]) -> DiffResult:
    """What a merge itself changed: the facts it adds or removes against every parent.

    Against its first parent a merge shows everything the merged branch brought, which that
    branch's own commits already count; a fact counts here only when no parent had it (one
    written while resolving a conflict) or every parent had it and the merge dropped it.
    """
    if not first.files:
        return first
    own = DiffResult(first.old, first.new, list(first.files))
    for parent in others:
        changes = scope.changes(parent, sha)
        other = build(scope, parent, sha, changes, scope.read_blobs(blob_shas(changes)))
        added = {(f.path, x.text) for f in other.files for x in f.added}
        removed = {(f.path, x.text) for f in other.files for x in f.removed}
        kept: list[FileDiff] = []
        for f in own.files:
            f = FileDiff(
                f.path,
                f.status,
                f.old_path,
                [x for x in f.added if (f.path, x.text) in added],
                [x for x in f.removed if (f.path, x.text) in removed],
                f.binary,
            )
            if f.added or f.removed:
                kept.append(f)
        own.files = kept
    return own
