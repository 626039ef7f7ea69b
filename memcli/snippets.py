"""Passages and snippets: the few lines of a file that answer a query.

A file is cut into *passages* with the chunker's block parser: a list item with its
continuation lines, a paragraph, a fenced code block, the front matter. Headings are not
passages; they separate *sections*. List items and code blocks are never cut; a paragraph
longer than ``max_chars`` is split between lines so that a long prose file still yields
precise passages.

Search ranks passages (:mod:`memcli.ranking`); a result's snippet is its passage plus up to
``context`` passages after and before it in the same section, added only while the snippet
stays within ``max_chars``. A passage whose window touches a result already taken is merged
into that result, so results never repeat a line and neighbouring matches read as one block.

The text is the index's copy of each file (assembled from its chunks), so snippets agree
with the line numbers the index reports even if the file changed since.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from memcli.chunking import blocks
from memcli.store import Store

#: Default character cap of a snippet (context is added only within it).
MAX_CHARS = 600


@dataclass(frozen=True)
class Passage:
    """A block of a file: lines ``start``..``end`` (1-based, inclusive)."""

    path: str
    index: int  # position in the file's passage list
    start: int
    end: int
    kind: str  # item, para, code, front
    section: int  # passages of one section share it; a heading starts a new one
    heading: str


class FileText:
    """Lines and passages of indexed files, as the index holds them.

    Files are read from the index once per content hash: a process that runs many searches
    (``search --batch``) parses each file once.
    """

    def __init__(self, store: Store, max_chars: int = MAX_CHARS) -> None:
        self.store = store
        self.max_chars = max_chars
        self._lines: dict[str, list[str]] = {}
        self._passages: dict[str, list[Passage]] = {}

    def load(self, paths: Iterable[str]) -> None:
        """Read the lines of these files from the index (a few queries for all)."""
        want = [p for p in dict.fromkeys(paths) if p not in self._lines]
        conn = self.store.conn
        db = str(self.store.path)
        for start in range(0, len(want), 400):
            part = want[start : start + 400]
            marks = ",".join("?" * len(part))
            hashes = dict(
                conn.execute(f"SELECT path, sha256 FROM files WHERE path IN ({marks})", part)
            )
            missing = []
            for path in part:
                hit = _CACHE.get((db, path))
                if hit is not None and hit[0] == hashes.get(path):
                    _CACHE.move_to_end((db, path))
                    self._lines[path] = hit[1]
                else:
                    missing.append(path)
            if not missing:
                continue
            rows = conn.execute(
                "SELECT f.path, c.start_line, t.text FROM chunks c"
                " JOIN files f ON f.id = c.file_id JOIN chunks_fts t ON t.rowid = c.id"
                f" WHERE f.path IN ({','.join('?' * len(missing))})",
                missing,
            )
            pieces: dict[str, list[tuple[int, str]]] = {p: [] for p in missing}
            for path, first, text in rows:
                pieces[path].append((int(first), text))
            for path, chunks in pieces.items():
                lines = _assemble(chunks)
                self._lines[path] = lines
                _CACHE[(db, path)] = (hashes.get(path), lines, {})
                while len(_CACHE) > _CACHE_FILES:
                    _CACHE.popitem(last=False)

    def lines(self, path: str) -> list[str]:
        if path not in self._lines:
            self.load([path])
        return self._lines.get(path, [])

    def passages(self, path: str) -> list[Passage]:
        found = self._passages.get(path)
        if found is None:
            lines = self.lines(path)
            cached = _CACHE.get((str(self.store.path), path))
            memo = cached[2] if cached is not None and cached[1] is lines else {}
            found = memo.get(self.max_chars)
            if found is None:
                found = split_passages(path, lines, self.max_chars)
                memo[self.max_chars] = found
            self._passages[path] = found
        return found

    def text(self, path: str, start: int, end: int) -> str:
        """Lines ``start``..``end`` (1-based, inclusive) joined by newlines."""
        return "\n".join(self.lines(path)[start - 1 : end])

    def passage_text(self, p: Passage) -> str:
        return self.text(p.path, p.start, p.end)


#: (index path, file path) -> (sha256, lines, {max_chars: passages}), least recent first.
_CACHE: OrderedDict[tuple[str, str], tuple[str | None, list[str], dict[int, list[Passage]]]] = (
    OrderedDict()
)
_CACHE_FILES = 256


def _assemble(chunks: list[tuple[int, str]]) -> list[str]:
    """A file's lines from its chunks (gaps between chunks are blank lines)."""
    lines: list[str] = []
    for first, text in sorted(chunks):
        part = text.split("\n")
        if len(lines) < first - 1:
            lines.extend([""] * (first - 1 - len(lines)))
        lines[first - 1 : first - 1 + len(part)] = part
    return lines


