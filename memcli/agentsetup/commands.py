"""The commands an agent's settings run: memcli by its absolute path (never a bare ``memcli``
looked up on the agent's PATH: an agent started from a desktop has no virtualenv on it), the
MCP server entry and the hook commands, and whether that memcli can serve MCP (the ``mcp``
extra: without it the server entry is not written).
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

SERVER_NAME = "memcli"
MCP_HINT = "pip install 'memcli[mcp]' (in a checkout: make extras)"


def program() -> list[str]:
    """How the agent should start memcli: this program by its absolute path, or this Python
    by its absolute path with ``-m memcli``; never a bare ``memcli`` looked up on the
    agent's PATH (an agent started from a desktop has ``/usr/bin:/bin``)."""
    arg = sys.argv[0] if sys.argv else ""
    me = Path(os.path.abspath(arg)) if arg else None
    if me is not None and me.name == "memcli" and me.is_file() and os.access(me, os.X_OK):
        return [str(me)]
    return [os.path.abspath(sys.executable), "-m", "memcli"]


def _workspace_args(ws_root: Path, project: Path | None) -> list[str]:
    """``-w ROOT`` unless the agent's folder (``project``, None for any folder: user scope,
    where the workspace is found from the folder the agent runs in) is at or below the
    workspace."""
    if project is None or project == ws_root or ws_root in project.parents:
        return []
    return ["-w", str(ws_root)]


def server_entry(ws_root: Path, project: Path | None, prog: list[str]) -> dict[str, Any]:
    """The MCP server entry (``command`` and ``args``) that starts ``memcli mcp``."""
    return {"command": prog[0], "args": [*prog[1:], *_workspace_args(ws_root, project), "mcp"]}


def hook_command(ws_root: Path, project: Path | None, prog: list[str], event: str) -> str:
    return shlex.join([*prog, *_workspace_args(ws_root, project), "agent", "hook", event])


_HAS_MCP = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('mcp') else 3)"


def mcp_problem(prog: list[str]) -> str | None:
    """Why ``prog`` (a command line that starts memcli) could not serve MCP: it is not
    found, or its Python has no MCP SDK; None when it can (or when that cannot be told).
    The SDK is looked for, never imported (that takes seconds)."""
    return _mcp_problem(tuple(prog))


@functools.lru_cache(maxsize=16)
def _mcp_problem(prog: tuple[str, ...]) -> str | None:
    if not prog:
        return "no command"
    command = prog[0]
    exe = command if os.path.isabs(command) else shutil.which(command)
    if exe is None or not os.path.isfile(exe) or not os.access(exe, os.X_OK):
        return f"{command} is not found"
    python = exe if prog[1:3] == ("-m", "memcli") else _script_python(exe)
    if python is None:
        return None  # not a Python script memcli can read: cannot tell
    if os.path.abspath(python) == os.path.abspath(sys.executable):
        import importlib.util

        found = importlib.util.find_spec("mcp") is not None
    else:
        try:
            ran = subprocess.run([python, "-c", _HAS_MCP], capture_output=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return f"{python} does not run"
        if ran.returncode not in (0, 3):
            return f"{python} does not run"
        found = ran.returncode == 0
    return None if found else f"{exe} has no MCP SDK"


def _script_python(path: str) -> str | None:
    """The Python named by a console script's ``#!`` line (None: not one)."""
    try:
        with open(path, "rb") as fh:
            first = fh.readline(4096).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not first.startswith("#!"):
        return None
    words = first[2:].split()
    if len(words) == 2 and os.path.basename(words[0]) == "env":
        words = [shutil.which(words[1]) or words[1]]
    if len(words) != 1 or "python" not in os.path.basename(words[0]):
        return None
    return words[0]
