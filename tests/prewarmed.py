"""``python -m memcli`` without LiteLLM's 4 s import in every process that calls a provider.

:func:`run` hands the command to a server (:mod:`tests.prewarmed_server`, one per test process,
started on first use) that imported LiteLLM once and forks a child for each command: the child
imports and runs memcli from nothing in the given folder, environment and standard input, as
``subprocess.run([sys.executable, "-m", "memcli", ...])`` would, and its exit code and output
come back the same way.
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

_SERVER = Path(__file__).with_name("prewarmed_server.py")
_EXEC = Path(__file__).with_name("prewarmed_exec.py")
_lock = threading.Lock()
_socket: str | None = None


def run(
    args: list[str],
    cwd: Path,
    env: dict[str, str],
    input: str | None = None,
    timeout: float = 120,
    module: str = "memcli",
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m MODULE ARGS`` in a fresh child of the prewarmed server."""
    request = {
        "module": module,
        "args": args,
        "cwd": str(cwd),
        "env": env,
        "input": input,
        "timeout": timeout,
    }
    with socket.socket(socket.AF_UNIX) as conn:
        conn.settimeout(timeout + 30)
        conn.connect(server())
        socket.send_fds(conn, [b"-"], [])  # no streams handed over: output to files
        conn.sendall(json.dumps(request).encode() + b"\n")
        conn.shutdown(socket.SHUT_WR)
        with conn.makefile("rb") as reader:
            answer = json.loads(reader.read().splitlines()[-1])
    return subprocess.CompletedProcess(
        [sys.executable, "-m", module, *args], answer["code"], answer["out"], answer["err"]
    )


def command(args: list[str]) -> list[str]:
    """A command line that runs ``python -m memcli ARGS`` as a child of the server, on the
    caller's standard streams (``tests/prewarmed_exec.py``): for a process a library starts,
    such as the MCP client's server."""
    return [sys.executable, str(_EXEC), server(), *args]


def server() -> str:
    """The socket of this process's server, started the first time."""
    global _socket
    with _lock:
        if _socket is None:
            path = os.path.join(tempfile.mkdtemp(prefix="memcli-prewarmed-"), "socket")
            proc = subprocess.Popen(
                [sys.executable, str(_SERVER), path],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )
            if proc.stdout is None or proc.stdout.readline().strip() != "ready":
                raise RuntimeError("the prewarmed memcli server did not start")
            atexit.register(proc.kill)
            _socket = path
        return _socket