def split_passages(path: str, lines: list[str], max_chars: int = MAX_CHARS) -> list[Passage]:
    """The passages of a file (see the module docstring)."""
    out: list[Passage] = []
    section = 0
    for start, end, kind, heading in blocks(lines):
        if kind == "heading":
            section += 1
            continue
        pieces = [(start, end)]
        if kind == "para" and end > start:
            pieces = _split_lines(lines, start, end, max_chars)
        for a, b in pieces:
            out.append(Passage(path, len(out), a + 1, b + 1, kind, section, heading))
    return out


def _split_lines(lines: list[str], start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    first, size = start, 0
    for k in range(start, end + 1):
        width = len(lines[k]) + 1
        if size and size + width > max_chars:
            out.append((first, k - 1))
            first, size = k, 0
        size += width
    out.append((first, end))
    return out


@dataclass
class Span:
    """A result's range of passages (``lo``..``hi`` indexes in one file's passage list)."""

    path: str
    lo: int
    hi: int
    payload: Any = None
    merged: list[Any] = field(default_factory=list)


def window(ft: FileText, p: Passage, context: int, max_chars: int) -> tuple[int, int]:
    """Passage indexes of ``p`` with up to ``context`` neighbours after, then before it.

    Neighbours stay in ``p``'s section and are added only while the text fits ``max_chars``.
    """
    ps = ft.passages(p.path)
    lo = hi = p.index
    for _ in range(max(context, 0)):
        grown = False
        for step in (1, -1):  # after, then before
            j = hi + 1 if step > 0 else lo - 1
            if not 0 <= j < len(ps) or ps[j].section != p.section:
                continue
            a, b = (lo, j) if step > 0 else (j, hi)
            if _chars(ft, ps[a], ps[b]) <= max_chars:
                lo, hi = a, b
                grown = True
        if not grown:
            break
    return lo, hi


def _chars(ft: FileText, a: Passage, b: Passage) -> int:
    return len(ft.text(a.path, a.start, b.end))


def assemble(
    ft: FileText,
    ranked: Iterable[tuple[Passage, Any]],
    limit: int,
    context: int,
    max_chars: int,
) -> list[Span]:
    """Turn ranked passages into at most ``limit`` non-overlapping result spans.

    A passage whose window overlaps or touches a span already taken (same file and section)
    extends that span instead of opening a new result; its payload is added to ``merged``.
    """
    spans: list[Span] = []
    by_path: dict[str, list[Span]] = {}
    for passage, payload in ranked:
        lo, hi = window(ft, passage, context, max_chars)
        ps = ft.passages(passage.path)
        host = None
        for s in by_path.get(passage.path, ()):
            if ps[s.lo].section == passage.section and lo <= s.hi + 1 and hi >= s.lo - 1:
                host = s
                break
        if host is not None:
            host.lo, host.hi = min(host.lo, lo), max(host.hi, hi)
            host.merged.append(payload)
            continue
        if len(spans) >= limit:
            break
        span = Span(passage.path, lo, hi, payload)
        spans.append(span)
        by_path.setdefault(passage.path, []).append(span)
    return spans


def span_lines(ft: FileText, span: Span) -> tuple[int, int, str]:
    """(start_line, end_line, text) of a span."""
    ps = ft.passages(span.path)
    start, end = ps[span.lo].start, ps[span.hi].end
    return start, end, ft.text(span.path, start, end)
