"""Reading a conversation file (the text itself is parsed by :mod:`memcli.flush.conversation`).

Two ways in:

- :func:`read_conversation`: a file a person named (``memcli flush FILE``, the library's
  ``FlushOptions(path=...)``): a regular file, or a pipe (``memcli flush <(cmd)``) read to its
  end; a folder or a device is refused.
- :func:`agent_file` and :func:`read_agent_file`: a file an agent named (a hook payload's
  ``transcript_path``, checked by the hook and read again, checked again, by the detached
  ``memcli agent flush-session``; a failed session's record, read by ``--due``; the MCP
  ``flush`` tool's ``path``). An agent's words may come from a
  prompt injection, so only a regular file inside the workspace (not a hidden one: ``.env``,
  ``.git/``, ``.memcli/``) or in an agent's own transcript folders is accepted,
  links resolved: Claude Code's ``$CLAUDE_CONFIG_DIR/projects`` (default
  ``~/.claude/projects``), Codex's ``$CODEX_HOME/sessions`` and ``archived_sessions``
  (default ``~/.codex``), Gemini CLI's ``~/.gemini/tmp``.

Both read at most :data:`MAX_CONVERSATION_BYTES`: a larger file is refused before it is read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from memcli.errors import BadInput, PathOutsideWorkspace

__all__ = [
    "MAX_CONVERSATION_BYTES",
    "agent_file",
    "read_agent_file",
    "read_conversation",
    "transcript_folders",
]

#: The largest conversation file read: 64 MiB. A Claude Code transcript of a long session
#: (tool output and pasted images included) runs to tens of MiB, and what a flush sends is
#: bounded by ``llm.max_chars`` and ``llm.max_requests`` anyway; a larger file is a mistake
#: (a log, a database) or an attack (``/dev/zero``), refused before memory runs out.
MAX_CONVERSATION_BYTES = 64 * 1024 * 1024
_HINT = "give a conversation file, or - for stdin"


def read_conversation(spec: str | Path) -> str:
    """The text of conversation file ``spec`` (``~`` expanded, a UTF-8 BOM dropped).

    A pipe or other stream (``memcli flush <(cmd)``, a named pipe) is read to its end like a
    file; a folder, a device or a missing path is refused, and so is anything over
    :data:`MAX_CONVERSATION_BYTES`."""
    path = Path(spec).expanduser()
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise BadInput(f"no such file: {spec}", hint=_HINT) from None
    except OSError as exc:
        raise BadInput(f"cannot read {spec}: {exc.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise BadInput(f"{spec} is a folder", hint=_HINT)
    pipe = stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode)
    if not pipe and not stat.S_ISREG(st.st_mode):
        raise BadInput(f"{spec} is not a regular file", hint=_HINT)
    # a pipe is opened blocking (it waits for its writer); a file without blocking, so that
    # a file swapped for a pipe since the stat cannot hang the open
    flags = os.O_RDONLY | os.O_CLOEXEC | (0 if pipe else os.O_NONBLOCK)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise BadInput(f"cannot read {spec}: {exc.strerror}") from None
    return _decode(_read_capped(fd, str(spec), regular_only=not pipe), str(spec))


def transcript_folders() -> tuple[Path, ...]:
    """The folders where coding agents keep their session files, as the agents choose them
    (each agent's :meth:`~memcli.agents.base.Agent.transcript_folders`)."""
    from memcli.agents.registry import transcript_folders as folders

    return folders()


def agent_file(spec: str | Path, root: Path, what: str) -> Path:
    """The file an agent named as ``what`` (``transcript_path``, ``path``), links resolved;
    a relative path is taken from the workspace at ``root``. Refused (BadInput) unless it
    is a regular file of at most :data:`MAX_CONVERSATION_BYTES` in the workspace (none of
    its folders or its name hidden: ``.env``, ``.git/``, ``.memcli/``) or in
    :func:`transcript_folders`.
    Nothing is read: only the path and the file's type and size are looked at."""
    shown = str(spec)[:300]
    path = Path(spec).expanduser()
    if not path.is_absolute():
        path = root / path
    try:
        real = path.resolve()  # where it leads is checked first: no oracle of what exists
    except (OSError, RuntimeError) as exc:  # RuntimeError: a loop of links
        raise BadInput(f"{what}: cannot read {shown!r}: {exc}") from None
    in_agents = any(real.is_relative_to(_resolved(f)) for f in transcript_folders())
    ws = root.resolve()
    if not in_agents and not real.is_relative_to(ws):
        raise PathOutsideWorkspace(
            f"{what}: path {shown!r} is outside the workspace and the agents' transcript folders",
            hint="memcli reads a conversation file in the workspace or in an agent's"
            " session folders (Claude Code's projects/, Codex's sessions/, Gemini CLI's tmp/)",
        )
    if not in_agents and any(part.startswith(".") for part in real.relative_to(ws).parts):
        raise PathOutsideWorkspace(
            f"{what}: path {shown!r} is not a conversation file memcli reads"
            " (hidden files and folders, such as .env, .git/ and .memcli/, are never read)"
        )
    try:
        st = os.stat(real)
    except FileNotFoundError:
        raise BadInput(f"{what}: no such file: {shown!r}", hint=_HINT) from None
    except OSError as exc:
        raise BadInput(f"{what}: cannot read {shown!r}: {exc.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise BadInput(f"{what}: {shown!r} is not a regular file", hint=_HINT)
    if st.st_size > MAX_CONVERSATION_BYTES:
        raise BadInput(
            f"{what}: {shown!r} is {_mib(st.st_size)}, over the {_mib_cap()} memcli reads"
        )
    return real


def read_agent_file(spec: str | Path, root: Path, what: str) -> str:
    """The text of the conversation file an agent named (:func:`agent_file`), read without
    following a link put in its place since it was checked."""
    real = agent_file(spec, root, what)
    try:
        fd = os.open(real, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError as exc:
        raise BadInput(f"{what}: cannot read {str(spec)[:300]!r}: {exc.strerror}") from None
    return _decode(_read_capped(fd, f"{what}: {str(spec)[:300]!r}", regular_only=True), str(spec))


def _resolved(folder: Path) -> Path:
    try:
        return folder.resolve()
    except (OSError, RuntimeError):
        return folder


def _read_capped(fd: int, shown: str, *, regular_only: bool) -> bytes:
    """At most :data:`MAX_CONVERSATION_BYTES` of ``fd`` (closed after), refused beyond."""
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if regular_only and not stat.S_ISREG(st.st_mode):
            raise BadInput(f"{shown} is not a regular file", hint=_HINT)
        if stat.S_ISREG(st.st_mode) and st.st_size > MAX_CONVERSATION_BYTES:
            raise BadInput(f"{shown} is {_mib(st.st_size)}, over the {_mib_cap()} memcli reads")
        try:
            data = fh.read(MAX_CONVERSATION_BYTES + 1)
        except OSError as exc:
            raise BadInput(f"cannot read {shown}: {exc.strerror}") from None
    if len(data) > MAX_CONVERSATION_BYTES:
        raise BadInput(f"{shown} is over the {_mib_cap()} memcli reads", hint=_HINT)
    return data


def _decode(data: bytes, spec: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise BadInput(f"{spec[:300]} is not valid UTF-8 text") from None


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"


def _mib_cap() -> str:
    return f"{MAX_CONVERSATION_BYTES // (1024 * 1024)} MiB"
