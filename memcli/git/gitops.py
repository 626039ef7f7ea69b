"""Git history of the memory: repository discovery, commits, diffs of facts, log, sync.

GitPython is imported inside the functions that need it (it takes a while to
import), so ``memcli --help`` and keyword search never pay for it. The cheap
helpers (:func:`find_git_root`, :func:`quick_status`) do not import it at all.
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from memcli.errors import BadInput, GitError
from memcli.notes.entries import parse_entries

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


def require_repo(root: Path) -> Path:
    """The top of the repository holding ``root``; GitError when there is none (cheap)."""
    top = find_git_root(root)
    if top is None:
        raise GitError(f"{Path(root).resolve()} is not in a git repository", hint=NOT_A_REPO_HINT)
    return top


def git_init(root: Path) -> Path:
    """``git init`` in ``root``; returns the repository's top folder."""
    git = _git_module()
    try:
        repo = git.Repo.init(Path(root))
    except git.GitCommandError as exc:
        raise GitError(f"git init failed: {last_line(str(exc.stderr))}") from None
    return repo_top(repo)


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
        "git",
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
    {
        "GIT_DIR",
        "GIT_INDEX_FILE",
        "GIT_WORK_TREE",
        "GIT_PREFIX",
        "GIT_OBJECT_DIRECTORY",
        "GIT_COMMON_DIR",
    }
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


# -- diff of facts -------------------------------------------------------------------
WORKTREE = "worktree"


@dataclass(frozen=True)
class FactLine:
    """A fact (a list entry) or a line of prose that was added or removed."""

    line: int
    text: str
    type: str | None = None
    tags: tuple[str, ...] = ()
    time: str | None = None
    kind: str = "fact"  # "fact" for a parsed entry, "line" for any other line

    def as_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "text": self.text,
            "type": self.type,
            "tags": list(self.tags),
            "time": self.time,
            "kind": self.kind,
        }


@dataclass
class FileDiff:
    """How one memory file changed between two states."""

    path: str  # workspace-relative POSIX path (the new path of a rename)
    status: str  # added, modified, deleted, renamed, untracked, typechange
    old_path: str | None = None
    added: list[FactLine] = field(default_factory=list)
    removed: list[FactLine] = field(default_factory=list)
    binary: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "status": self.status,
            "old_path": self.old_path,
            "binary": self.binary,
            "added": [f.as_dict() for f in self.added],
            "removed": [f.as_dict() for f in self.removed],
        }


@dataclass
class DiffResult:
    """Facts added and removed under ``memory/`` between ``old`` and ``new``."""

    old: str | None  # commit sha; None = before the first commit (empty tree)
    new: str  # commit sha or WORKTREE
    files: list[FileDiff] = field(default_factory=list)

    @property
    def totals(self) -> dict[str, int]:
        """Facts (entries) added/removed, and other lines (prose, headings) apart."""

        def count(side: str, kind: str) -> int:
            return sum(1 for f in self.files for x in getattr(f, side) if x.kind == kind)

        return {
            "files": len(self.files),
            "added": count("added", "fact"),
            "removed": count("removed", "fact"),
            "lines_added": count("added", "line"),
            "lines_removed": count("removed", "line"),
        }

    @property
    def changed(self) -> bool:
        return bool(self.files)

    def as_dict(self) -> dict[str, Any]:
        return {
            "from": self.old,
            "to": self.new,
            "files": [f.as_dict() for f in self.files],
            "totals": self.totals,
        }


_STATUS = {
    "A": "added",
    "M": "modified",
    "D": "deleted",
    "R": "renamed",
    "C": "added",
    "T": "typechange",
    "U": "modified",
}


