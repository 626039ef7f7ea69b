"""Markdown-aware chunking with 1-based inclusive line ranges.

A file is cut into blocks (front matter, headings, paragraphs, list items,
fenced code, tables); blocks of one section are packed into chunks up to a
size target. Every non-blank line belongs to exactly one chunk.
"""

from __future__ import annotations

import re
from itertools import accumulate
from typing import NamedTuple

from memcli.notes.lines import split_lines

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t#]*$")
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


class _Block(NamedTuple):
    start: int  # 0-based index of first line
    end: int  # 0-based index of last line (inclusive)
    kind: str
    heading: str
    size: int


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
_HEADING_CHARS = "#"
_FENCE_CHARS = "`~"
_ITEM_CHARS = "-*+"


def _blocks(lines: list[str]) -> list[_Block]:
    blocks: list[_Block] = []
    stack: list[tuple[int, str]] = []
    crumb = ""
    # ends[k] = characters (newline included) of lines[0:k], so a block's size is a subtraction
    ends = list(accumulate([len(ln) + 1 for ln in lines], initial=0))
    # the first character of each line after leading spaces ('' for a line of spaces)
    leads = [ln.lstrip(" ")[:1] for ln in lines]

    def special(k: int) -> bool:
        """Whether line k is a heading or a fence (which end a paragraph or an item)."""
        c = leads[k]
        if c == "#":
            return _HEADING.match(lines[k]) is not None
        if c == "`" or c == "~":
            return _FENCE.match(lines[k]) is not None
        return False

    n = len(lines)
    i = 0
    fm = front_matter_end(lines)
    if fm > 0:
        blocks.append(_Block(0, fm, "front", crumb, ends[fm + 1]))
        i = fm + 1
    while i < n:
        line = lines[i]
        c = leads[i]
        if not c or line.isspace():
            i += 1
            continue
        if c in _FENCE_CHARS:
            fence = _FENCE.match(line)
            if fence:
                mark = fence.group(1)
                j = i + 1
                while j < n and not lines[j].lstrip().startswith(mark):
                    j += 1
                end = min(j, n - 1)
                blocks.append(_Block(i, end, "code", crumb, ends[end + 1] - ends[i]))
                i = end + 1
                continue
        elif c in _HEADING_CHARS:
            head = _HEADING.match(line)
            if head:
                level = len(head.group(1))
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, (head.group(2) or "").strip()))
                crumb = " > ".join(t for _, t in stack if t)
                blocks.append(_Block(i, i, "heading", crumb, ends[i + 1] - ends[i]))
                i += 1
                continue
        item = _ITEM.match(line) if (c in _ITEM_CHARS or c.isdigit()) else None
        j = i + 1
        if item:
            indent = len(item.group(1))
            while j < n:
                nxt = lines[j]
                d = leads[j]
                if not d or nxt.isspace():
                    break
                if d in _ITEM_CHARS or d.isdigit():
                    sub = _ITEM.match(nxt)
                    if sub and len(sub.group(1)) <= indent:
                        break
                elif special(j):
                    break
                j += 1
            blocks.append(_Block(i, j - 1, "item", crumb, ends[j] - ends[i]))
        else:
            while j < n:
                nxt = lines[j]
                d = leads[j]
                if not d or nxt.isspace():
                    break
                if d in _ITEM_CHARS or d.isdigit():
                    if _ITEM.match(nxt):
                        break
                elif special(j):
                    break
                j += 1
            blocks.append(_Block(i, j - 1, "para", crumb, ends[j] - ends[i]))
        i = j
    return blocks


def blocks(lines: list[str]) -> list[tuple[int, int, str, str]]:
    """Blocks of already-split lines as ``(start, end, kind, heading)``, 0-based inclusive.

    ``kind`` is one of front, heading, item, para, code; ``heading`` the breadcrumb.
    """
    return [(b.start, b.end, b.kind, b.heading) for b in _blocks(lines)]


def _split_large(block: _Block, lines: list[str], target: int) -> list[_Block]:
    """Cut a block larger than the target at line boundaries."""
    if block.size <= target or block.start == block.end:
        return [block]
    out: list[_Block] = []
    start, size = block.start, 0
    for k in range(block.start, block.end + 1):
        width = len(lines[k]) + 1
        if size and size + width > target:
            out.append(_Block(start, k - 1, block.kind, block.heading, size))
            start, size = k, 0
        size += width
    out.append(_Block(start, block.end, block.kind, block.heading, size))
    return out


def chunk_lines(lines: list[str], target: int = 320) -> list[Chunk]:
    """Chunk already-split lines; see :func:`chunk_markdown`."""
    chunks: list[Chunk] = []
    first: _Block | None = None  # first and last block of the chunk being packed
    prev: _Block | None = None
    size = 0

    for block in _blocks(lines):
        pieces = (block,) if block.size <= target else _split_large(block, lines, target)
        for piece in pieces:
            if prev is not None and first is not None:  # both set or both None
                same_section = piece.heading == prev.heading and piece.kind != "heading"
                packable = piece.kind != "front" and prev.kind != "front"
                if not (same_section and packable and size + piece.size <= target) and not (
                    prev.kind == "heading" and piece.heading == prev.heading
                ):
                    text = "\n".join(lines[first.start : prev.end + 1])
                    chunks.append(Chunk(first.start + 1, prev.end + 1, first.heading, text))
                    first, size = None, 0
            if first is None:
                first = piece
            prev = piece
            size += piece.size
    if first is not None and prev is not None:
        text = "\n".join(lines[first.start : prev.end + 1])
        chunks.append(Chunk(first.start + 1, prev.end + 1, first.heading, text))
    return chunks


def chunk_markdown(text: str, target: int = 320) -> list[Chunk]:
    """Cut Markdown into chunks of about ``target`` characters.

    A heading line opens the first chunk of its section, so every non-blank
    line is covered; whole paragraphs and list items are packed together and
    only a block larger than the target is cut between lines.
    """
    return chunk_lines(split_lines(text), target)
