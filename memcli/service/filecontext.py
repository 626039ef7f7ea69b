"""Recall when a file is touched: the facts linked to a repository file, as a context block."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import memcli.index.factrows as factrows
import memcli.service.indexing as indexing
from memcli.notes.workspace import find_git_root
from memcli.service.core import MemoryCore

if TYPE_CHECKING:
    from collections.abc import Callable

    from memcli.flush.given import Given
    from memcli.search.context import ContextBlock

__all__ = ["file_context", "repo_path", "touched_blocks", "touched_context"]


def repo_path(top: Path, path: str | Path, cwd: Path | None = None) -> str | None:
    """``path`` (absolute, or relative to ``cwd``) as a path of the repository at ``top``,
    POSIX; None when it lies outside. An agent may name the repository through a link to it
    (``/tmp`` for ``/private/tmp``): a path outside ``top`` as written is taken with its
    links resolved, and with those of ``top`` (no file is read)."""
    raw = Path(path)
    full = raw if raw.is_absolute() else (cwd or top) / raw
    rel = _inside(os.path.normpath(full), os.path.normpath(top))
    if rel is None:
        rel = _inside(os.path.realpath(full), os.path.realpath(top))
    return rel


def _inside(full: str, top: str) -> str | None:
    rel = os.path.relpath(full, top)
    if rel == "." or rel.startswith(".."):
        return None
    return Path(rel).as_posix()


def _held_by(rel: str) -> list[str]:
    """``rel`` and each folder holding it: ``a/b/c.py``, ``a/b``, ``a``."""
    parts = rel.split("/")
    return ["/".join(parts[:i]) for i in range(len(parts), 0, -1)]


def file_context(
    core: MemoryCore,
    path: str | Path,
    *,
    session: str | None = None,
    cwd: Path | None = None,
    max_tokens: int | None = None,
    record: bool = True,
) -> ContextBlock | None:
    """The facts linked to the repository file ``path`` (or a folder holding it) as a
    context block framed like recall (:func:`memcli.search.context.render`), at most
    ``agent.recall_limit`` entries; None when none is linked or all were given in
    ``session`` already (:mod:`memcli.flush.given`). ``record``: the entries the block
    quotes are recorded as given to ``session``; False leaves that to the caller once the
    block is delivered. Reads the index only: no git."""
    given = _given(core, session)
    block = _block(core, path, cwd, max_tokens, given.has if given is not None else None)
    if record and given is not None and block is not None:
        given.add(block.quoted)
    return block


def touched_blocks(
    core: MemoryCore,
    paths: list[str],
    *,
    session: str | None = None,
    cwd: Path | None = None,
    record: bool = True,
) -> list[ContextBlock]:
    """The context blocks (:func:`file_context`) of the files one tool call read or edited
    that have a fact to give, an entry given to ``session`` in none of them twice.
    ``record``: the entries they quote are recorded as given to ``session``; False leaves
    that to the caller once the blocks are delivered (the engine: the hook that asked may
    have stopped waiting)."""
    from memcli.flush.given import digest  # (a small module)

    given = _given(core, session)
    quoted: set[str] = set()  # what the blocks before quoted, not recorded yet

    def given_already(text: str) -> bool:
        return given is not None and (given.has(text) or digest(text) in quoted)

    blocks = []
    for path in paths:
        block = _block(core, path, cwd, None, given_already if given is not None else None)
        if block is not None:
            blocks.append(block)
            quoted.update(map(digest, block.quoted))
    if record and given is not None and blocks:
        given.add([text for block in blocks for text in block.quoted])
    return blocks


def touched_context(
    core: MemoryCore, paths: list[str], *, session: str | None = None, cwd: Path | None = None
) -> str:
    """The text of :func:`touched_blocks`, one after another (recorded as given to
    ``session``); "" when no file has a fact to give."""
    return "\n".join(b.text for b in touched_blocks(core, paths, session=session, cwd=cwd))


def _given(core: MemoryCore, session: str | None) -> Given | None:
    """The record of what ``session`` was given (None: no session)."""
    if not session:
        return None
    from memcli.flush.given import Given, given_folder  # a session's record only

    return Given(given_folder(core.ws.root), session)


def _block(
    core: MemoryCore,
    path: str | Path,
    cwd: Path | None,
    max_tokens: int | None,
    skip: Callable[[str], bool] | None,
) -> ContextBlock | None:
    """The block of :func:`file_context`, without the entries ``skip`` holds true for."""
    top = find_git_root(core.ws.root)
    rel = repo_path(top, path, cwd) if top is not None else None
    budget = int(core.settings.get("agent.recall_tokens") if max_tokens is None else max_tokens)
    if rel is None or budget <= 0:
        return None
    indexing.sync_before_search(core)
    limit = int(core.settings.get("agent.recall_limit"))
    today = date.today().isoformat()  # an expired fact is not given, as a search hides it
    found = factrows.linked_facts(core.store.conn, _held_by(rel), 4 * limit, today)
    quotes = _linked_quotes(core, found)
    if not quotes:
        return None
    from memcli.notes.controls import strip_controls  # with the block only
    from memcli.search.context import render
    from memcli.search.stale import shown_path

    fresh = [q for q in quotes if skip is None or not skip(strip_controls(q.snippet))]
    fresh = fresh[:limit]
    title = f"Memory about `{shown_path(rel)}`"
    block = render(rel, fresh, budget, title=title, matches_only=True)
    return block if block.included else None


def _linked_quotes(core: MemoryCore, found: list[tuple[str, int]]) -> list[Any]:
    """Each (memory file, line) as the entry it starts, redacted, with its stale mark."""
    from memcli.notes.entryparse import entry_fields
    from memcli.notes.lines import split_lines
    from memcli.notes.redact import redact_lines
    from memcli.search.context import Quote
    from memcli.search.stale import stale_mark

    quotes = []
    texts: dict[str, str] = {}
    for rel, line in found:
        if rel not in texts:
            try:
                texts[rel] = (core.ws.root / rel).read_text(encoding="utf-8", errors="replace")
            except OSError:
                texts[rel] = ""
        lines = split_lines(texts[rel])
        end = next((f[5] for f in entry_fields(texts[rel]) if f[4] == line), None)
        if end is None:  # the file changed since it was indexed
            continue
        snippet = redact_lines("\n".join(lines[line - 1 : end])).text
        mark = stale_mark(core.store.conn, rel, line, line)
        quotes.append(Quote(rel, line, end, snippet, mark))
    return quotes