class _Scope:
    """A repository seen from a workspace: its top, and the memory folder's pathspec."""

    def __init__(self, root: Path, memory_dir: str = "memory") -> None:
        self.repo = open_repo(root)
        self.top = repo_top(self.repo)
        self.prefix = _prefix(self.top, Path(root).resolve())
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
        proc = subprocess.run(
            ["git", "cat-file", "--batch"],
            cwd=self.top,
            capture_output=True,
            input=("\n".join(wanted) + "\n").encode("ascii"),
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

    def changes(self, old: str | None, new: str) -> list[_Change]:
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
            found.extend(_Change("?", p, None, "", "") for p in out.split("\0") if p)
        return found

    def diff(self, old: str | None, new: str) -> DiffResult:
        changes = self.changes(old, new)
        blobs = self.read_blobs(_shas(changes, new != WORKTREE))
        return self.build(old, new, changes, blobs)

    def build(
        self, old: str | None, new: str, changes: list[_Change], blobs: dict[str, bytes]
    ) -> DiffResult:
        result = DiffResult(old, new)
        for c in changes:
            before = blobs.get(c.old_sha, b"") if c.letter not in ("A", "?") else b""
            if c.letter == "D":
                after = b""
            elif new == WORKTREE:
                after = self.worktree_bytes(c.path)
            else:
                after = blobs.get(c.new_sha, b"")
            fd = self.file_diff(c, before, after)
            if fd.added or fd.removed or fd.binary or fd.status != "modified":
                result.files.append(fd)
        result.files.sort(key=lambda f: f.path)
        return result

    def file_diff(self, c: _Change, before: bytes, after: bytes) -> FileDiff:
        status = "untracked" if c.letter == "?" else _STATUS.get(c.letter, "modified")
        fd = FileDiff(self.ws_rel(c.path), status, self.ws_rel(c.old_path) if c.old_path else None)
        if b"\0" in before or b"\0" in after:
            fd.binary = True
            return fd
        fd.added, fd.removed = fact_changes(
            before.decode("utf-8", "replace"), after.decode("utf-8", "replace")
        )
        return fd


def parse_raw(out: str) -> list[_Change]:
    """Records of ``git diff --raw -z --no-abbrev`` output."""
    fields = out.split("\0")
    found: list[_Change] = []
    i = 0
    while i < len(fields) - 1:
        meta = fields[i].strip().lstrip(":").split()
        if len(meta) < 5:
            i += 1
            continue
        old_sha, new_sha, letter = meta[2], meta[3], meta[4][:1]
        if letter in ("R", "C"):
            found.append(_Change(letter, fields[i + 2], fields[i + 1], old_sha, new_sha))
            i += 3
        else:
            found.append(_Change(letter, fields[i + 1], None, old_sha, new_sha))
            i += 2
    return found


def _shas(changes: list[_Change], new_side: bool = True) -> set[str]:
    return {c.old_sha for c in changes} | ({c.new_sha for c in changes} if new_side else set())


@dataclass(frozen=True)
class _Change:
    letter: str  # git's status letter; "?" for an untracked file
    path: str  # repo-relative
    old_path: str | None
    old_sha: str
    new_sha: str


def fact_changes(before: str, after: str) -> tuple[list[FactLine], list[FactLine]]:
    """(added, removed): facts or prose lines touched by a line diff of two texts."""
    old_lines = before.splitlines()
    new_lines = after.splitlines()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    gone: set[int] = set()
    came: set[int] = set()
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("delete", "replace"):
            gone.update(range(i1 + 1, i2 + 1))
        if tag in ("insert", "replace"):
            came.update(range(j1 + 1, j2 + 1))
    return _facts_at(after, new_lines, came), _facts_at(before, old_lines, gone)


def _facts_at(text: str, lines: list[str], touched: set[int]) -> list[FactLine]:
    if not touched:
        return []
    found: list[FactLine] = []
    covered: set[int] = set()
    for e in parse_entries(text):
        span = range(e.line, max(e.end_line, e.line) + 1)
        covered.update(span)
        if touched.intersection(span):
            found.append(FactLine(e.line, e.text, e.type, tuple(e.tags), e.time, "fact"))
    for n in sorted(touched - covered):
        line = lines[n - 1].strip() if n - 1 < len(lines) else ""
        if line:
            found.append(FactLine(n, line, kind="line"))
    found.sort(key=lambda f: f.line)
    return found


_RELATIVE = re.compile(r"^(\d+)\s+(second|minute|hour|day|week|month|year)s?\s+ago$")


def _day_start(date_text: str) -> str:
    """A date for git: ``YYYY-MM-DD`` (local midnight), an ISO time, or 'N days ago'.

    ISO forms become ``@<epoch>`` so git's lenient date parser cannot guess;
    anything else is refused rather than silently read as "now".
    """
    text = date_text.strip().lower()
    for parse in (
        lambda t: datetime.combine(date.fromisoformat(t), datetime.min.time()),
        datetime.fromisoformat,
    ):
        try:
            return f"@{int(parse(text).timestamp())}"
        except ValueError:
            pass
    if _RELATIVE.match(text) or text in ("yesterday", "today", "now"):
        return text
    raise BadInput(f"invalid date {date_text!r}", hint="use YYYY-MM-DD or e.g. '2 weeks ago'")


def diff(
    root: Path,
    rev_range: str | None = None,
    *,
    since: str | None = None,
    memory_dir: str = "memory",
) -> DiffResult:
    """Facts added/removed under ``memory/``.

    ``rev_range``: None (work tree, staged or not, untracked files included,
    against HEAD), ``A..B``, ``A...B`` (from their merge base) or a single rev
    ``A`` (A against the work tree). ``since``: from the last commit before
    that date (the state the first commit since then started from) to the work tree.
    """
    scope = _Scope(root, memory_dir)
    if since and rev_range:
        raise BadInput("give either a revision range or --since, not both")
    if since:
        head = scope.head()
        base = None
        if head:
            _, out, _ = run_git(
                scope.repo,
                "rev-list",
                "-1",
                "--first-parent",
                f"--before={_day_start(since)}",
                head,
            )
            base = out.strip() or None
        return scope.diff(base, WORKTREE)
    if not rev_range:
        return scope.diff(scope.head(), WORKTREE)
    if "..." in rev_range:
        a, b = rev_range.split("...", 1)
        left, right = scope.resolve(a or "HEAD"), scope.resolve(b or "HEAD")
        status, out, _ = run_git(scope.repo, "merge-base", left, right, check=False)
        return scope.diff((out.strip() or None) if status == 0 else None, right)
    if ".." in rev_range:
        a, b = rev_range.split("..", 1)
        return scope.diff(scope.resolve(a or "HEAD"), scope.resolve(b or "HEAD"))
    return scope.diff(scope.resolve(rev_range), WORKTREE)


# -- log ---------------------------------------------------------------------------------
@dataclass
class LogEntry:
    sha: str
    author: str
    date: str
    subject: str
    files: int
    added: int
    removed: int

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
    scope = _Scope(root, memory_dir)
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
        args.append(f"--since={_day_start(since)}")
    _, out, _ = run_git(scope.repo, *args, start, "--", scope.pathspec)
    commits: list[tuple[list[str], list[_Change]]] = []
    for rec in out.split("\x1e")[1:]:
        header, _, raw = rec.partition("\0")
        commits.append((header.split("\x1f", 4), parse_raw(raw.lstrip("\n"))))
    entries: list[LogEntry] = []
    for i in range(0, len(commits), LOG_BATCH):
        batch = commits[i : i + LOG_BATCH]
        blobs = scope.read_blobs(set().union(*(_shas(changes) for _, changes in batch)))
        for (sha, parents, author, when, subject), changes in batch:
            parent = parents.split()[0] if parents.split() else None
            t = scope.build(parent, sha, changes, blobs).totals
            entries.append(
                LogEntry(sha, author, when, subject, t["files"], t["added"], t["removed"])
            )
    return entries


LOG_BATCH = 64  # commits whose blobs are read at once


# -- sync ----------------------------------------------------------------------------------
class SyncConflict(GitError):
    """Integrating the upstream needs a human: the same lines changed on both sides."""


@dataclass
class SyncResult:
    branch: str
    upstream: str
    strategy: str
    committed: str | None = None  # sha of the commit of pending memory files
    before: str | None = None
    after: str | None = None
    pulled: int = 0  # upstream commits brought in
    pushed: int = 0  # local commits sent
    changed: list[str] = field(default_factory=list)  # memory files the pull changed
    attempts: int = 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "branch": self.branch,
            "upstream": self.upstream,
            "strategy": self.strategy,
            "committed": self.committed,
            "before": self.before,
            "after": self.after,
            "pulled": self.pulled,
            "pushed": self.pushed,
            "changed": self.changed,
        }


