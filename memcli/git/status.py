"""The cheap git state that ``memcli status`` shows: one ``git status``, nothing else."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from memcli.errors import GitError
from memcli.git.repo import find_repo, git_process, prefix_of


def quick_status(root: Path, memory_dir: str = "memory") -> dict[str, Any] | None:
    """``{branch, dirty_memory_files, ahead, behind}`` from one ``git status``; None if no repo.

    Paths are workspace-relative; ``ahead``/``behind`` are None without an upstream. Any
    failure (no git, a broken repository, a timeout) is None: status never fails on git.
    """
    root = Path(root).resolve()
    repo = find_repo(root)
    if repo is None:
        return None
    args = [
        "--no-optional-locks",
        "-c",
        "core.quotePath=false",
        "status",
        "--porcelain=v2",
        "--branch",
        "-z",
        "--untracked-files=all",
        "--",
        memory_dir,
    ]
    try:
        proc = git_process(repo, args, cwd=root, timeout=20)
    except (GitError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    return parse_status_v2(proc.stdout.decode("utf-8", "replace"), prefix_of(repo.top, root))


def parse_status_v2(out: str, prefix: str) -> dict[str, Any]:
    """Branch, ahead/behind and changed paths of ``git status --porcelain=v2 --branch -z``."""
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
            head = rec[len("# branch.head ") :]
            branch = None if head == "(detached)" else head
        elif rec.startswith("# branch.ab "):
            a, b = rec[len("# branch.ab ") :].split()
            ahead, behind = int(a), -int(b)
        elif rec[0] in "1u?":
            parts = rec.split(" ", {"1": 8, "u": 10, "?": 1}[rec[0]])
            dirty.add(parts[-1])
        elif rec[0] == "2":
            dirty.add(rec.split(" ", 9)[-1])
            i += 1  # the original path of a rename follows in its own field
    rels = sorted(p[len(prefix) :] if p.startswith(prefix) else p for p in dirty)
    return {"branch": branch, "dirty_memory_files": rels, "ahead": ahead, "behind": behind}
