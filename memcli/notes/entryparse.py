"""Reading entries out of Markdown, and a fact's identity: what searches need, kept light.

The indexer, a search that shows fact ids and :mod:`memcli.notes.entries` (which adds the
``Entry`` objects and writing) all parse with :func:`entry_fields`; nothing here imports
``dataclasses`` (a search does not load it).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memcli.digest import sha1_hex
from memcli.notes.lifecycle import ID_CHARS, STATUS_LINE, owner_of
from memcli.notes.lines import split_lines

_ENTRY = re.compile(r"^[-*+] (?:(\d{1,2}:\d{2}) )?(?:\[([\w\-]+)\] )?(.*)$")
_TAG = re.compile(r"^#([\w][\w\-/]*)$")
_FENCES = ("```", "~~~")
_INDENTS = ("  ", "\t")


Fields = tuple[str, str | None, tuple[str, ...], str | None, int, int, tuple[str, ...]]


def entry_fields(text: str) -> Iterator[Fields]:
    """What :func:`parse_entries` finds, as plain tuples ``(text, type, tags, time, line,
    end_line, status_lines)``: the indexer's fast path, which needs no :class:`Entry`
    objects. ``end_line`` counts the status lines under the item in; ``status_lines`` are
    the ones that count for it (:func:`_owned`: a line naming another fact of the file is
    that fact's)."""
    rows = _fields(text)
    return iter(_owned(list(rows))) if "(" in text else rows


def _owned(rows: list[Fields]) -> list[Fields]:
    """Each status line with the fact it names (``(3f2a9c1b)``, :func:`owner_of`): git's
    union merge of two clones' appends can leave a line written under the last fact of one
    side under the other side's new fact. A line naming a fact of this file counts for that
    fact; one naming none (a fact edited since, or purged) stays with the fact it is under."""
    named = [
        (i, line, owner)
        for i, row in enumerate(rows)
        for line in row[6]
        if (owner := owner_of(line)) is not None
    ]
    if not named:
        return rows
    ids = [fact_key(row[0])[:ID_CHARS] for row in rows]
    first: dict[str, int] = {}
    for i, fid in enumerate(ids):
        first.setdefault(fid, i)
    status = [list(row[6]) for row in rows]
    for i, line, owner in named:
        j = first.get(owner)
        if j is not None and ids[i] != owner:
            status[i].remove(line)
            status[j].append(line)
    return [(*row[:6], tuple(status[i])) for i, row in enumerate(rows)]


def _fields(text: str) -> Iterator[Fields]:
    """:func:`entry_fields`, with each status line under the item it stands under."""
    lines = split_lines(text)
    n = len(lines)
    i = 0
    in_fence = False
    no_status: tuple[str, ...] = ()
    entry = _ENTRY.match
    while i < n:
        line = lines[i]
        c = line[:1]
        if c != "-" and c != "*" and c != "+":
            # not an item; only a line opening with ``` or ~~~ (after any indent) matters
            if (c == "`" or c == "~" or c.isspace()) and line.lstrip().startswith(_FENCES):
                in_fence = not in_fence
            i += 1
            continue
        m = None if in_fence else entry(line)
        i += 1
        if not m:
            continue
        line_no = i
        last = m.group(3)
        body: list[str] | None = None  # the lines before the last, when there are several
        status: list[str] | None = None
        while i < n:
            nxt = lines[i]
            if not nxt.startswith(_INDENTS) or nxt.isspace():
                break
            if nxt.lstrip()[:2] in _ITEM_MARKS and STATUS_LINE.match(nxt):
                if status is None:
                    status = [nxt]
                else:
                    status.append(nxt)
            else:
                if body is None:
                    body = [last]
                else:
                    body.append(last)
                last = nxt.strip()
            i += 1
        tags: tuple[str, ...] = ()
        if "#" in last:
            start = _tags_start(last)
            if start >= 0:
                tags = tuple(word[1:] for word in last[start:].split(" "))
                last = last[:start]
        last = last.rstrip()
        if body is None:
            fact = last
        else:
            body.append(last)
            fact = "\n".join(filter(None, body))
        yield (
            fact,
            m.group(2),
            tags,
            m.group(1),
            line_no,
            i,
            no_status if status is None else tuple(status),
        )


_ITEM_MARKS = ("- ", "* ", "+ ")
#: One tag word, ``#word`` (:data:`_TAG`), matched within a line's bounds.
_TAG_WORD = re.compile(r"#[\w][\w\-/]*")


def _tags_start(line: str) -> int:
    """Where the tags that end ``line`` start (``#word`` words, each after a single space or
    at the start, up to the end of the line), or -1. Read word by word from the end, so a
    long line costs one pass (a pattern searched from every ``#`` cost a pass per ``#``)."""
    start = -1
    end = len(line)
    while True:
        space = line.rfind(" ", 0, end)
        if not _TAG_WORD.fullmatch(line, space + 1, end):
            return start
        start = space + 1
        if space < 0:
            return start
        end = space


def plain_entry(passage: str) -> str:
    """An entry's kind and words, as a model reads them best: ``decision: text`` for
    ``- 10:00 [decision] text #tag``, without the list mark, the time and the tags that end
    its first line; its other lines as they are; any other text as it is."""
    kind, words = _kind_and_words(passage)
    return f"{kind}: {words}" if kind else words


def entry_words(passage: str) -> str:
    """An entry's own words: :func:`plain_entry` without its kind."""
    return _kind_and_words(passage)[1]


def _kind_and_words(passage: str) -> tuple[str | None, str]:
    first, nl, rest = passage.strip().partition("\n")
    m = _ENTRY.match(first)
    if m is None:
        return None, passage.strip()
    _, kind, body = m.groups()
    tags = _tags_start(body)
    body = body[:tags].rstrip() if tags > 0 else body
    return kind, body + nl + rest


#: Characters that do not show: a fact holding one is the same fact without it.
_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060\ufeff"))


def fact_key(text: str) -> str:
    """Identity of a fact for duplicate checks: case, spacing, Unicode normal form (NFKC:
    ``café`` composed or not, full-width letters) and invisible characters (zero-width space,
    soft hyphen...) do not matter."""
    if not text.isascii():
        import unicodedata  # only text beyond ASCII has forms to fold

        text = unicodedata.normalize("NFKC", text).translate(_INVISIBLE)
    # str.split() and the regex \s agree on what whitespace is (both use str.isspace)
    norm = " ".join(text.split()).lower().rstrip(".!")
    return sha1_hex(norm.encode("utf-8"))


def entry_id(text: str) -> str:
    """The short id of the fact ``text``."""
    return fact_key(text)[:ID_CHARS]


def entry_marks(text: str, today: str) -> tuple[list[str], list[str]]:
    """The ids of the entries in ``text`` (a snippet, a file), in order, and the state
    each one's status lines give it on ``today`` (YYYY-MM-DD): active, superseded..."""
    from datetime import date

    from memcli.notes.lifecycle import ACTIVE, status_of

    ids: list[str] = []
    states: list[str] = []
    for body, *_, status in entry_fields(text):
        ids.append(fact_key(body)[:ID_CHARS])
        states.append(status_of(status).state_on(date.fromisoformat(today)) if status else ACTIVE)
    return ids, states