SYNC_STRATEGIES = ("rebase", "merge")
PUSH_ATTEMPTS = 3


def sync(
    root: Path,
    *,
    strategy: str = "rebase",
    commit: bool = True,
    push: bool = True,
    memory_dir: str = "memory",
) -> SyncResult:
    """Fetch, integrate the upstream (rebase or merge), push; commit pending memory first.

    Daily files merge with git's union driver (see ``.gitattributes``), so two
    clones appending to the same day keep both. A real conflict aborts the
    rebase/merge (the repository is as before the pull) and raises
    :class:`SyncConflict` naming the files. The caller re-indexes ``changed``.
    """
    if strategy not in SYNC_STRATEGIES:
        raise BadInput(f"unknown sync strategy {strategy!r}", hint="use rebase or merge")
    scope = _Scope(root, memory_dir)
    repo = scope.repo
    busy = operation_in_progress(repo)
    if busy:
        raise GitError(
            f"a {busy} is in progress in {scope.top}",
            hint=f"finish it or run 'git {busy} --abort' (git status explains), then sync again",
        )
    status, out, _ = run_git(repo, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    if status != 0:
        raise GitError("HEAD is detached: sync needs a branch", hint="git switch <branch>")
    branch = out.strip()
    remote, merge_ref, upstream = _upstream(repo, branch)
    result = SyncResult(branch, upstream, strategy)
    dirty = _dirty_memory(scope)
    if dirty:
        if not commit:
            raise GitError(
                f"{len(dirty)} memory file(s) have uncommitted changes",
                hint="commit them, or run sync without --no-commit",
            )
        message = sync_message(scope.diff(scope.head(), WORKTREE))
        result.committed = commit_paths(root, [scope.top / p for p in dirty], message) or None
    result.before = scope.head()
    for attempt in range(1, PUSH_ATTEMPTS + 1):
        result.attempts = attempt
        if remote != ".":
            run_git(repo, "fetch", "--quiet", remote)
        ahead, behind = _ahead_behind(repo)
        if behind:
            _integrate(scope, strategy, fast_forward=ahead == 0, upstream=upstream)
            result.pulled += behind
        ahead, _ = _ahead_behind(repo)
        if not push or not ahead:
            break
        status, _, err = run_git(repo, "push", "--quiet", remote, f"HEAD:{merge_ref}", check=False)
        if status == 0:
            result.pushed = ahead
            break
        if attempt == PUSH_ATTEMPTS or not _rejected(err):
            raise GitError(f"push to {remote} failed: {last_line(err)}", hint=_hint_for(err))
    result.after = scope.head()
    if result.before != result.after:
        result.changed = [
            scope.ws_rel(c.path) for c in scope.changes(result.before, result.after or "HEAD")
        ]
    return result


def _upstream(repo: Any, branch: str) -> tuple[str, str, str]:
    """(remote, merge ref, short upstream name) of ``branch``; GitError when it has none."""
    _, remote, _ = run_git(repo, "config", "--get", f"branch.{branch}.remote", check=False)
    _, merge, _ = run_git(repo, "config", "--get", f"branch.{branch}.merge", check=False)
    status, short, _ = run_git(
        repo, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}", check=False
    )
    if not remote.strip() or not merge.strip():
        raise GitError(
            f"branch {branch!r} has no upstream to sync with",
            hint=f"set one: git push -u origin {branch}  (or git branch -u origin/{branch})",
        )
    if status != 0:
        if remote.strip() != ".":
            run_git(repo, "fetch", "--quiet", remote.strip())
        status, short, err = run_git(
            repo, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}", check=False
        )
        if status != 0:
            raise GitError(
                f"the upstream of {branch!r} ({remote.strip()} {merge.strip()}) does not exist",
                hint=f"push it first: git push -u {remote.strip()} {branch}",
            )
    return remote.strip(), merge.strip(), short.strip()


