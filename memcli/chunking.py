"""Markdown-aware chunking with 1-based inclusive line ranges.

A file is cut into blocks (front matter, headings, paragraphs, list items,
fenced code, tables); blocks of one section are packed into chunks up to a
size target. Every non-blank line belongs to exactly one chunk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t#]*$")
_ITEM = re.compile(r"^( {0,3})(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_DATE = re.compile(r"^date:\s*['\"]?(\d{4}-\d{2}-\d{2})", re.MULTILINE)

CHUNKER_VERSION = 2


@dataclass(frozen=True)
class Chunk:
    """A run of lines ``start_line..end_line`` under a heading breadcrumb."""

    start_line: int
    end_line: int
    heading: str
    text: str


@dataclass(frozen=True)
class _Block:
    start: int  # 0-based index of first line
    end: int  # 0-based index of last line (inclusive)
    kind: str
    heading: str
    size: int


def split_lines(text: str) -> list[str]:
    """Lines as editors and ``get`` number them: split at ``\\n``, ``\\r`` dropped."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


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
    lines = text[:8192].splitlines()
    end = front_matter_end(lines)
    if end < 0:
        return None
    m = _DATE.search("\n".join(lines[1:end]))
    return m.group(1) if m else None


def _blocks(lines: list[str]) -> list[_Block]:
    blocks: list[_Block] = []
    stack: list[tuple[int, str]] = []

    def crumb() -> str:
        return " > ".join(t for _, t in stack if t)

    def add(start: int, end: int, kind: str) -> None:
        size = sum(len(lines[k]) + 1 for k in range(start, end + 1))
        blocks.append(_Block(start, end, kind, crumb(), size))

    n = len(lines)
    i = 0
    fm = front_matter_end(lines)
    if fm > 0:
        add(0, fm, "front")
        i = fm + 1
    while i < n:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        fence = _FENCE.match(line)
        if fence:
            mark = fence.group(1)
            j = i + 1
            while j < n and not lines[j].lstrip().startswith(mark):
                j += 1
            end = min(j, n - 1)
            add(i, end, "code")
            i = end + 1
            continue
        head = _HEADING.match(line)
        if head:
            level = len(head.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, (head.group(2) or "").strip()))
            add(i, i, "heading")
            i += 1
            continue
        item = _ITEM.match(line)
        if item:
            indent = len(item.group(1))
            j = i + 1
            while j < n and lines[j].strip():
                nxt = lines[j]
                sub = _ITEM.match(nxt)
                if sub and len(sub.group(1)) <= indent:
                    break
                if _HEADING.match(nxt) or _FENCE.match(nxt):
                    break
                j += 1
            add(i, j - 1, "item")
            i = j
            continue
        j = i + 1
        while j < n and lines[j].strip():
            nxt = lines[j]
            if _HEADING.match(nxt) or _FENCE.match(nxt) or _ITEM.match(nxt):
                break
            j += 1
        add(i, j - 1, "para")
        i = j
    return blocks


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
    pieces: list[_Block] = []
    for block in _blocks(lines):
        pieces.extend(_split_large(block, lines, target))
    chunks: list[Chunk] = []
    cur: list[_Block] = []

    def flush() -> None:
        if cur:
            first, last = cur[0], cur[-1]
            text = "\n".join(lines[first.start : last.end + 1])
            chunks.append(Chunk(first.start + 1, last.end + 1, first.heading, text))
            cur.clear()

    for piece in pieces:
        if cur:
            prev = cur[-1]
            size = sum(b.size for b in cur)
            same_section = piece.heading == prev.heading and piece.kind != "heading"
            packable = piece.kind not in ("front",) and prev.kind != "front"
            if not (same_section and packable and size + piece.size <= target):
                if not (prev.kind == "heading" and piece.heading == prev.heading):
                    flush()
        cur.append(piece)
    flush()
    return chunks


def chunk_markdown(text: str, target: int = 320) -> list[Chunk]:
    """Cut Markdown into chunks of about ``target`` characters.

    A heading line opens the first chunk of its section, so every non-blank
    line is covered; whole paragraphs and list items are packed together and
    only a block larger than the target is cut between lines.
    """
    return chunk_lines(split_lines(text), target)
