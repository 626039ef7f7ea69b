"""Reaching a workspace's engine (``memcli serve``), the one place every caller that asks
it (the CLI, the hooks, the service's sync before a search, doctor) and the engine's socket
server (:mod:`memcli.engine.server`) share; nothing here imports the service.

**Where it listens.** A Unix socket in the user's runtime folder, named from the workspace
(so the length limit of a socket path never bites), with its lock beside it. Another local
user must not be able to stand in for the engine (and receive what ``add`` writes, or feed a
hook its text): a client asks an engine, and ``memcli serve`` listens, only in a folder that
:func:`folder_problem` finds safe, and a client connects only to a socket that
:func:`socket_problem` finds safe. Otherwise the client answers in process and ``serve``
refuses to start.

**Asking it** (:func:`ask`). Any failure (no socket, a stale one, one in a folder or with a
mode that lets another local user stand in for it (:func:`engine_problem`), an engine of
another version, one that does not answer within the timeout) returns None: the caller answers
in process.

**Its result** (:func:`engine_result`): a request's result, or None when no engine answered
(a caller then answers in process); a context block (``--format context``, recall, briefing)
only when it is framed as in process (:func:`framed`), and the entries it quotes, when an
answer names them, only as a list of texts. Printing what the engine answered for a
command is the CLI's (:mod:`memcli.cli.via_engine`).

One module (it was three): every short-lived process that asks the engine loads all of it.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
import warnings
from pathlib import Path
from typing import Any, cast

from memcli.digest import sha256_hex
from memcli.errors import ExitCode, MemcliError

__all__ = [
    "PROTOCOL",
    "EngineError",
    "ask",
    "engine_files",
    "engine_problem",
    "engine_result",
    "folder_problem",
    "framed",
    "socket_problem",
]

# --- where it listens -----------------------------------------------------------------------

#: Longest socket path used (the system limit is 104 to 108 bytes).
MAX_SOCKET_PATH = 100


def runtime_dir() -> Path:
    """``$MEMCLI_RUNTIME_DIR``, else the platform's runtime folder for memcli (a folder of
    the temporary directory when that one's path would be too long, or when the platform's
    is refused: platformdirs refuses a temporary runtime folder that another user made).

    On Linux a ``$XDG_RUNTIME_DIR`` that is safe (:func:`folder_problem`: this user's, mode
    0700, below folders no one else can replace) gives ``$XDG_RUNTIME_DIR/memcli``, as
    platformdirs would, without importing it: that import (tempfile, shutil, bz2, lzma,
    random) costs about 8 ms of each prompt hook's run."""
    chosen = os.environ.get("MEMCLI_RUNTIME_DIR")
    if chosen:
        return Path(chosen)
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if sys.platform.startswith("linux") and os.path.isabs(xdg) and not folder_problem(Path(xdg)):
        return Path(xdg) / "memcli"
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


# --- asking it ------------------------------------------------------------------------------

#: Bumped when requests or answers change shape; the engine's memcli version must match too.
PROTOCOL = 2
#: Seconds a caller waits for an engine before answering in process.
DEFAULT_TIMEOUT = 2.0
#: The longest request an engine reads (bytes of JSON); a longer one is answered in process.
MAX_REQUEST = 1 << 20
#: Variables besides ``MEMCLI_*`` that change an answer: where the user's config and the
#: embedding cache are, and the time zone (today's date in briefings, dates in filters).
_ALSO = ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "TZ")


def client_env() -> dict[str, str]:
    """The variables that change settings or answers (an engine must run with the same)."""
    skip = {
        "MEMCLI_WORKSPACE",
        "MEMCLI_DEBUG",
        "MEMCLI_RUNTIME_DIR",
        "MEMCLI_ENGINE",
        "MEMCLI_ENGINE_TIMEOUT",
    }
    env = {k: v for k, v in os.environ.items() if k.startswith("MEMCLI_") and k not in skip}
    env.update((k, os.environ[k]) for k in _ALSO if k in os.environ)
    return env


def ask(
    root: Path, op: str, args: dict[str, Any], timeout: float = DEFAULT_TIMEOUT
) -> dict[str, Any] | None:
    """The engine's answer to ``op`` (``{"ok": ..., ...}``), or None when none answered."""
    sock_path, _ = engine_files(root)
    if engine_problem(sock_path) is not None:
        # no socket, or one that another local user could have put there (a folder or a
        # socket that is not only ours): answer in process, never ask it
        return None
    import socket  # only when an engine's socket is there: its enums cost 5 ms to create

    from memcli.version import __version__

    request = {"v": PROTOCOL, "version": __version__, "op": op, "args": args, "env": client_env()}
    data = json.dumps(request).encode() + b"\n"
    if len(data) > MAX_REQUEST:
        return None  # more than the engine reads: not a failure of the engine
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(str(sock_path))
            s.sendall(data)
            got = b""
            while not got.endswith(b"\n"):
                piece = s.recv(1 << 16)
                if not piece:
                    break
                got += piece
        answer = json.loads(got)
    except (OSError, ValueError):
        _note_failure(root, f"the engine at {sock_path} did not answer")
        return None
    if not isinstance(answer, dict) or answer.get("mismatch"):
        return None
    return answer


