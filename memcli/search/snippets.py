"""Passages and snippets: the few lines of a file that answer a query.

A file is cut into *passages* with the chunker's block parser: a list item with its
continuation lines, a paragraph, a fenced code block, the front matter. Headings are not
passages; they separate *sections*. List items and code blocks are never cut; a paragraph
longer than ``max_chars`` is split between lines so that a long prose file still yields
precise passages.

Search ranks passages (:mod:`memcli.search.ranking`); a result's snippet is its passage plus up to
``context`` passages after and before it in the same section, added only while the snippet
stays within ``max_chars`` (a passage before it: within ``before_chars``). A passage whose
window touches a result already taken is merged into that result, so results never repeat a
line and neighbouring matches read as one block.

The text is the index's copy of each file (assembled from its chunks), so snippets agree
with the line numbers the index reports even if the file changed since.
"""

# No `from __future__ import annotations` here: typing compiles each string annotation of a
# NamedTuple at import (typing.ForwardRef), on every search and prompt hook.
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any, NamedTuple

from memcli.index.chunking import blocks
from memcli.index.schema import CHUNK_TEXT, TEXT_JOIN
from memcli.index.store import Store

#: Default character cap of a snippet (context is added only within it).
MAX_CHARS = 600


class Passage(NamedTuple):
    """A block of a file: lines ``start``..``end`` (1-based, inclusive)."""

    path: str
    pos: int  # position in the file's passage list
    start: int
    end: int
    kind: str  # item, para, code, front
    section: int  # passages of one section share it; a heading starts a new one
    heading: str


