"""Where a workspace's engine listens: a Unix socket in the user's runtime folder, named from
the workspace (so the length limit of a socket path never bites), with its lock beside it.

Another local user must not be able to stand in for the engine (and receive what ``add``
writes, or feed a hook its text): a client asks an engine, and ``memcli serve`` listens, only
in a folder that :func:`folder_problem` finds safe, and a client connects only to a socket
that :func:`socket_problem` finds safe. Otherwise the client answers in process and ``serve``
refuses to start.
"""

from __future__ import annotations

import os
import stat
import warnings
from pathlib import Path

from memcli.digest import sha256_hex

__all__ = ["engine_files", "engine_problem", "folder_problem", "socket_problem"]

#: Longest socket path used (the system limit is 104 to 108 bytes).
MAX_SOCKET_PATH = 100


def runtime_dir() -> Path:
    """``$MEMCLI_RUNTIME_DIR``, else the platform's runtime folder for memcli (a folder of
    the temporary directory when that one's path would be too long, or when the platform's
    is refused: platformdirs refuses a temporary runtime folder that another user made)."""
    chosen = os.environ.get("MEMCLI_RUNTIME_DIR")
    if chosen:
        return Path(chosen)
    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset
        warnings.simplefilter("ignore")
        import platformdirs

        try:
            return Path(platformdirs.user_runtime_dir("memcli"))
        except OSError:
            return _temp_folder()


def _temp_folder() -> Path:
    import tempfile  # rarely needed; it imports shutil, random, bz2 and lzma

    return Path(tempfile.gettempdir()) / f"memcli-{os.getuid()}"


def engine_files(root: Path) -> tuple[Path, Path]:
    """(socket, lock file) of the engine of the workspace at ``root``."""
    name = sha256_hex(str(root.resolve()).encode())[:16]
    folder = runtime_dir()
    if len(str(folder / f"{name}.sock")) > MAX_SOCKET_PATH:
        folder = _temp_folder()
    return folder / f"{name}.sock", folder / f"{name}.lock"


def folder_problem(folder: Path) -> str | None:
    """Why an engine must not listen, nor be asked, in ``folder`` (None: it may). The folder
    must be a folder (not a link) of this user that no one else can enter, read or write
    (mode 0700 or stricter), and each folder above it must belong to this user or to root and
    be writable by no one else unless it is sticky (as ``/tmp``): otherwise another local
    user could put a socket of theirs there, or put another folder in its place."""
    me = os.geteuid()
    try:
        st = os.lstat(folder)
    except OSError as exc:
        return f"{folder}: {exc.strerror}"
    if stat.S_ISLNK(st.st_mode):
        return f"{folder} is a link"
    if not stat.S_ISDIR(st.st_mode):
        return f"{folder} is not a folder"
    if st.st_uid != me:
        return f"{folder} belongs to uid {st.st_uid}, not to uid {me}"
    if st.st_mode & 0o077:
        return f"{folder} has mode {stat.S_IMODE(st.st_mode):04o}, not 0700"
    above = Path(os.path.abspath(folder)).parents
    seen: set[Path] = set()
    for parent in [*above, *Path(os.path.realpath(folder)).parents]:
        if parent in seen:
            continue
        seen.add(parent)
        try:
            pst = os.lstat(parent)
        except OSError as exc:
            return f"{parent}: {exc.strerror}"
        if pst.st_uid not in (me, 0):
            return f"{parent} (above {folder}) belongs to uid {pst.st_uid}"
        open_to_others = pst.st_mode & 0o022 and not pst.st_mode & stat.S_ISVTX
        if stat.S_ISDIR(pst.st_mode) and open_to_others:
            mode = stat.S_IMODE(pst.st_mode)
            return f"{parent} (above {folder}) can be written by others (mode {mode:04o})"
    return None


def socket_problem(sock: Path) -> str | None:
    """Why a client must not connect to ``sock`` (None: it may): it must be a socket of this
    user that no one else can use (``memcli serve`` makes it mode 0600)."""
    try:
        st = os.lstat(sock)
    except OSError as exc:
        return f"{sock}: {exc.strerror}"
    if not stat.S_ISSOCK(st.st_mode):
        return f"{sock} is not a socket"
    if st.st_uid != os.geteuid():
        return f"{sock} belongs to uid {st.st_uid}, not to uid {os.geteuid()}"
    if st.st_mode & 0o077:
        return f"{sock} has mode {stat.S_IMODE(st.st_mode):04o}, not 0600"
    return None


def engine_problem(sock: Path) -> str | None:
    """Why a client must not ask the engine at ``sock``: :func:`socket_problem`, then
    :func:`folder_problem` of its folder (None: it may)."""
    return socket_problem(sock) or folder_problem(sock.parent)


def failure_marker(root: Path) -> Path:
    """The file a client writes when the engine of the workspace at ``root`` did not answer
    it (its time: when; its text: what)."""
    return root / ".memcli" / "engine.failed"