def _dirty_memory(scope: _Scope) -> list[str]:
    _, out, _ = run_git(
        scope.repo, "status", "--porcelain", "-z", "--untracked-files=all", "--", scope.pathspec
    )
    paths: list[str] = []
    fields = out.split("\0")
    i = 0
    while i < len(fields):
        rec = fields[i]
        i += 1
        if len(rec) < 4:
            continue
        paths.append(rec[3:])
        if rec[0] in "RC":
            paths.append(fields[i])
            i += 1
    return sorted(set(paths))


def _ahead_behind(repo: Any) -> tuple[int, int]:
    _, out, _ = run_git(repo, "rev-list", "--left-right", "--count", "HEAD...@{u}")
    ahead, behind = out.split()
    return int(ahead), int(behind)


def _rejected(err: str) -> bool:
    low = err.lower()
    return "rejected" in low or "fetch first" in low or "non-fast-forward" in low


def _integrate(scope: _Scope, strategy: str, *, fast_forward: bool, upstream: str) -> None:
    repo = scope.repo
    if fast_forward:
        args = ["merge", "--ff-only", "--autostash", "--quiet", "@{u}"]
    elif strategy == "rebase":
        args = ["rebase", "--autostash", "--quiet", "@{u}"]
    else:
        args = ["merge", "--autostash", "--no-edit", "--quiet", "@{u}"]
    status, out, err = run_git(repo, *args, check=False)
    if status == 0:
        return
    op = "rebase" if args[0] == "rebase" else "merge"
    _, unmerged, _ = run_git(repo, "diff", "--name-only", "-z", "--diff-filter=U", check=False)
    files = [scope.ws_rel(p) for p in unmerged.split("\0") if p]
    if not files:
        if operation_in_progress(repo):
            run_git(repo, op, "--abort", check=False)
        raise GitError(
            f"{op} onto {upstream} failed: {last_line(err or out)}",
            hint="run 'git status' to see why",
        )
    aborted, _, _ = run_git(repo, op, "--abort", check=False)
    names = ", ".join(files)
    if aborted == 0:
        raise SyncConflict(
            f"sync stopped: {names} changed on both sides; nothing was changed here ({op} aborted)",
            hint=f"resolve by hand: git pull {'--rebase' if op == 'rebase' else '--no-rebase'}"
            ", fix and 'git add' the files, "
            f"git {op} --continue, then memcli sync",
        )
    raise SyncConflict(
        f"sync stopped: {names} changed on both sides and the {op} is still in progress",
        hint=f"fix the files and run 'git {op} --continue', or 'git {op} --abort' (see git status)",
    )


def sync_message(d: DiffResult) -> str:
    """A commit message for pending memory changes that names the facts."""
    added = [f.text for fd in d.files for f in fd.added if f.kind == "fact"]
    t = d.totals
    return facts_message(added, removed=t["removed"], files=t["files"])


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
