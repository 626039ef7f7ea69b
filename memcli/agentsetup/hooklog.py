"""The hook events memcli installs into coding agents and the agent log their hooks write.

:data:`EVENTS` names each event as ``memcli agent hook EVENT`` takes it and as the agent
calls it (``hookEventName``); :mod:`memcli.agents.setup` writes one hook per event and
the hook runner (:mod:`memcli.agent.hook_runner`) answers them. A hook never fails the agent: what
goes wrong is written to ``.memcli/agent.log`` (:func:`log_event`), which ``memcli agent
status`` and ``memcli doctor`` read (:func:`read_log`). No imports beyond the standard library
at load: the prompt hook loads this module on every prompt.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

__all__ = ["EVENTS", "LOG_NAME", "log_event", "log_line", "log_path", "read_log", "shown"]

#: Hook events and the name the agent gives each in ``hookEventName``.
EVENTS = {
    "session-start": "SessionStart",
    "prompt": "UserPromptSubmit",
    "pre-compact": "PreCompact",
    "session-end": "SessionEnd",
    "file": "PostToolUse",  # a file read or edited: the facts linked to it
}
LOG_NAME = "agent.log"
_LOG_MAX_BYTES = 256 * 1024


def log_path(root: Path) -> Path:
    """The agent log of the workspace at ``root``."""
    from memcli.statedir import state_path

    return state_path(root, LOG_NAME)


def shown(value: object, limit: int = 200) -> str:
    """An untrusted value (from a payload) as it goes into a log line: shell-quoted, with
    every character that does not print escaped, and cut to ``limit`` characters."""
    import shlex

    text = str(value)[:limit]
    text = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)
    return shlex.quote(text)


def log_line(event: str, message: str) -> str:
    """One log line: the time, the event and the message on one line, with every character
    that does not print escaped (a payload's text cannot start a line of its own)."""
    text = " ".join(message.split())
    text = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)
    return f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {event} {text}\n"


def log_event(root: Path | None, event: str, message: str) -> None:
    """Append one line to the workspace's agent log (to stderr when there is no workspace);
    the log is cut to its newer half once it passes 256 KiB. The log is written without
    following links (:mod:`memcli.statedir`). Never raises."""
    line = log_line(event, message)
    try:
        if root is None:
            sys.stderr.write(f"memcli: {line}")
            return
        from memcli.statedir import append_text, read_text, write_text

        path = log_path(root)
        if append_text(path, line) > _LOG_MAX_BYTES:
            keep = read_text(path, _LOG_MAX_BYTES // 2)
            write_text(path, keep[keep.find("\n") + 1 :])
    except OSError:
        pass


def read_log(root: Path, limit: int = 20) -> list[str]:
    """The last ``limit`` lines of the agent log (none when there is no log)."""
    from memcli.statedir import read_text

    try:
        lines = read_text(log_path(root), _LOG_MAX_BYTES).splitlines()
    except OSError:
        return []
    return lines[-limit:]
