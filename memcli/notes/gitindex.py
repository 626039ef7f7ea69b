"""A repository's own files, read without running git: its git folder, and which paths its
index tracks under a folder.

memcli runs git only against the git folder found here (:mod:`memcli.git.repo`), and asks
the index which files of ``.memcli/`` (derived data no repository should commit) a clone
tracks; reading the index file spares the notes room a ``git`` process. Formats 2, 3 and 4
of the index (https://git-scm.com/docs/index-format) with SHA-1 or SHA-256 object names.
"""

from __future__ import annotations

import struct
from pathlib import Path

__all__ = ["git_dir_of", "index_file", "tracked_under"]

_HEADER = struct.Struct(">4sLL")
_FLAGS = struct.Struct(">H")
_STAT = 40  # ctime, mtime, dev, ino, mode, uid, gid, size: ten 32-bit fields


def git_dir_of(top: Path) -> Path | None:
    """The git folder of the work tree ``top``: its ``.git`` folder, or the folder a ``.git``
    file names (a linked worktree, a submodule); None when there is neither. A ``.git`` is
    never part of a repository's content (git refuses to check one out), so what this finds
    is the user's own repository, whatever folders a clone holds."""
    dot_git = top / ".git"
    if dot_git.is_dir():
        return dot_git
    try:
        text = dot_git.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    git_dir = Path(text[len("gitdir:") :].strip())
    git_dir = git_dir if git_dir.is_absolute() else top / git_dir
    return git_dir if git_dir.is_dir() else None


def index_file(top: Path) -> Path | None:
    """The index file of the repository whose work tree is ``top``; None when there is
    none."""
    git_dir = git_dir_of(top)
    return git_dir / "index" if git_dir is not None else None


def tracked_under(index: Path, prefix: str) -> list[str] | None:
    """Paths in ``index`` that start with ``prefix`` (``"sub/.memcli/"``); None when the file
    cannot be read or is not an index memcli knows."""
    try:
        data = index.read_bytes()
    except OSError:
        return None
    for oid_size in (20, 32):  # SHA-1, else SHA-256
        names = _names(data, oid_size)
        if names is not None:
            return [n for n in names if n.startswith(prefix)]
    return None


def _names(data: bytes, oid_size: int) -> list[str] | None:
    """Every path of an index file, or None when it does not parse with ``oid_size``."""
    try:
        signature, version, count = _HEADER.unpack_from(data, 0)
        if signature != b"DIRC" or version not in (2, 3, 4):
            return None
        pos, names, previous = _HEADER.size, [], b""
        for _ in range(count):
            start = pos
            pos += _STAT + oid_size
            (flags,) = _FLAGS.unpack_from(data, pos)
            pos += _FLAGS.size
            if flags & 0x4000 and version >= 3:  # extended flags
                pos += 2
            if version == 4:
                strip, pos = _varint(data, pos)
                end = data.index(b"\0", pos)
                if strip > len(previous):
                    return None
                name = previous[: len(previous) - strip] + data[pos:end]
                pos = end + 1
            else:
                end = data.index(b"\0", pos)
                name = data[pos:end]
                pos = start + ((end - start) // 8 + 1) * 8  # 1 to 8 NULs pad the entry
            if pos > len(data):
                return None
            if not name or name < previous:  # entries are sorted: else a misreading
                return None
            names.append(name.decode("utf-8", "surrogateescape"))
            previous = name
        return names
    except (struct.error, ValueError, IndexError):
        return None


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """Git's offset varint (the index v4 prefix length) at ``pos``; (value, next pos)."""
    byte = data[pos]
    pos += 1
    value = byte & 0x7F
    while byte & 0x80:
        byte = data[pos]
        pos += 1
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, pos
