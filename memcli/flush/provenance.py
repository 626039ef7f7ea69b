"""Writing facts under the provenance heading ``## HH:MM flush · conversation <hash8>``.

The heading names the conversation, so it also makes a flush idempotent: a conversation whose
heading is already in a memory file was flushed before. Facts go to a dated file under
``memory/`` only, never ``MEMORY.md``, with one locked write
(:func:`memcli.notes.entries.appending`) that re-checks what a racing writer added.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from memcli.errors import BadInput
from memcli.flush.facts import Fact, FactOutcome, FlushResult
from memcli.notes import entries
from memcli.notes.workspace import EVERGREEN_FILE, Workspace

_HEADING_RE = entries.FLUSH_HEADING


def heading_for(when: datetime, hash8: str) -> str:
    """The provenance heading of a flush of conversation ``hash8`` at ``when``."""
    return f"## {when.strftime('%H:%M')} flush · conversation {hash8}"


def find_flushed(memory_dir: Path, hash8: str, root: Path) -> str | None:
    """``path:line`` of a flush heading for conversation ``hash8`` in any memory file."""
    if not memory_dir.is_dir():
        return None
    needle = hash8.encode("ascii")
    for path in sorted(memory_dir.rglob("*.md")):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if needle not in data:
            continue
        where = heading_line(data.decode("utf-8", errors="replace"), hash8)
        if where:
            try:
                rel = path.relative_to(root).as_posix()
            except ValueError:
                rel = path.as_posix()
            return f"{rel}:{where}"
    return None


def heading_line(text: str, hash8: str) -> int | None:
    """The line of the flush heading for conversation ``hash8`` in ``text``, if any."""
    for m in _HEADING_RE.finditer(text):
        if m.group(1) == hash8:
            return text.count("\n", 0, m.start()) + 1
    return None


def check_target(ws: Workspace, target: Path) -> None:
    """The target must be a dated file under memory/ and never MEMORY.md."""
    memory_root = ws.memory_dir.resolve()
    if target.name == EVERGREEN_FILE or memory_root not in target.resolve().parents:
        raise BadInput(f"flush cannot write to {target}", hint="flush writes dated files only")
    if target.exists() and not target.is_file():
        raise BadInput(f"{ws.rel(target)} is not a file")


def append_facts(
    ws: Workspace,
    target: Path,
    now: datetime,
    heading: str,
    keep: list[FactOutcome],
    result: FlushResult,
) -> list[FactOutcome]:
    """One locked write of the heading and the facts; re-checks what a racing writer added.

    Returns the facts written (their ``line`` set) and records them, and any fact a racing
    writer added meanwhile, in ``result``.
    """
    rel = ws.rel(target)
    with entries.appending(target, ws.writers_lock, within=ws.memory_bounds) as file:
        existing = file.text
        line = heading_line(existing, result.conversation)
        if line:
            flushed_meanwhile(result, f"{rel}:{line}", [o.fact for o in keep])
            return []
        present = {entries.fact_key(e.text): e.line for e in entries.parse_entries(existing)}
        final: list[FactOutcome] = []
        for o in keep:
            at = present.get(entries.fact_key(o.fact.text))
            if at:
                o.reason, o.duplicate_of = "duplicate", f"{rel}:{at}"
                result.skipped.append(o)
            else:
                final.append(o)
        if not final:
            result.message = "every fact was added meanwhile; nothing written"
            return []
        if not existing.strip():
            prefix = entries.day_title(now.date())
        else:
            base = existing if existing.endswith("\n") else existing + "\n"
            prefix = "" if base.endswith("\n\n") else "\n"
        block = f"{prefix}{heading}\n\n"
        number = file.next_line - 1 + block.count("\n")  # lines before the first entry
        for o in final:
            entry = entries.format_entry(
                o.fact.text, o.fact.type, o.fact.tags, now.strftime("%H:%M")
            )
            entry += "".join(o.status)  # status lines of a reconciled fact (update, review...)
            o.line = number + 1
            number += entry.count("\n")
            block += entry
        file.write(block)
    result.written = final
    result.message = summary(len(final), len(result.skipped), rel, dry_run=False)
    return final


def flushed_meanwhile(result: FlushResult, where: str, facts: list[Fact]) -> None:
    """Record that another flush of this conversation finished first (at ``where``)."""
    result.already_flushed = where
    result.skipped.extend(FactOutcome(f, reason="duplicate", duplicate_of=where) for f in facts)
    result.message = (
        f"conversation {result.conversation} was flushed meanwhile ({where}); nothing written"
    )


def summary(n_written: int, n_skipped: int, rel: str, *, dry_run: bool) -> str:
    """The one-line message of a flush that wrote (or would write) facts."""
    verb = "would write" if dry_run else "wrote"
    text = f"{verb} {n_written} fact{'s' if n_written != 1 else ''} to {rel}"
    if n_skipped:
        text += f" ({n_skipped} skipped)"
    return text