class FileText:
    """Lines and passages of indexed files, as the index holds them.

    A file up to ``WHOLE_FILE_BYTES`` is read whole, once per content hash: a process that
    runs many searches (``search --batch``) parses it once. Of a larger file only *regions*
    are read: the chunks a search needs and ``REGION_CHUNKS`` chunks either side of each.
    Regions are parsed on their own; a passage never has a neighbour in another region.
    """

    def __init__(self, store: Store, max_chars: int = MAX_CHARS, hide: str | None = None) -> None:
        """``hide``: a date (YYYY-MM-DD); the lines of facts superseded, retracted or expired
        before it are left out (blank), as a search that does not ask for them shows files."""
        self.store = store
        self.max_chars = max_chars
        self.hide = hide
        # the chunks whose lines make up a file: SQL condition and its parameters
        self._shown = (
            " AND NOT (c.state IN ('superseded', 'retracted') OR coalesce(c.expires, '9999') < ?)"
            if hide
            else ""
        )
        self._shown_args: tuple[str, ...] = (hide,) if hide else ()
        self._lines: dict[str, list[str]] = {}
        self._passages: dict[str, list[Passage]] = {}

    def prepare(self, chunks: Iterable[tuple[str, int]]) -> None:
        """Read what searching these (path, chunk id) pairs needs, whole files or regions."""
        want: dict[str, list[int]] = {}
        for path, cid in chunks:
            if path not in self._lines:
                want.setdefault(path, []).append(cid)
        if not want:
            return
        conn = self.store.conn
        paths = list(want)
        info: dict[str, tuple[int, str, int]] = {}
        for start in range(0, len(paths), 400):
            part = paths[start : start + 400]
            rows = conn.execute(
                "SELECT path, id, sha256, size FROM files"
                f" WHERE path IN ({','.join('?' * len(part))})",
                part,
            )
            info.update((r[0], (int(r[1]), r[2], int(r[3]))) for r in rows)
        whole = [p for p in paths if p in info and info[p][2] <= WHOLE_FILE_BYTES]
        self._load_whole(whole, {p: info[p][1] for p in whole})
        for path in paths:
            if path in info and path not in self._lines:
                self._load_regions(path, info[path][0], want[path])

    def load(self, paths: Iterable[str]) -> None:
        """Read these files whole from the index (a few queries for all)."""
        want = [p for p in dict.fromkeys(paths) if p not in self._lines]
        for start in range(0, len(want), 400):
            part = want[start : start + 400]
            marks = ",".join("?" * len(part))
            hashes = dict(
                self.store.conn.execute(
                    f"SELECT path, sha256 FROM files WHERE path IN ({marks})", part
                )
            )
            self._load_whole(part, hashes)

    def _load_whole(self, paths: list[str], hashes: dict[str, str]) -> None:
        db = str(self.store.path)
        missing = []
        for path in paths:
            lines = _CACHE.lines((db, path, self.hide or ""), hashes.get(path))
            if lines is not None:
                self._lines[path] = lines
            else:
                missing.append(path)
        for start in range(0, len(missing), 400):
            part = missing[start : start + 400]
            rows = self.store.conn.execute(
                f"SELECT f.path, c.start_line, {CHUNK_TEXT} || c.tail FROM chunks c"
                f" JOIN files f ON f.id = c.file_id {TEXT_JOIN}"
                f" WHERE f.path IN ({','.join('?' * len(part))}){self._shown}",
                (*part, *self._shown_args),
            )
            pieces: dict[str, list[tuple[int, str]]] = {p: [] for p in part}
            for path, first, text in rows:
                pieces[path].append((int(first), text))
            for path, chunks in pieces.items():
                lines = _assemble(chunks)
                self._lines[path] = lines
                _CACHE.put((db, path, self.hide or ""), hashes.get(path), lines)

    def _load_regions(self, path: str, file_id: int, chunk_ids: list[int]) -> None:
        conn = self.store.conn
        order = conn.execute(
            f"SELECT id, start_line FROM chunks c WHERE file_id = ?{self._shown}"
            " ORDER BY start_line",
            (file_id, *self._shown_args),
        ).fetchall()
        pos = {int(cid): i for i, (cid, _) in enumerate(order)}
        keep: set[int] = set()
        for cid in chunk_ids:
            if cid in pos:
                i = pos[cid]
                keep.update(
                    range(max(i - REGION_CHUNKS, 0), min(i + REGION_CHUNKS, len(order) - 1) + 1)
                )
        runs: list[list[int]] = []
        for i in sorted(keep):
            if runs and runs[-1][-1] == i - 1:
                runs[-1].append(i)
            else:
                runs.append([i])
        ids = [int(order[i][0]) for i in keep]
        texts: dict[int, tuple[int, str]] = {}
        for start in range(0, len(ids), 400):
            batch = ids[start : start + 400]
            for cid, first, text in conn.execute(
                f"SELECT c.id, c.start_line, {CHUNK_TEXT} || c.tail FROM chunks c {TEXT_JOIN}"
                f" WHERE c.id IN ({','.join('?' * len(batch))})",
                batch,
            ):
                texts[int(cid)] = (int(first), text)
        file_lines: list[str] = []
        passages: list[Passage] = []
        section = 0
        for run in runs:
            pieces = [texts[int(order[i][0])] for i in run if int(order[i][0]) in texts]
            if not pieces:
                continue
            first = min(f for f, _ in pieces)
            part = _assemble([(f - first + 1, t) for f, t in pieces])
            if len(file_lines) < first - 1:
                file_lines.extend([""] * (first - 1 - len(file_lines)))
            file_lines[first - 1 : first - 1 + len(part)] = part
            found = split_passages(path, part, self.max_chars, first, section + 1, len(passages))
            passages.extend(found)
            section = max([section + 1, *(p.section for p in found)])
        self._lines[path] = file_lines
        self._passages[path] = passages

    def lines(self, path: str) -> list[str]:
        if path not in self._lines:
            self.load([path])
        return self._lines.get(path, [])

    def passages(self, path: str) -> list[Passage]:
        found = self._passages.get(path)
        if found is None:
            lines = self.lines(path)
            memo = _CACHE.memo((str(self.store.path), path, self.hide or ""), lines)
            found = memo.get(self.max_chars)
            if found is None:
                found = split_passages(path, lines, self.max_chars)
                if self.hide:
                    found = _break_at(found, self._hidden_lines(path))
                memo[self.max_chars] = found
            self._passages[path] = found
        return found

    def _hidden_lines(self, path: str) -> set[int]:
        """Lines of ``path`` left out (facts superseded, retracted or expired)."""
        rows = self.store.conn.execute(
            "SELECT c.start_line, c.end_line FROM chunks c JOIN files f ON f.id = c.file_id"
            " WHERE f.path = ? AND NOT (1" + self._shown + ")",
            (path, *self._shown_args),
        )
        return {n for start, end in rows for n in range(int(start), int(end) + 1)}

    def text(self, path: str, start: int, end: int) -> str:
        """Lines ``start``..``end`` (1-based, inclusive) joined by newlines."""
        return "\n".join(self.lines(path)[start - 1 : end])

    def passage_text(self, p: Passage) -> str:
        return self.text(p.path, p.start, p.end)


#: Files up to this size are read and parsed whole; of larger ones only regions are read.
WHOLE_FILE_BYTES = 256 * 1024
#: Chunks read on each side of a chunk a search needs, in a large file.
REGION_CHUNKS = 2


