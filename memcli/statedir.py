"""A workspace's ``.memcli/`` folder: derived data that a cloned repository cannot aim.

A repository can commit ``.memcli`` as a link to a folder elsewhere, or links (and folders)
inside it where memcli keeps its lock, logs and index, so that writing them would overwrite,
cut or append to the user's own files. ``.memcli`` holds derived data only, so whatever memcli
did not make there is taken away and made anew:

- :func:`state_path` is the way to a path under ``.memcli``: each folder on the way is a real
  folder (a link or a file in its place is removed, never what a link points to);
- :func:`open_state` opens a file there with ``O_NOFOLLOW``: a link in its place is removed and
  the file made anew, and anything that is not a regular file is refused;
- :func:`check` (on opening a workspace's index) also removes links planted for SQLite's files
  and names everything it removed in one warning each.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

__all__ = [
    "STATE_DIR",
    "append_text",
    "check",
    "open_state",
    "read_text",
    "remove",
    "state_path",
    "write_text",
]

STATE_DIR = ".memcli"

#: The index's files, which SQLite opens by name (and would follow).
INDEX_FILES = ("index.db", "index.db-wal", "index.db-shm", "index.db-journal")

_OPEN_FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
#: What ``open`` says when a link, a folder or a special file stands where a file belongs.
_NOT_A_FILE = (errno.ELOOP, errno.EISDIR, errno.ENXIO, errno.ENOTDIR)


def remove(path: Path) -> None:
    """Remove ``path`` itself: a link (never its target), a file, or a folder of derived data
    (links inside are removed, not followed)."""
    st = os.lstat(path)
    if stat.S_ISDIR(st.st_mode):
        import shutil  # rarely needed: kept off start-up

        shutil.rmtree(path)
    else:
        os.unlink(path)


def _real_folder(path: Path, removed: list[str] | None) -> None:
    """Make ``path`` a real folder (its parent is one already)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISDIR(st.st_mode):
        what = "a link" if stat.S_ISLNK(st.st_mode) else "not a folder"
        remove(path)
        if removed is not None:
            removed.append(f"{path} was {what}")
        st = None
    if st is None:
        try:
            os.mkdir(path, 0o755)
        except FileExistsError:  # made meanwhile by another memcli: check what it is
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                raise


def state_path(root: Path, *parts: str, removed: list[str] | None = None) -> Path:
    """``root/.memcli/<parts...>``, with ``.memcli`` and every folder of ``parts[:-1]`` made
    real folders (whatever stood in their place is removed and noted in ``removed``). The
    last part is the caller's to open with :func:`open_state`. Raises OSError."""
    folder = Path(root) / STATE_DIR
    _real_folder(folder, removed)
    for name in parts[:-1]:
        folder = folder / name
        _real_folder(folder, removed)
    return folder / parts[-1] if parts else folder


def open_state(path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open`` a file under ``.memcli`` without following a link: a link or a folder in
    its place is removed and, with ``O_CREAT``, the file is made anew. The descriptor is
    always a regular file's. Raises OSError (ENOENT without ``O_CREAT``)."""
    for attempt in range(2):
        try:
            fd = os.open(path, flags | _OPEN_FLAGS, mode)
        except OSError as exc:
            if exc.errno not in _NOT_A_FILE or attempt:
                raise
            remove(path)
            continue
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
        os.close(fd)  # a folder opened for reading, a FIFO
        if attempt:
            break
        remove(path)
    raise OSError(errno.EINVAL, "not a regular file", str(path))


def read_text(path: Path, limit: int = 1 << 20) -> str:
    """The last ``limit`` bytes of a file under ``.memcli`` (a link is never followed)."""
    fd = open_state(path, os.O_RDONLY)
    with os.fdopen(fd, "rb") as fh:
        size = os.fstat(fd).st_size
        if size > limit:
            fh.seek(size - limit)
        return fh.read(limit).decode("utf-8", "replace")


def append_text(path: Path, text: str) -> int:
    """Append ``text`` in one write; the file's size after it."""
    fd = open_state(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, text.encode("utf-8"))
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def write_text(path: Path, text: str) -> None:
    """Replace a file's content (a temporary file renamed over it: a link there is replaced,
    not followed)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = open_state(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8"))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def check(root: Path) -> list[str]:
    """Make ``root/.memcli`` a real folder and take away links planted for the index's files;
    one warning for each thing removed (none when all was as memcli makes it)."""
    removed: list[str] = []
    folder = state_path(root, removed=removed)
    for name in INDEX_FILES:
        path = folder / name
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                os.unlink(path)
                removed.append(f"{path} was a link")
        except FileNotFoundError:
            pass
    top = f"{Path(root)}{os.sep}"
    return [
        f"{what.removeprefix(top)}: removed it ({STATE_DIR}/ holds memcli's derived data only)"
        for what in removed
    ]
