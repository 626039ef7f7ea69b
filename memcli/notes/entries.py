"""The entry format (``- HH:MM [type] text #tags``) and atomic, locked appends."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import memcli.safewrite as safewrite
from memcli.errors import BadInput, WriteFailed, os_cause
from memcli.locks import lock_file, shared
from memcli.notes.controls import strip_controls
from memcli.notes.entryparse import _TAG
from memcli.notes.entryparse import entry_fields as entry_fields  # re-exported
from memcli.notes.entryparse import fact_key as fact_key  # re-exported
from memcli.notes.lifecycle import STATUS_LINE

_TYPE = re.compile(r"^[\w][\w\-]*$")


@dataclass(frozen=True)
class Entry:
    """One fact: a list item with optional time, type and tags."""

    text: str
    type: str | None = None
    tags: tuple[str, ...] = ()
    time: str | None = None
    line: int = 0  # 1-based line of the item in its file (0 when not from a file)
    end_line: int = 0
    extra: dict[str, str] = field(default_factory=dict, compare=False)
    #: status lines under it (memcli.notes.lifecycle), not part of its text
    status: tuple[str, ...] = field(default=(), compare=False)


def clean_tag(tag: str) -> str:
    """Normalise a tag (drop a leading '#') and check it is one word."""
    name = tag.strip().lstrip("#")
    if not _TAG.match("#" + name):
        raise BadInput(f"invalid tag {tag!r}", hint="tags are single words like 'infra' or 'db/pg'")
    return name


def clean_type(kind: str) -> str:
    name = kind.strip().strip("[]")
    if not _TYPE.match(name):
        raise BadInput(f"invalid type {kind!r}", hint="a type is one word like 'decision'")
    return name


def format_entry(
    text: str, type: str | None = None, tags: tuple[str, ...] | list[str] = (), time: str = ""
) -> str:
    """Render one entry as Markdown lines ending in a newline.

    Multi-line text continues on lines indented by two spaces; blank lines are
    dropped so the item stays one list item. Terminal escapes and other control characters
    are removed (:mod:`memcli.notes.controls`).
    """
    lines = [ln.rstrip() for ln in strip_controls(text).strip().splitlines() if ln.strip()]
    if not lines:
        raise BadInput("empty fact", hint="give the text to remember")
    head = "- "
    if time:
        head += f"{time} "
    if type:
        head += f"[{clean_type(type)}] "
    tag_text = " ".join(f"#{clean_tag(t)}" for t in tags)
    if tag_text:
        lines[-1] = f"{lines[-1]} {tag_text}"
    first, rest = lines[0], [_continued(ln) for ln in lines[1:]]
    return "\n".join([head + first.lstrip(), *rest]) + "\n"


def _continued(line: str) -> str:
    """A continuation line of a fact's text, indented under it. One that would read as a
    status line (``- confirmed 2026-11-25 by alice``) has its list marker escaped: status
    lines are written only by the lifecycle commands (:mod:`memcli.notes.annotate`)."""
    out = "  " + line.strip()
    return f"  \\{line.strip()}" if STATUS_LINE.match(out) else out


def parse_entries(text: str) -> list[Entry]:
    """All top-level list items of a Markdown text as entries (prose is ignored)."""
    return [
        Entry(text=body, type=kind, tags=tags, time=time, line=line, end_line=end, status=status)
        for body, kind, tags, time, line, end, status in entry_fields(text)
    ]


#: Times a writer opens a memory file again when it was replaced while it waited for it.
_REOPEN_TRIES = 20


def _lock_current(path: Path, flags: int, within: tuple[Path, ...]) -> tuple[Path, int]:
    """Open the file memcli writes for ``path`` (:func:`memcli.safewrite.open_file`: no link
    out of ``within`` followed, a regular file) and lock it (:func:`memcli.locks.lock_file`),
    making sure the file locked is the one at the path once the lock is held: a file
    replaced while this writer waited (an edit, git rebasing or merging it writes a new
    file) is opened and locked again, so no write lands in a file that is no longer there.
    ``(the file's path, its descriptor)``."""
    for _ in range(_REOPEN_TRIES):
        real, fd = safewrite.open_file(path, flags, *within)
        try:
            lock_file(fd)
            held, now = os.fstat(fd), os.stat(real)
        except FileNotFoundError:  # removed meanwhile: open (and with O_CREAT, make) it anew
            os.close(fd)
            continue
        except BaseException:
            os.close(fd)
            raise
        if (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino):
            return real, fd
        os.close(fd)
    raise WriteFailed(f"cannot write {path}: it keeps being replaced; nothing was written")


@contextmanager
def locked_append(
    path: Path, writers: Path | None = None, *, within: tuple[Path, ...]
) -> Iterator[int]:
    """Open ``path`` for appending under an exclusive lock; yield the fd.

    The lock is an advisory, blocking ``flock`` on the file itself
    (:func:`memcli.locks.lock_file`), so every memcli process appending to the same file is
    serialised. It does not go through :class:`~memcli.locks.ProcessLock`'s polling wait: the
    kernel wakes a blocked appender as soon as the holder's short check-and-append is done,
    and a lock on the memory file cannot hold the pid a timeout message would name. The file
    locked is the one at the path when the lock is held (:func:`_lock_current`).
    ``writers``: the workspace's writers lock, held shared meanwhile (``sync`` holds it
    exclusive while git rewrites memory files). ``within``: the folders the file must stay
    in, links resolved (:func:`memcli.safewrite.target`).
    """
    with shared(writers) if writers is not None else nullcontext():
        try:
            safewrite.target(path.parent, *within).mkdir(parents=True, exist_ok=True)
            _, fd = _lock_current(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, within)
        except (FileExistsError, NotADirectoryError, IsADirectoryError) as exc:
            # A file where a folder is needed (``MEMORY.md/x.md``) or a folder named like it.
            raise BadInput(f"cannot append to {path}: {exc.strerror}") from None
        except OSError as exc:  # a read-only folder or file system, a full disk
            raise WriteFailed(
                f"cannot write {path}: {os_cause(exc)}; nothing was written"
            ) from None
        try:
            yield fd
        finally:
            os.close(fd)  # closing releases the lock


def append_text(fd: int, path: Path, block: str) -> None:
    """Append ``block`` whole or not at all, fixing a missing newline.

    The block goes out in one ``write`` where the disk allows; a short write is continued,
    and a write or ``fsync`` that fails (disk full, quota, file size limit, read-only) cuts
    the file back to its size before the append and raises :class:`WriteFailed` naming the
    cause, so the file never keeps part of an entry.
    """
    size = os.fstat(fd).st_size
    if size and os.pread(fd, 1, size - 1) != b"\n":
        block = "\n" + block
    data = memoryview(block.encode("utf-8"))
    try:
        while data:
            data = data[os.write(fd, data) :]
        os.fsync(fd)
    except OSError as exc:
        try:
            os.ftruncate(fd, size)
            os.fsync(fd)
        except OSError as undo:  # pragma: no cover - the file system refuses even that
            raise WriteFailed(
                f"cannot write {path}: {os_cause(exc)}; cutting back the partial entry failed"
                f" too ({undo.strerror}): the file may end in a partial line"
            ) from None
        raise WriteFailed(f"cannot write {path}: {os_cause(exc)}; nothing was written") from None


#: The provenance heading flush writes facts under: ``## 14:32 flush · conversation 3f9a1c2e``.
FLUSH_HEADING = re.compile(
    r"^##[ \t]+\d{1,2}:\d{2}[ \t]+flush[ \t]+·[ \t]+conversation[ \t]+([0-9a-f]{8})\b",
    re.MULTILINE,
)
_SECTION = re.compile(r"^#{1,2}[ \t]+\S.*$", re.MULTILINE)


def add_heading(text: str, clock: str) -> str:
    """The heading an added fact needs in a file whose last section is a flush's: the
    provenance heading names a conversation, and a fact added by hand after it did not come
    from that conversation. Empty when the last section (``#`` or ``##``) is anything else."""
    headings = _SECTION.findall(text)
    if not headings or not FLUSH_HEADING.match(headings[-1]):
        return ""
    gap = "" if text.endswith("\n\n") else "\n"
    return f"{gap}## {clock} add\n\n"


def day_title(day: date) -> str:
    """The title a new daily file starts with, a blank line after it."""
    return f"# {day.isoformat()}\n\n"


@dataclass
class Appender:
    """A memory file locked for appending, with the text it held when the lock was taken."""

    path: Path
    fd: int
    text: str

    @property
    def next_line(self) -> int:
        """The line number an appended block starts on (a missing final newline is added)."""
        text = self.text
        return text.count("\n") + (1 if text and not text.endswith("\n") else 0) + 1

    def write(self, block: str) -> None:
        """Append ``block`` with one write (see :func:`append_text`)."""
        append_text(self.fd, self.path, block)


@contextmanager
def appending(
    path: Path, writers: Path | None = None, *, within: tuple[Path, ...]
) -> Iterator[Appender]:
    """Lock ``path`` for appending and read it: the one way memcli adds to a memory file.

    The caller checks the current text (a duplicate, a heading a racing writer added) and
    appends, all under the same lock, so checks and write cannot interleave with another
    memcli process writing the same file. ``writers``, ``within``: see :func:`locked_append`.
    """
    with locked_append(path, writers, within=within) as fd:
        yield Appender(path, fd, _read_fd(fd).decode("utf-8", errors="replace"))


@contextmanager
def editing(
    path: Path, writers: Path | None = None, *, within: tuple[Path, ...]
) -> Iterator[Editor]:
    """Lock ``path`` (the lock appends take) and read it, to change lines in place.

    :meth:`Editor.replace` writes the new text whole or not at all (a new file renamed over
    the old one, :func:`memcli.safewrite.replace`), and only the lines that changed get new
    bytes. ``writers``, ``within``: see :func:`locked_append`.
    """
    with shared(writers) if writers is not None else nullcontext():
        try:
            real, fd = _lock_current(path, os.O_RDWR, within)
        except FileNotFoundError:
            raise BadInput(f"no such file: {path}") from None
        raw = _read_fd(fd)
        editor = Editor(path, real, fd, raw.decode("utf-8", errors="replace"), raw)
        try:
            yield editor
        finally:
            os.close(editor.fd)  # closing releases the lock


def _read_fd(fd: int) -> bytes:
    """The whole content of the locked file (read through its descriptor: the file locked)."""
    chunks, offset = [], 0
    while True:
        piece = os.pread(fd, 1 << 20, offset)
        if not piece:
            break
        chunks.append(piece)
        offset += len(piece)
    return b"".join(chunks)


@dataclass
class Editor:
    """A memory file locked for editing, with its text when the lock was taken (bytes that
    are not UTF-8 read as U+FFFD) and its bytes."""

    path: Path
    real: Path  # the file written: ``path`` with any link inside the workspace resolved
    fd: int
    text: str
    raw: bytes

    def replace(self, new_text: str) -> None:
        """Make the file hold ``new_text``, whole or not at all: the lines it shares with
        the old text, at the start and the end, keep their very bytes (text that is not
        UTF-8 included); the rest is written as UTF-8. The new file is locked before it
        takes the old one's place, so appenders wait for this edit to end."""
        old, new = self.text.split("\n"), new_text.split("\n")
        raw = self.raw.split(b"\n")
        limit = min(len(old), len(new))
        head = 0
        while head < limit and old[head] == new[head]:
            head += 1
        tail = 0
        while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
            tail += 1
        middle = [line.encode("utf-8") for line in new[head : len(new) - tail]]
        data = b"\n".join([*raw[:head], *middle, *raw[len(raw) - tail :]])
        if data == self.raw:
            return
        fd = safewrite.replace(self.real, data, shown=self.path, hold=lock_file)
        assert fd is not None
        os.close(self.fd)
        self.fd, self.text, self.raw = fd, new_text, data
