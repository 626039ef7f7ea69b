"""Asking a workspace's engine (``memcli serve``), if one answers, instead of working in
process. Any failure (no socket, a stale one, one in a folder or with a mode that lets another
local user stand in for it (:func:`memcli.engine.paths.engine_problem`), an engine of another
version, one that does not answer within the timeout) returns None: the caller answers in
process."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from memcli.engine.paths import engine_files, engine_problem, failure_marker

__all__ = ["PROTOCOL", "ask"]

#: Bumped when requests or answers change shape; the engine's memcli version must match too.
PROTOCOL = 1
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
