"""Reading one Markdown file into what the index stores: chunk rows, facts and a date.

Nothing here touches the database, so a child process can do it (:mod:`memcli.index.parseproc`
runs :func:`parse_worker` there); keep this module's imports light, the child pays for them.
"""

from __future__ import annotations

import bisect
import sys
from typing import Any, NamedTuple

from memcli.index import chunking
from memcli.index.bigrams import grams
from memcli.index.filewrites import ChunkValues, TextValues
from memcli.index.links import confirmed_day, names_in, since
from memcli.notes.lines import split_lines
from memcli.notes.scan import read_text
from memcli.notes.workspace import EVERGREEN_FILE, date_from_name


def _grams(text: str) -> str:
    """The grams column of a chunk's text: '' for text in scripts written with spaces."""
    return "" if text.isascii() else grams(text)


def _file_date(rel: str, text: str) -> str | None:
    if rel.rsplit("/", 1)[-1] == EVERGREEN_FILE:
        return None
    return chunking.front_matter_date(text) or date_from_name(rel)


#: A fact's link: its line, its time (HH:MM or None), its last confirmation day, a name.
Link = tuple[int, str | None, str | None, str]
Rows = tuple[list[ChunkValues], list[TextValues], list[tuple[str, int]], list[Link]]


def build_rows(rel: str, text: str, target: int) -> Rows:
    """Chunk a file and extract its facts: each chunk's values (:data:`ChunkValues`) and
    full-text values (:data:`TextValues`), and the entry hashes with their line."""
    import hashlib  # not needed by searches, only by indexing

    from memcli.notes import entries  # (with hashlib) not needed by searches, only by indexing
    from memcli.notes.lifecycle import ID_CHARS, STATUS_LINE, status_of

    facts: list[tuple[str, int]] = []
    links: list[Link] = []
    # the lines of entries with a type or tags (in order), each with its type and its tags
    # (lowercased, sorted, without repeats)
    label: dict[int, tuple[str, str]] = {}
    fact_key = entries.fact_key
    own: list[tuple[int, int, str, Any]] = []  # entries with status lines: their own chunk
    for body, kind, tags, time, line, end, status in entries.entry_fields(text):
        key = fact_key(body)
        facts.append((key, line))
        names = names_in(body)
        if names:
            confirmed = confirmed_day(status) if status else None
            links += [(line, time, confirmed, name) for name in names]
        if kind or tags:
            label[line] = (
                kind.lower() if kind else "",
                " ".join(sorted({t.lower() for t in tags})),
            )
        if status:
            st = status_of(status)
            if not st.plain:
                own.append((line, end, key[:ID_CHARS], st))
    marked = list(label)  # sorted: entries come in order
    sha256 = hashlib.sha256
    lines = split_lines(text)
    view = lines
    if own:  # the other chunks are made without these entries' lines (blank in their place)
        view = list(lines)
        for line, end, _, _ in own:
            view[line - 1 : end] = [""] * (end - line + 1)
    left, right = bisect.bisect_left, bisect.bisect_right

    def labels(start: int, end: int) -> tuple[str, str]:
        """The types and the tags of the entries on lines ``start..end``."""
        lo = left(marked, start)
        hi = right(marked, end, lo)
        if hi - lo == 1:
            return label[marked[lo]]
        if lo == hi:
            return "", ""
        span = [label[n] for n in marked[lo:hi]]
        return (
            " ".join(sorted({kind for kind, _ in span if kind})),
            " ".join(sorted({t for _, tags in span for t in tags.split()})),
        )

    rows: list[ChunkValues] = []
    texts: list[TextValues] = []
    for start, end, heading, chunk in chunking.chunk_rows(view, target):
        digest = sha256(chunk.encode("utf-8")).hexdigest()
        rows.append((start, end, heading, *labels(start, end), digest))
        texts.append((chunk, heading, _grams(chunk)))
    crumbs = {b[0] + 1: b[3] for b in chunking.blocks(lines)} if own else {}
    for line, end, fact_id, st in own:
        last = end  # the status lines that end the entry are its tail: shown, not searched
        while last > line and STATUS_LINE.match(lines[last - 1]):
            last -= 1
        body_text = "\n".join(lines[line - 1 : last])
        tail = "".join("\n" + text for text in lines[last:end])
        digest = sha256((body_text + tail).encode("utf-8")).hexdigest()
        heading = crumbs.get(line, "")
        state = "" if st.state == "active" else st.state
        status = (state, st.expires, st.confirmed, st.corroborated, fact_id, tail)
        rows.append((line, end, heading, *labels(line, end), digest, *status))
        texts.append((body_text, heading, _grams(body_text)))
    return rows, texts, facts, links


class Parsed(NamedTuple):
    """A file read, hashed and parsed (no database): what a sync writes for it."""

    rel: str
    sha256: str | None
    rows: list[ChunkValues] | None  # None: binary file, or unreadable (see error)
    texts: list[TextValues] | None  # one a row
    facts: list[tuple[str, int]] | None
    date: str | None
    warning: str | None
    error: str | None  # the file could not be read
    links: list[tuple[int, str | None, str]] | None = None  # (line, since, name)


def parse_file(rel: str, path: str, target: int, limit: int | None = None) -> Parsed:
    import hashlib  # not needed by searches, only by indexing

    try:
        data, text, warning = read_text(path, limit)
    except OSError as exc:
        return Parsed(rel, None, None, None, None, None, None, str(exc.strerror or exc))
    return parse_text(rel, hashlib.sha256(data).hexdigest(), text, warning, target)


def parse_text(rel: str, digest: str, text: str | None, warning: str | None, target: int) -> Parsed:
    """A file already read and hashed, parsed (``text`` None: a binary file)."""
    if text is None:
        return Parsed(rel, digest, None, None, None, None, warning, None)
    rows, texts, facts, links = build_rows(rel, text, target)
    day = _file_date(rel, text)
    dated = [(line, since(day, time, confirmed), name) for line, time, confirmed, name in links]
    return Parsed(rel, digest, rows, texts, facts, day, warning, None, dated)


def send(stream: Any, value: Any) -> None:
    """Write ``value`` to the pipe ``stream`` (``marshal``, after its length in 8 bytes:
    the same interpreter at both ends; sending and taking these rows costs about 40% less
    CPU than with ``pickle``). Not flushed."""
    import marshal  # only the parse process and its parent need it

    data = marshal.dumps(value)
    stream.write(len(data).to_bytes(8, "little"))
    stream.write(data)


def receive(stream: Any) -> Any:
    """The next value :func:`send` wrote to the pipe ``stream`` (read whole, then decoded:
    ``marshal.load`` on a pipe would make a read call per value inside it); EOFError at the
    end of the pipe or inside a value."""
    import marshal

    head = stream.read(8)
    if not head:
        raise EOFError
    size = int.from_bytes(head, "little")
    data = stream.read(size) if len(head) == 8 else b""
    if len(data) != size or len(head) != 8:
        raise EOFError("the pipe ended inside a message")
    return marshal.loads(data)


def parse_worker() -> None:
    """The child of :func:`memcli.index.parseproc.parse_elsewhere`: lists of (rel, path) in,
    lists of :class:`Parsed` as plain tuples out (:func:`send`, on stdin and stdout)."""
    target = int(sys.argv[1])
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else None
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            chunk = receive(stdin)
        except EOFError:
            return
        send(stdout, [tuple(parse_file(rel, path, target, limit)) for rel, path in chunk])
        stdout.flush()
