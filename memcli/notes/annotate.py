"""Writing status lines under a fact in its file (:mod:`memcli.notes.lifecycle`), in place."""

from __future__ import annotations

import re
from pathlib import Path

from memcli.errors import BadInput
from memcli.notes.entries import editing, fact_key, parse_entries
from memcli.notes.lifecycle import ID_CHARS

_STAMP = re.compile(r"^([-*+] (?:\d{1,2}:\d{2} )?(?:\[[\w\-]+\] )?)")


def annotate(
    path: Path,
    fact_id: str,
    marks: list[str],
    *,
    purge: bool = False,
    once: bool = False,
    writers: Path | None = None,
) -> bool:
    """Write ``marks`` (status lines) under the fact ``fact_id`` in ``path``, found again
    under the lock; ``purge``: its text becomes ``(forgotten)`` first; ``once``: a mark the
    fact already has is not written again. BadInput when the fact is no longer there.
    Returns whether anything was written. ``writers``: the workspace's writers lock
    (:func:`memcli.notes.entries.locked_append`)."""
    with editing(path, writers) as file:
        entry = next(
            (e for e in parse_entries(file.text) if fact_key(e.text)[:ID_CHARS] == fact_id), None
        )
        if entry is None:
            raise BadInput(f"fact {fact_id} is no longer in {path.name}; try again")
        lines = file.text.splitlines(keepends=True)
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        at = entry.end_line
        if purge:
            stamp = _STAMP.match(lines[entry.line - 1])
            body_end = entry.end_line - len(entry.status)
            lines[entry.line - 1 : body_end] = [f"{stamp.group(1) if stamp else '- '}(forgotten)\n"]
            at = entry.line + len(entry.status)
        if once:
            marks = [m for m in marks if m.rstrip("\n") not in {s.rstrip() for s in entry.status}]
        if not marks and not purge:
            return False
        lines[at:at] = marks
        file.replace("".join(lines))
        return True