class _WholeFiles:
    """Lines of whole files read by earlier searches of this process (``search --batch``),
    with their passages per ``max_chars``; least recently used first, and bounded by the
    size of the text held rather than by a count of files, which may be up to
    ``WHOLE_FILE_BYTES`` each."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        #: (index path, file path, hidden before) -> (sha256, lines, {max_chars: passages}, size)
        self._items: OrderedDict[
            tuple[str, str, str], tuple[str | None, list[str], dict[int, Any], int]
        ] = OrderedDict()

    def lines(self, key: tuple[str, str, str], sha256: str | None) -> list[str] | None:
        item = self._items.get(key)
        if item is None or item[0] != sha256:
            return None
        self._items.move_to_end(key)
        return item[1]

    def put(self, key: tuple[str, str, str], sha256: str | None, lines: list[str]) -> None:
        # text plus a rough per-line cost (the list slot and the str header); passages,
        # parsed later, are of the same order as the line overhead
        size = sum(map(len, lines)) + 120 * len(lines)
        old = self._items.pop(key, None)
        if old is not None:
            self.bytes -= old[3]
        self._items[key] = (sha256, lines, {}, size)
        self.bytes += size
        while self.bytes > self.max_bytes and len(self._items) > 1:
            self.bytes -= self._items.popitem(last=False)[1][3]

    def memo(self, key: tuple[str, str, str], lines: list[str]) -> dict[int, Any]:
        """The passages memo of these very lines (a fresh dict when they are not cached)."""
        item = self._items.get(key)
        return item[2] if item is not None and item[1] is lines else {}


#: Whole files kept across the searches of one process: at most this much text.
_CACHE = _WholeFiles(max_bytes=32 * 1024 * 1024)


def _assemble(chunks: list[tuple[int, str]]) -> list[str]:
    """A file's lines from its chunks (gaps between chunks are blank lines)."""
    lines: list[str] = []
    for first, text in sorted(chunks):
        part = text.split("\n")
        if len(lines) < first - 1:
            lines.extend([""] * (first - 1 - len(lines)))
        lines[first - 1 : first - 1 + len(part)] = part
    return lines


def _break_at(passages: list[Passage], hidden: set[int]) -> list[Passage]:
    """``passages`` with a new section wherever left-out lines lie between two of them, so
    that no result spans (or merges across) a fact a search does not show."""
    if not hidden:
        return passages
    out: list[Passage] = []
    section = 0
    for i, p in enumerate(passages):
        if i:
            prev = passages[i - 1]
            gap = range(prev.end + 1, p.start)
            if p.section != prev.section or any(n in hidden for n in gap):
                section += 1
        out.append(p._replace(section=section))
    return out


def split_passages(
    path: str,
    lines: list[str],
    max_chars: int = MAX_CHARS,
    first_line: int = 1,
    section: int = 0,
    index: int = 0,
) -> list[Passage]:
    """The passages of a file, or of a region of it that starts at ``first_line``.

    ``section`` and ``index`` number the region's sections and passages on from a previous
    region of the same file.
    """
    out: list[Passage] = []
    for start, end, kind, heading in blocks(lines):
        if kind == "heading":
            section += 1
            continue
        pieces = [(start, end)]
        if kind == "para" and end > start:
            pieces = _split_lines(lines, start, end, max_chars)
        for a, b in pieces:
            out.append(
                Passage(
                    path, index + len(out), a + first_line, b + first_line, kind, section, heading
                )
            )
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


#: Lines a result grows to at most by merging the passages next to it.
MAX_LINES = 12


class Span:
    """A result's range of passages (``lo``..``hi`` indexes in one file's passage list): the
    payload of the passage that opened it and of those ``merged`` into it."""

    __slots__ = ("path", "lo", "hi", "payload", "merged", "pos")

    def __init__(self, path: str, lo: int, hi: int, payload: Any = None, pos: int = -1) -> None:
        self.path, self.lo, self.hi, self.payload = path, lo, hi, payload
        self.pos = pos  # the index of the passage that opened it
        self.merged: list[Any] = []


