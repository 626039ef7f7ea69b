"""Writing a file that a repository can aim: inside where it belongs, whole or not at all.

A cloned repository may commit links where memcli writes (``.gitignore`` to the user's
``~/.gitconfig``, ``memory/MEMORY.md`` to ``../.git/config``, a dangling link to a path
outside the workspace). Every file memcli writes in a workspace (``memory/``, ``init``'s
files, ``memcli.toml``, the agents' project files) goes through here:

- :func:`target` is the file to write for a path: the path itself or, where a link stands on
  its way, the file it leads to, as long as that stays inside every folder of ``within``
  (and out of ``.git``); otherwise :class:`~memcli.errors.PathOutsideWorkspace`;
- :func:`open_file` opens that file without following a link and refuses anything but a
  regular file (a FIFO would block, a device would be written to);
- :func:`replace` swaps in new content whole: a temporary file beside it, synced, given the
  old file's mode and owner, renamed over it; on failure the file is as it was;
- :func:`append_line` adds a line to a small text file unless it is there.

``within=()`` is for the user's own files (user scope): links there are the user's to make.
The files under ``.memcli/`` have their own rules (:mod:`memcli.statedir`).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path

from memcli.errors import BadInput, PathOutsideWorkspace, WriteFailed, os_cause

__all__ = ["append_line", "open_file", "replace", "target"]

_NO_FOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _first_link(path: Path, top: Path) -> Path | None:
    """The first link on the way from ``top`` down to ``path`` (``path`` itself included);
    None when there is none. ``path`` must lie under ``top``."""
    current = top
    for part in path.relative_to(top).parts:
        current = current / part
        if current.is_symlink():
            return current
    return None


def target(path: Path, *within: Path) -> Path:
    """The file memcli writes for ``path``: ``path`` (made absolute) when no link stands on
    its way below the first folder of ``within``, else the file the links lead to, which
    must stay inside each folder of ``within`` (their own links resolved) and out of a
    ``.git`` folder. Raises PathOutsideWorkspace."""
    path = Path(os.path.abspath(path))
    if not within:
        return path
    folders = [Path(os.path.abspath(folder)) for folder in within]
    link = None
    if _inside(str(path), str(folders[0])):
        link = _first_link(path, folders[0])
        if (
            link is None
            and all(_inside(str(path), str(f)) for f in folders[1:])
            and ".git" not in path.relative_to(folders[0]).parts
        ):
            return path
    real = os.path.realpath(path)
    for folder in folders:
        top = os.path.realpath(folder)
        if not _inside(real, top) or ".git" in os.path.relpath(real, top).split(os.sep):
            what = f"{link} is a link leading" if link else f"{path} leads"
            raise PathOutsideWorkspace(
                f"{what} out of {folder} (to {real}): memcli writes no file through it (a"
                " repository may point one at your files)",
                hint="replace the link with a plain file, or remove it, and run this again",
            )
    return Path(real)


def open_file(path: Path, flags: int, *within: Path, mode: int = 0o644) -> tuple[Path, int]:
    """Open the file memcli writes for ``path`` (:func:`target`) without following a link:
    ``(the file's path, its descriptor)``. A FIFO, a device or a folder in its place is
    refused with BadInput; other OSErrors (ENOENT without ``O_CREAT``, EACCES) pass."""
    real = target(path, *within)
    try:
        fd = os.open(real, flags | _NO_FOLLOW, mode)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
            raise BadInput(f"cannot write {path}: not a regular file") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise BadInput(f"cannot write {path}: not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return real, fd


def _read_all(fd: int) -> bytes:
    chunks, offset = [], 0
    while piece := os.pread(fd, 1 << 20, offset):
        chunks.append(piece)
        offset += len(piece)
    return b"".join(chunks)


def replace(
    path: Path,
    data: bytes,
    *within: Path,
    shown: Path | None = None,
    hold: Callable[[int], None] | None = None,
) -> int | None:
    """Make the file at ``path`` hold ``data``, whole or not at all: written to a temporary
    file beside it, synced, given the old file's mode and owner (where the process may),
    then renamed over it. Any failure (a full disk, a quota, a read-only folder) leaves the
    file as it was and raises :class:`WriteFailed` saying that nothing was written.
    ``shown``: the name the error gives the file (default ``path``). ``hold``: called with
    the new file's descriptor before the rename (to lock it); that descriptor is then
    returned open, for the caller to close (else None)."""
    real = target(path, *within)
    name = shown or path
    try:
        old: os.stat_result | None = os.lstat(real)
    except FileNotFoundError:
        old = None
    except OSError as exc:
        raise WriteFailed(f"cannot write {name}: {os_cause(exc)}; nothing was written") from None
    if old is not None and not stat.S_ISREG(old.st_mode):
        raise BadInput(f"cannot write {name}: not a regular file")
    tmp = real.with_name(f".{real.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    renamed = False
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | _NO_FOLLOW, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
            if old is not None:
                os.fchmod(fd, stat.S_IMODE(old.st_mode))
                if (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
                    try:
                        os.fchown(fd, old.st_uid, old.st_gid)
                    except PermissionError:  # not ours to give away: it stays the writer's
                        pass
            if hold is not None:
                hold(fd)
            os.rename(tmp, real)
            renamed = True
        finally:
            if not (renamed and hold is not None):
                os.close(fd)
        return fd if hold is not None else None
    except OSError as exc:
        raise WriteFailed(f"cannot write {name}: {os_cause(exc)}; nothing was written") from None
    finally:
        if not renamed:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def append_line(path: Path, line: str, *within: Path) -> bool:
    """Add ``line`` to the text file at ``path`` (made when missing) unless a line of it
    already reads so; True when the file changed. Written through :func:`replace`."""
    real = target(path, *within)
    try:
        _, fd = open_file(real, os.O_RDONLY)
    except FileNotFoundError:
        data = b""
    else:
        with os.fdopen(fd, "rb"):
            data = _read_all(fd)
    text = data.decode("utf-8", errors="surrogateescape")
    if line in (ln.strip() for ln in text.split("\n")):
        return False
    prefix = b"" if not data or data.endswith(b"\n") else b"\n"
    replace(real, data + prefix + line.encode("utf-8") + b"\n", shown=path)
    return True
