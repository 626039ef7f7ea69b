"""Markdown-aware chunking with 1-based inclusive line ranges.

A file is cut into blocks (front matter, headings, paragraphs, list items,
fenced code, tables); blocks of one section are packed into chunks up to a
size target. Every non-blank line belongs to exactly one chunk.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import accumulate
from typing import NamedTuple

from memcli.notes.lines import split_lines

#: A heading: its text runs to its last character other than a blank or '#' (possessive
#: steps, each ending at such a character: a lazy text tried the closing run from every
#: character of a line such as "# # # ... x", a pass of the line per character).
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+((?:[ \t#]*+[^ \t#\n])*+))?[ \t#]*$")
_ITEM = re.compile(r"^( {0,3})(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_FRONT_START = re.compile(r"\s*---")  # what a first line of "---" (stripped) starts with
_DATE = re.compile(r"^date:\s*['\"]?(\d{4}-\d{2}-\d{2})", re.MULTILINE)

CHUNKER_VERSION = 2


class Chunk(NamedTuple):
    """A run of lines ``start_line..end_line`` under a heading breadcrumb."""

    start_line: int
    end_line: int
    heading: str
    text: str


#: A block: ``(start, end, kind, heading, size)``, lines 0-based and inclusive, ``size`` in
#: characters with the newlines (a plain tuple: made for every paragraph of every file).
_Block = tuple[int, int, str, str, int]


def front_matter_end(lines: list[str]) -> int:
    """Index of the closing ``---`` of YAML front matter, or -1."""
    if not lines or lines[0].strip() != "---":
        return -1
    for i in range(1, min(len(lines), 200)):
        if lines[i].strip() in ("---", "..."):
            return i
    return -1


def front_matter_date(text: str) -> str | None:
    """The ``date:`` of the front matter, if any."""
    if not _FRONT_START.match(text):  # most notes have none: no need to split lines
        return None
    lines = text[:8192].splitlines()
    end = front_matter_end(lines)
    if end < 0:
        return None
    m = _DATE.search("\n".join(lines[1:end]))
    return m.group(1) if m else None


# First non-space characters that can open a heading, a fence or a list item; a line
# starting with anything else is tested against none of the (slower) patterns.
_FENCE_CHARS = "`~"
_ITEM_CHARS = "-*+"
_SPECIAL_CHARS = "#`~"  # a heading's or a fence's


def _blocks(lines: list[str]) -> list[_Block]:
    blocks: list[_Block] = []
    stack: list[tuple[int, str]] = []
    crumb = ""
    # ends[k] = characters (newline included) of lines[0:k], so a block's size is a subtraction
    ends = list(accumulate([len(ln) + 1 for ln in lines], initial=0))
    # the first character of each line after leading spaces ('' for a line of spaces)
    leads = [ln.lstrip(" ")[:1] for ln in lines]
    heading_match = _HEADING.match
    fence_match = _FENCE.match
    item_match = _ITEM.match

    def special(k: int) -> bool:
        """Whether line k (whose first character is one of ``_SPECIAL_CHARS``) is a heading
        or a fence (which end a paragraph or an item)."""
        if leads[k] == "#":
            return heading_match(lines[k]) is not None
        return fence_match(lines[k]) is not None

    n = len(lines)
    i = 0
    fm = front_matter_end(lines)
    if fm > 0:
        blocks.append((0, fm, "front", crumb, ends[fm + 1]))
        i = fm + 1
    while i < n:
        line = lines[i]
        c = leads[i]
        if not c or line.isspace():
            i += 1
            continue
        if c in _FENCE_CHARS:
            fence = fence_match(line)
            if fence:
                mark = fence.group(1)
                j = i + 1
                while j < n and not lines[j].lstrip().startswith(mark):
                    j += 1
                end = min(j, n - 1)
                blocks.append((i, end, "code", crumb, ends[end + 1] - ends[i]))
                i = end + 1
                continue
        elif c == "#":
            head = heading_match(line)
            if head:
                level = len(head.group(1))
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, (head.group(2) or "").strip()))
                crumb = " > ".join(t for _, t in stack if t)
                blocks.append((i, i, "heading", crumb, ends[i + 1] - ends[i]))
                i += 1
                continue
        item = item_match(line) if (c in _ITEM_CHARS or c.isdigit()) else None
        j = i + 1
        if item:
            indent = len(item.group(1))
            while j < n:
                d = leads[j]
                if not d or lines[j].isspace():
                    break
                if d in _ITEM_CHARS or d.isdigit():
                    sub = item_match(lines[j])
                    if sub and len(sub.group(1)) <= indent:
                        break
                elif d in _SPECIAL_CHARS and special(j):
                    break
                j += 1
            blocks.append((i, j - 1, "item", crumb, ends[j] - ends[i]))
        else:
            while j < n:
                d = leads[j]
                if not d or lines[j].isspace():
                    break
                if d in _ITEM_CHARS or d.isdigit():
                    if item_match(lines[j]):
                        break
                elif d in _SPECIAL_CHARS and special(j):
                    break
                j += 1
            blocks.append((i, j - 1, "para", crumb, ends[j] - ends[i]))
        i = j
    return blocks


def blocks(lines: list[str]) -> list[tuple[int, int, str, str]]:
    """Blocks of already-split lines as ``(start, end, kind, heading)``, 0-based inclusive.

    ``kind`` is one of front, heading, item, para, code; ``heading`` the breadcrumb.
    """
    return [b[:4] for b in _blocks(lines)]


def _split_large(block: _Block, lines: list[str], target: int) -> list[_Block]:
    """Cut a block larger than the target at line boundaries."""
    first, last, kind, heading, _ = block
    out: list[_Block] = []
    start, size = first, 0
    for k in range(first, last + 1):
        width = len(lines[k]) + 1
        if size and size + width > target:
            out.append((start, k - 1, kind, heading, size))
            start, size = k, 0
        size += width
    out.append((start, last, kind, heading, size))
    return out


def chunk_rows(lines: list[str], target: int = 320) -> list[tuple[int, int, str, str]]:
    """:func:`chunk_lines` as plain tuples ``(start_line, end_line, heading, text)``."""
    chunks: list[tuple[int, int, str, str]] = []
    join = "\n".join
    first = -1  # first line of the chunk being packed (-1: none yet)
    heading = ""  # its heading
    # the last block packed: its end line, kind and heading
    prev_end, prev_kind, prev_heading = -1, "", ""
    size = 0
    for block in _blocks(lines):
        if block[4] > target and block[0] != block[1]:
            pieces: Sequence[_Block] = _split_large(block, lines, target)
        else:
            pieces = (block,)
        for start, end, kind, crumb, width in pieces:
            if first >= 0 and not (
                (
                    crumb == prev_heading
                    and kind != "heading"
                    and kind != "front"
                    and prev_kind != "front"
                    and size + width <= target
                )
                or (prev_kind == "heading" and crumb == prev_heading)
            ):
                chunks.append((first + 1, prev_end + 1, heading, join(lines[first : prev_end + 1])))
                first, size = -1, 0
            if first < 0:
                first, heading = start, crumb
            prev_end, prev_kind, prev_heading = end, kind, crumb
            size += width
    if first >= 0:
        chunks.append((first + 1, prev_end + 1, heading, join(lines[first : prev_end + 1])))
    return chunks


def chunk_lines(lines: list[str], target: int = 320) -> list[Chunk]:
    """Chunk already-split lines; see :func:`chunk_markdown`."""
    return [Chunk(*row) for row in chunk_rows(lines, target)]


def chunk_markdown(text: str, target: int = 320) -> list[Chunk]:
    """Cut Markdown into chunks of about ``target`` characters.

    A heading line opens the first chunk of its section, so every non-blank
    line is covered; whole paragraphs and list items are packed together and
    only a block larger than the target is cut between lines.
    """
    return chunk_lines(split_lines(text), target)