def window(
    ft: FileText, p: Passage, context: int, max_chars: int, before_chars: int | None = None
) -> tuple[int, int]:
    """Passage indexes of ``p`` with up to ``context`` neighbours after, then before it.

    Neighbours stay in ``p``'s section and are added only while the text fits ``max_chars``
    (``before_chars`` for one before ``p``: what precedes a match answers less often than
    what follows it, a reply or a reason, so it gets less room).
    """
    before = max_chars if before_chars is None else min(before_chars, max_chars)
    ps = ft.passages(p.path)
    lo = hi = p.pos
    for _ in range(max(context, 0)):
        grown = False
        for step in (1, -1):  # after, then before
            j = hi + 1 if step > 0 else lo - 1
            if not 0 <= j < len(ps) or ps[j].section != p.section:
                continue
            a, b = (lo, j) if step > 0 else (j, hi)
            if _chars(ft, ps[a], ps[b]) <= (max_chars if step > 0 else before):
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
    before_chars: int | None = None,
    max_lines: int = MAX_LINES,
) -> list[Span]:
    """Turn ranked passages into at most ``limit`` result spans that never share a line
    (context as :func:`window` adds it).

    A passage whose window overlaps or touches spans already taken (same file and section)
    extends the best ranked of them instead of opening a new result, its payload added to
    ``merged``; a worse ranked span in the way gives up its lines, or joins it when the
    passage that opened it is among them (:func:`_grow`). A span grows to at most
    ``max_lines`` lines (or its own passage's, when longer): a passage that would take it
    past joins a span that shows it already, as it is, or opens a result of its own beside
    it. A new span is cut back where another begins.
    """
    spans: list[Span] = []
    by_path: dict[str, list[Span]] = {}
    for passage, payload in ranked:
        lo, hi = window(ft, passage, context, max_chars, before_chars)
        ps = ft.passages(passage.path)
        same = [s for s in by_path.get(passage.path, ()) if ps[s.lo].section == passage.section]
        touching = [s for s in same if lo <= s.hi + 1 and hi >= s.lo - 1]
        if touching:  # joins the best ranked of them, while it stays short enough
            host = touching[0]
            a, b = min(lo, host.lo), max(hi, host.hi)
            if ps[b].end - ps[a].start < max_lines or a == b:
                _grow(spans, by_path[passage.path], same, host, a, b)
                host.merged.append(payload)
                continue
            inside = [s for s in same if s.lo <= passage.pos <= s.hi]
            if inside:  # already shown: it points at its lines, and adds none
                inside[0].merged.append(payload)
                continue
        if len(spans) >= limit:
            if touching:
                continue  # a later passage may still join a result
            break
        for s in same:  # a result of its own: no line of another one
            if s.hi < passage.pos:
                lo = max(lo, s.hi + 1)
            elif s.lo > passage.pos:
                hi = min(hi, s.lo - 1)
        span = Span(passage.path, lo, hi, payload, passage.pos)
        spans.append(span)
        by_path.setdefault(passage.path, []).append(span)
    return spans


def _grow(
    spans: list[Span], in_file: list[Span], same: list[Span], host: Span, lo: int, hi: int
) -> None:
    """Make ``host`` passages ``lo``..``hi``, no line shared with another result: a better
    ranked one keeps its lines; a worse ranked one gives them up, or joins ``host`` when its
    own match is among them."""
    rank = spans.index(host)
    for s in list(same):  # in rank order
        if s is host or s.hi < lo or s.lo > hi:
            continue
        if spans.index(s) < rank:
            lo, hi = (s.hi + 1, hi) if s.hi < host.lo else (lo, s.lo - 1)
        elif lo <= s.pos <= hi:
            host.merged += [s.payload, *s.merged]
            lo, hi = min(lo, s.lo), max(hi, s.hi)
            spans.remove(s)
            in_file.remove(s)
        elif s.pos > hi:
            s.lo = hi + 1
        else:
            s.hi = lo - 1
    host.lo, host.hi = lo, hi


def span_lines(ft: FileText, span: Span) -> tuple[int, int, str]:
    """(start_line, end_line, text) of a span."""
    ps = ft.passages(span.path)
    start, end = ps[span.lo].start, ps[span.hi].end
    return start, end, ft.text(span.path, start, end)


#: A snippet is at most this many times ``max_chars``: a longer passage (a very long line, a
#: huge list item) is cut around its first match.
HARD_CAP_FACTOR = 4
ELLIPSIS = "…"


def clip(text: str, query: str, max_chars: int) -> str:
    """``text`` cut to ``HARD_CAP_FACTOR * max_chars`` characters around the first word of
    ``query`` found in it (the start when none is), each cut end marked with an ellipsis; text
    within the cap is returned as it is."""
    cap = HARD_CAP_FACTOR * max_chars
    if len(text) <= cap:
        return text
    from memcli.search.graphemes import grapheme_start  # only a snippet that is cut

    lowered = text.lower()
    found = [lowered.find(w[:5]) for w in query.lower().split() if len(w) > 2]
    at = min((i for i in found if i >= 0), default=0)
    lo = grapheme_start(text, max(0, min(at - cap // 4, len(text) - cap)))
    hi = grapheme_start(text, lo + cap)
    return (ELLIPSIS if lo else "") + text[lo:hi] + (ELLIPSIS if hi < len(text) else "")