def _note_failure(root: Path, message: str) -> None:
    """Remember that an engine failed (``memcli doctor`` reports it). Never raises."""
    from memcli.statedir import STATE_DIR, state_path, write_text

    try:
        if (root / STATE_DIR).is_dir():  # made by memcli before, never made here
            write_text(state_path(root, failure_marker(root).name), message + "\n")
    except OSError:
        pass


# --- its result -----------------------------------------------------------------------------

#: Seconds during which, after a caller gave up on the workspace's engine (it did not answer
#: in time), the next callers answer in process without asking it, unless a new one started.
BACKOFF_SECS = 30.0


class EngineError(MemcliError):
    """An error the engine reported for a request: its message, hint, fields and exit code."""

    def __init__(
        self, message: str, hint: str | None, code: int, fields: tuple[str, ...] = ()
    ) -> None:
        super().__init__(message, hint=hint, fields=fields)
        self.exit_code = ExitCode(code)


def engine_result(root: Path, op: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    """The result of ``op`` from the engine of the workspace at ``root``; None when no engine
    answered (or ``MEMCLI_ENGINE=off`` says to answer in process); its errors raised."""
    if os.environ.get("MEMCLI_ENGINE", "").lower() in ("off", "0", "no", "false"):
        return None
    if _given_up_lately(root):
        return None
    timeout = float(os.environ.get("MEMCLI_ENGINE_TIMEOUT") or DEFAULT_TIMEOUT)
    answer = ask(root, op, payload, timeout=timeout)
    if answer is None or answer.get("mismatch"):
        return None
    if not answer.get("ok"):
        err = answer.get("error") or {}
        fields = tuple(str(f) for f in err.get("fields") or ())
        code = int(err.get("code", 3))
        raise EngineError(str(err.get("message")), err.get("hint"), code, fields)
    result: Any = answer["result"]  # the engine's JSON: checked, not assumed, for framed ops
    many = op == "file_context"  # a block for each file of a tool call
    if op in _FRAMED_OPS and not (
        isinstance(result, dict) and framed(result.get("text"), many=many)
    ):
        return None  # not the blocks memcli frames: the hook answers in process
    if op in _FRAMED_OPS and not _quoted(result.get("given", []), result["text"]):
        return None  # entries named that the block does not quote: answered in process
    return cast("dict[str, Any]", result)


#: Ops whose answer is a context block for an agent (``{"text": block}``); recall's and
#: file_context's name the entries the block quotes too (``"given"``: their texts), which
#: the hook records as given to its session once it has the answer.
_FRAMED_OPS = ("recall", "briefing", "file_context")


def _quoted(value: Any, text: str) -> bool:
    """Whether ``value`` is a list of texts that ``text`` (the block) each quotes: the
    entries the hook records as given."""
    return isinstance(value, list) and all(isinstance(v, str) and v in text for v in value)


def framed(text: Any, *, many: bool = False) -> bool:
    """Whether ``text`` is "" or one context block as :func:`memcli.search.context.render`
    frames it: a ``<<<BEGIN MEMORY m>>>`` line, a body under a ``## `` title, an
    ``<<<END MEMORY m>>>`` line, ``m`` the first 12 hex digits of the body's SHA-256. What an
    engine answers for a prompt goes to the agent only when it is (the same framing as in
    process, whoever answered). ``many``: one or more such blocks, each after a blank line
    (the file hook's answer for a tool call of several files)."""
    if text == "":
        return True
    if not isinstance(text, str):
        return False
    import re  # only a framed answer needs it

    block = re.compile(
        r"<<<BEGIN MEMORY ([0-9a-f]{12})>>>\n(## [^\n]*\n.*?)<<<END MEMORY \1>>>\n", re.DOTALL
    )
    at = 0
    while True:
        found = block.match(text, at)
        if found is None or sha256_hex(found.group(2).encode())[:12] != found.group(1):
            return False
        at = found.end()
        if at == len(text):
            return True
        if not many or not text.startswith("\n", at):
            return False
        at += 1


def _given_up_lately(root: Path) -> bool:
    """Whether a caller gave up on the engine that serves now less than
    :data:`BACKOFF_SECS` ago (a stopped or wedged engine then costs one call its timeout,
    not every call)."""
    try:
        failed = os.lstat(failure_marker(root)).st_mtime
        started = engine_files(root)[0].stat().st_mtime  # the socket: made when it started
    except OSError:
        return False
    return failed >= started and time.time() - failed < BACKOFF_SECS
