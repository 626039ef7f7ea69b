"""Diffs of facts: which entries (and other lines) under ``memory/`` came and went."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from memcli.errors import BadInput
from memcli.git.repo import run_git
from memcli.git.scope import WORKTREE, Change, Scope, blob_shas
from memcli.notes.entries import parse_entries
from memcli.notes.lifecycle import STATUS_LINE
from memcli.notes.lines import split_lines

__all__ = ["WORKTREE", "DiffResult", "FactLine", "FileDiff", "diff", "fact_changes"]


@dataclass(frozen=True)
class FactLine:
    """A fact (a list entry) or a line of prose that was added or removed."""

    line: int
    text: str
    type: str | None = None
    tags: tuple[str, ...] = ()
    time: str | None = None
    #: "fact" for a parsed entry, "line" for any other line, "status" for an entry whose
    #: status lines alone changed (superseded, retracted, confirmed...: see ``event``)
    kind: str = "fact"
    event: str | None = None  # what the status lines say happened to it

    def as_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "text": self.text,
            "type": self.type,
            "tags": list(self.tags),
            "time": self.time,
            "kind": self.kind,
            "event": self.event,
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
            "changed": count("added", "status"),
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


def diff_states(scope: Scope, old: str | None, new: str) -> DiffResult:
    """Facts that differ between commit ``old`` (None: the empty tree) and ``new``."""
    changes = scope.changes(old, new)
    blobs = scope.read_blobs(blob_shas(changes, new != WORKTREE))
    return build(scope, old, new, changes, blobs)


def build(
    scope: Scope, old: str | None, new: str, changes: list[Change], blobs: dict[str, bytes]
) -> DiffResult:
    """The DiffResult of ``changes``, with file contents from ``blobs`` (or the work tree)."""
    result = DiffResult(old, new)
    for c in changes:
        before = blobs.get(c.old_sha, b"") if c.letter not in ("A", "?") else b""
        if c.letter == "D":
            after = b""
        elif new == WORKTREE:
            after = scope.worktree_bytes(c.path)
        else:
            after = blobs.get(c.new_sha, b"")
        fd = _file_diff(scope, c, before, after)
        if fd.added or fd.removed or fd.binary or fd.status != "modified":
            result.files.append(fd)
    result.files.sort(key=lambda f: f.path)
    return result


def _file_diff(scope: Scope, c: Change, before: bytes, after: bytes) -> FileDiff:
    status = "untracked" if c.letter == "?" else _STATUS.get(c.letter, "modified")
    fd = FileDiff(scope.ws_rel(c.path), status, scope.ws_rel(c.old_path) if c.old_path else None)
    if b"\0" in before or b"\0" in after:
        fd.binary = True
        return fd
    fd.added, fd.removed = fact_changes(
        before.decode("utf-8", "replace"), after.decode("utf-8", "replace")
    )
    return fd


def fact_changes(before: str, after: str) -> tuple[list[FactLine], list[FactLine]]:
    """(added, removed): facts or prose lines touched by a line diff of two texts."""
    old_lines = split_lines(before)
    new_lines = split_lines(after)
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
        hit = touched.intersection(span)
        if not hit:
            continue
        marks = {n for n in span if STATUS_LINE.match(lines[n - 1])}
        if hit <= marks:  # only its status lines changed: what happened to it
            events = "; ".join(_event(lines[n - 1]) for n in sorted(hit))
            found.append(FactLine(e.line, e.text, e.type, tuple(e.tags), e.time, "status", events))
        else:
            found.append(FactLine(e.line, e.text, e.type, tuple(e.tags), e.time, "fact"))
    for n in sorted(touched - covered):
        line = lines[n - 1].strip() if n - 1 < len(lines) else ""
        if line:
            found.append(FactLine(n, line, kind="line"))
    found.sort(key=lambda f: f.line)
    return found


def _event(line: str) -> str:
    """A status line told as an event: ``superseded by 2b1c5398``, ``forgot (why)``."""
    m = STATUS_LINE.match(line)
    if not m:
        return line.strip()
    kind, rest = m.group(1), re.sub(r"^\d{4}-\d{2}-\d{2}\s*", "", m.group(2).strip())
    if kind == "retracted":
        why = rest.partition(":")[2].strip()
        return f"forgot ({why})" if why else "forgot"
    if kind == "review":
        return f"needs review ({rest.lstrip(': ')})" if rest.strip(": ") else "needs review"
    return f"{kind} {rest}".strip()


_RELATIVE = re.compile(r"^(\d+) (second|minute|hour)s? ago$")  # within a day


def day_start(date_text: str, field: str = "since") -> str:
    """A date for git: the one date grammar (:mod:`memcli.notes.dates`: ``2026-11-20``,
    ``yesterday``, ``7d``, ``2 weeks ago``...) as local midnight of that day, an ISO time, or
    a time of day back ('3 hours ago').

    Each becomes ``@<epoch>`` (or the plain 'N hours ago') so git's lenient date parser
    cannot guess; anything else is refused rather than silently read as "now".
    """
    from memcli.notes.dates import GRAMMAR, HINT, parse_day

    text = " ".join(date_text.lower().split())
    day = parse_day(text, date.today())
    if day is not None:
        return f"@{int(datetime.combine(day, datetime.min.time()).timestamp())}"
    try:
        return f"@{int(datetime.fromisoformat(text).timestamp())}"
    except ValueError:
        pass
    if _RELATIVE.match(text) or text == "now":
        return text
    raise BadInput(
        f"{{{field}}} expects {GRAMMAR} (or a time: ISO, '3 hours ago'); got {date_text!r}",
        hint=HINT,
        fields=(field,),
    )


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
    scope = Scope(root, memory_dir)
    if since and rev_range:
        raise BadInput("give either a revision range or {since}, not both", fields=("since",))
    if since:
        head = scope.head()
        base = None
        if head:
            _, out, _ = run_git(
                scope.repo,
                "rev-list",
                "-1",
                "--first-parent",
                f"--before={day_start(since)}",
                head,
            )
            base = out.strip() or None
        return diff_states(scope, base, WORKTREE)
    if not rev_range:
        return diff_states(scope, scope.head(), WORKTREE)
    if "..." in rev_range:
        a, b = rev_range.split("...", 1)
        left, right = scope.resolve(a or "HEAD"), scope.resolve(b or "HEAD")
        status, out, _ = run_git(scope.repo, "merge-base", left, right, check=False)
        return diff_states(scope, (out.strip() or None) if status == 0 else None, right)
    if ".." in rev_range:
        a, b = rev_range.split("..", 1)
        return diff_states(scope, scope.resolve(a or "HEAD"), scope.resolve(b or "HEAD"))
    return diff_states(scope, scope.resolve(rev_range), WORKTREE)
