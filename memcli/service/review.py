"""The review: the facts that need a decision, each with the commands that settle it.

Functions over a workspace's :class:`~memcli.service.core.MemoryCore` (its files and index);
:meth:`memcli.memory.Memory.review` finishes a change left half done and syncs the index
first.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import memcli.index.factrows as factrows
from memcli.notes.entryparse import entry_fields, entry_id
from memcli.notes.lifecycle import Status, status_of
from memcli.notes.workspace import MEMORY_DIR
from memcli.service.core import MemoryCore


def _commands(ref: str | None) -> list[str]:
    """The commands that settle the fact ``ref``."""
    return [
        f"memcli confirm {ref}",
        f'memcli supersede {ref} "..."',
        f'memcli forget {ref} --reason "..."',
    ]


def needing_review(core: MemoryCore, today: date) -> list[dict[str, Any]]:
    """Facts under review (a conflict, an instruction-like fact), expired before ``today``,
    or naming a path that changed after them, in file and line order."""
    out: list[dict[str, Any]] = []
    for rel, line, text, state, expires, fact_id in factrows.chunks_needing_review(
        core.store.conn, today.isoformat()
    ):
        fields = next(iter(entry_fields(text)), None)
        body = fields[0] if fields else text
        st = status_of(fields[6]) if fields else Status()
        why = "expired " + (expires or "") if state != "review" else (st.reason or "review")
        out.append(
            {
                "id": fact_id,
                "path": rel,
                "line": line,
                "text": body,
                "state": state or "expired",
                "why": why,
                "commands": _commands(fact_id or f"{rel}:{line}"),
            }
        )
    out += instruction_like(core, {(item["path"], item["line"]) for item in out})
    out += stale_facts(core, {(item["path"], item["line"]) for item in out})
    return sorted(out, key=lambda item: (item["path"], item["line"]))


def instruction_like(core: MemoryCore, listed: set[tuple[str, int]]) -> list[dict[str, Any]]:
    """Facts of memory/ that read as instructions and were never settled, whoever wrote them
    (a flush marks its own for review; add, the MCP add tool and a person do not), except
    those in ``listed``."""
    from memcli.notes.instructions import unsettled

    root = core.ws.root
    memory = f"{MEMORY_DIR}/"
    texts = (
        (rel, (root / rel).read_text(encoding="utf-8", errors="replace"))
        for rel in sorted(core.store.file_states())
        if rel.startswith(memory) and (root / rel).is_file()
    )
    return [
        {
            "id": fact_id,
            "path": rel,
            "line": line,
            "text": body,
            "state": "review",
            "why": f"reads as an instruction ({phrase})",
            "commands": _commands(fact_id),
        }
        for rel, line, body, fact_id, phrase in unsettled(texts)
        if (rel, line) not in listed
    ]


def stale_facts(core: MemoryCore, listed: set[tuple[str, int]]) -> list[dict[str, Any]]:
    """Facts naming a repository path that changed after them (memcli.search.stale), except
    those in ``listed``."""
    from memcli.search.stale import stale_note

    out: list[dict[str, Any]] = []
    texts: dict[str, dict[int, str]] = {}
    for rel, line, path, changed, commit in factrows.stale_links(core.store.conn):
        if (rel, line) in listed:
            continue
        if rel not in texts:
            try:
                text = (core.ws.root / rel).read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            texts[rel] = {f[4]: f[0] for f in entry_fields(text)}
        body = texts[rel].get(line)
        if body is None:  # the file changed since it was indexed
            continue
        fact_id = entry_id(body)
        mark = {"path": path, "date": changed[:10], "commit": commit}
        out.append(
            {
                "id": fact_id,
                "path": rel,
                "line": line,
                "text": body,
                "state": "stale",
                "why": stale_note(mark),
                "commands": _commands(fact_id),
            }
        )
    return out
