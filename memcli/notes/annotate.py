"""Writing status lines under a fact in its file (:mod:`memcli.notes.lifecycle`), in place."""

from __future__ import annotations

import re
from pathlib import Path

from memcli.errors import BadInput
from memcli.notes.entries import editing, fact_key, parse_entries
from memcli.notes.lifecycle import ID_CHARS, STATUS_LINE

_STAMP = re.compile(r"^([-*+] (?:\d{1,2}:\d{2} )?(?:\[[\w\-]+\] )?)")


def annotate(
    path: Path,
    fact_id: str,
    marks: list[str],
    *,
    purge: bool = False,
    once: bool = False,
    writers: Path | None = None,
    within: tuple[Path, ...],
) -> bool:
    """Write ``marks`` (status lines) under the fact ``fact_id`` in ``path``, found again
    under the lock; ``purge``: its text becomes ``(forgotten)`` first; ``once``: a mark the
    fact already has is not written again. BadInput when the fact is no longer there.
    Returns whether anything was written. ``writers``: the workspace's writers lock;
    ``within``: where the file must stay (:func:`memcli.notes.entries.locked_append`)."""
    with editing(path, writers, within=within) as file:
        entry = next(
            (e for e in parse_entries(file.text) if fact_key(e.text)[:ID_CHARS] == fact_id), None
        )
        if entry is None:
            raise BadInput(f"fact {fact_id} is no longer in {path.name}; try again")
        lines = file.text.splitlines(keepends=True)
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        at = entry.end_line
        if purge:  # the status lines under it stay (those it counts may stand elsewhere)
            stamp = _STAMP.match(lines[entry.line - 1])
            body_end = entry.end_line
            while body_end > entry.line and STATUS_LINE.match(lines[body_end - 1]):
                body_end -= 1
            lines[entry.line - 1 : body_end] = [f"{stamp.group(1) if stamp else '- '}(forgotten)\n"]
            at = entry.line + entry.end_line - body_end  # after its status lines
        if once:
            marks = [m for m in marks if m.rstrip("\n") not in {s.rstrip() for s in entry.status}]
        if not marks and not purge:
            return False
        lines[at:at] = marks
        file.replace("".join(lines))
        return True


_SUPERSEDED_BY = re.compile(r"^\s+[-*+] superseded\b.*\bby ([0-9a-f]{4,40})\b")
_SUPERSEDES = re.compile(r"^\s+[-*+] supersedes:?\s+([0-9a-f]{4,40})\b")


def successors(text: str) -> dict[str, str]:
    """NEW id -> OLD id, for each fact of ``text`` written with a ``supersedes OLD`` line."""
    out = {}
    for e in parse_entries(text):
        for line in e.status:
            m = _SUPERSEDES.match(line)
            if m:
                out[fact_key(e.text)[:ID_CHARS]] = m.group(1)
    return out


def rehome_superseded(text: str, replaced: dict[str, str] | None = None) -> str | None:
    """Put each ``superseded ... by NEW`` line back under the fact it belongs to, when a merge
    moved it under another one: git's union merge of a daily file keeps both sides' lines, so
    a status line written under the last fact of the file can land after lines another clone
    appended meanwhile. The fact it belongs to is the one NEW's own ``supersedes OLD`` line
    names (written with NEW, in one block; ``replaced`` adds those of other files). The new
    text, or None when all is in place."""
    entries = parse_entries(text)
    by_id = {fact_key(e.text)[:ID_CHARS]: e for e in entries}
    replaced = {**(replaced or {}), **successors(text)}  # NEW id -> the OLD id
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    moved: dict[int, list[str]] = {}  # index of the line after which to insert -> lines
    removed: set[int] = set()
    has: dict[int, set[str]] = {}  # an entry's first line -> the marks it keeps
    for e in entries:
        kept = has.setdefault(e.line, set())
        kept.update(s.strip() for s in e.status if _SUPERSEDED_BY.match(s))
    seen: dict[int, set[str]] = {}
    for e in entries:
        here = fact_key(e.text)[:ID_CHARS]
        for i in range(e.line, e.end_line):  # the entry's lines after its first
            m = _SUPERSEDED_BY.match(lines[i])
            if not m:
                continue
            mark = lines[i].strip()
            owner = next((old for new, old in replaced.items() if new.startswith(m.group(1))), "")
            target = next((f for k, f in by_id.items() if owner and k.startswith(owner)), None)
            if target is None or target is e or here.startswith(owner):
                if mark in seen.setdefault(e.line, set()):  # the same mark twice: a merge's
                    removed.add(i)
                seen[e.line].add(mark)
                continue
            removed.add(i)
            if mark not in has[target.line]:  # else the fact has it already: only drop this
                has[target.line].add(mark)
                moved.setdefault(target.end_line - 1, []).append(lines[i])
    if not removed:
        return None
    out = []
    for i, line in enumerate(lines):
        if i not in removed:
            out.append(line)
        out.extend(moved.get(i, []))
    return "".join(out)


def rehome_superseded_in(path: Path, replaced: dict[str, str], within: tuple[Path, ...]) -> bool:
    """:func:`rehome_superseded` on a file, under its lock; whether it changed. ``within``:
    where the file must stay (:func:`memcli.notes.entries.locked_append`)."""
    with editing(path, within=within) as file:
        new = rehome_superseded(file.text, replaced)
        if new is None:
            return False
        file.replace(new)
        return True
