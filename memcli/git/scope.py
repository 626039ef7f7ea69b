"""A repository seen from a workspace: its memory folder's pathspec, revisions, changed files
and blob contents. Diff, log and sync all read the history through one :class:`Scope`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from memcli.errors import BadInput, GitError
from memcli.git.repo import git_process, last_line, open_repo, prefix_of, run_git

#: The "new" side of a diff that reads files from the work tree instead of a commit.
WORKTREE = "worktree"


@dataclass(frozen=True)
class Change:
    """One changed file as ``git diff --raw`` reports it."""

    letter: str  # git's status letter; "?" for an untracked file
    path: str  # repo-relative
    old_path: str | None
    old_sha: str
    new_sha: str


class Scope:
    """A repository seen from a workspace: its top, and the memory folder's pathspec."""

    def __init__(self, root: Path, memory_dir: str = "memory") -> None:
        self.repo = open_repo(root)
        self.top = self.repo.top
        self.prefix = prefix_of(self.top, Path(root).resolve())
        self.pathspec = self.prefix + memory_dir
        self._empty_tree: str | None = None

    def ws_rel(self, repo_rel: str) -> str:
        return repo_rel[len(self.prefix) :] if repo_rel.startswith(self.prefix) else repo_rel

    def resolve(self, rev: str) -> str:
        """A revision as a full commit sha; BadInput when it names nothing."""
        if not rev or rev.startswith("-"):
            raise BadInput(f"invalid revision {rev!r}")
        status, out, _ = run_git(
            self.repo,
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            f"{rev}^{{commit}}",
            check=False,
        )
        if status != 0:
            raise BadInput(f"unknown revision {rev!r}", hint="see 'git log' for valid revisions")
        return out.strip()

    def head(self) -> str | None:
        status, out, _ = run_git(
            self.repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False
        )
        return out.strip() if status == 0 else None

    def empty_tree(self) -> str:
        if self._empty_tree is None:
            _, out, _ = run_git(self.repo, "hash-object", "-t", "tree", os.devnull)
            self._empty_tree = out.strip()
        return self._empty_tree

    def worktree_bytes(self, repo_rel: str) -> bytes:
        try:
            return (self.top / repo_rel).read_bytes()
        except OSError:
            return b""

    def read_blobs(self, shas: set[str]) -> dict[str, bytes]:
        """Blob contents by sha, all through one ``git cat-file --batch``."""
        wanted = sorted(s for s in shas if s.strip("0"))
        if not wanted:
            return {}
        proc = git_process(
            self.repo, ["cat-file", "--batch"], input=("\n".join(wanted) + "\n").encode("ascii")
        )
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace")
            raise GitError(f"git cat-file failed: {last_line(err)}")
        data, pos = proc.stdout, 0
        found: dict[str, bytes] = {}
        for sha in wanted:
            nl = data.index(b"\n", pos)
            header = data[pos:nl].split()
            pos = nl + 1
            if len(header) < 3:  # "<sha> missing"
                found[sha] = b""
                continue
            size = int(header[2])
            found[sha] = data[pos : pos + size]
            pos += size + 1
        return found

    def changes(self, old: str | None, new: str) -> list[Change]:
        """Files under memory/ that differ between ``old`` and ``new`` (a commit or WORKTREE)."""
        base = old or self.empty_tree()
        args = ["diff", "--raw", "-z", "-M", "--no-abbrev", "--no-ext-diff", "--no-textconv", base]
        if new != WORKTREE:
            args.append(new)
        _, out, _ = run_git(self.repo, *args, "--", self.pathspec)
        found = parse_raw(out)
        if new == WORKTREE:
            _, out, _ = run_git(
                self.repo, "ls-files", "-z", "--others", "--exclude-standard", "--", self.pathspec
            )
            found.extend(Change("?", p, None, "", "") for p in out.split("\0") if p)
        return found


def parse_raw(out: str) -> list[Change]:
    """Records of ``git diff --raw -z --no-abbrev`` output."""
    fields = out.split("\0")
    found: list[Change] = []
    i = 0
    while i < len(fields) - 1:
        meta = fields[i].strip().lstrip(":").split()
        if len(meta) < 5:
            i += 1
            continue
        old_sha, new_sha, letter = meta[2], meta[3], meta[4][:1]
        if letter in ("R", "C"):
            found.append(Change(letter, fields[i + 2], fields[i + 1], old_sha, new_sha))
            i += 3
        else:
            found.append(Change(letter, fields[i + 1], None, old_sha, new_sha))
            i += 2
    return found


def blob_shas(changes: list[Change], new_side: bool = True) -> set[str]:
    """The blobs a diff of ``changes`` reads (the old side only when the new is the work tree)."""
    return {c.old_sha for c in changes} | ({c.new_sha for c in changes} if new_side else set())
