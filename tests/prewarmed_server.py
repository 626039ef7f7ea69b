"""A Python that has imported LiteLLM once and forks a fresh ``python -m memcli`` per request.

Run by :mod:`tests.prewarmed` (``python tests/prewarmed_server.py SOCKET``); nothing of memcli
is imported here, so each child starts memcli from nothing, as ``python -m memcli`` does, and
finds only LiteLLM (about 4 s to import) and the MCP SDK already loaded. One request a
connection: a byte, with the caller's standard streams attached (``tests/prewarmed_exec.py``)
or none (output to files), then ``{"module", "args", "cwd", "env", "input", "timeout"}`` as a
JSON line; answered ``{"pid"}`` at once, then ``{"code"}`` (and ``"out"``, ``"err"`` when the
output went to files), ``code`` as :class:`subprocess.CompletedProcess` gives it (negative:
killed by a signal).
"""

from __future__ import annotations

import json
import os
import runpy
import shutil
import signal
import socket
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # as memcli's loader does
import litellm  # noqa: F401  - the point of this process

try:  # what `memcli mcp` loads in its background thread (1 to 3 s)
    import mcp.server.mcpserver  # noqa: F401
    import mcp_types  # noqa: F401
except ImportError:  # without the MCP extra
    pass


def main(path: str) -> None:
    """Serve requests on the Unix socket ``path`` while the process that started it lives."""
    os.chdir("/")
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # runners are reaped by the kernel
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(16)
    listener.settimeout(2)
    parent = os.getppid()
    print("ready", flush=True)
    while os.getppid() == parent:  # the test process is gone: so is this one
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            continue
        conn.settimeout(None)
        if os.fork() == 0:
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            serve(conn)  # exits in the memcli child; returns in the runner
            os._exit(0)
        conn.close()


def serve(conn: socket.socket) -> None:
    """Run one request in a child of this runner and send back what it did: a line with the
    child's pid, then one with its exit code (and, unless the caller handed its own standard
    streams over with the request, its output)."""
    _, fds, _, _ = socket.recv_fds(conn, 1, 3)
    with conn.makefile("rb") as reader:
        request = json.loads(reader.readline())
    tmp = tempfile.mkdtemp(prefix="memcli-run-")  # no `with`: the child unwinds through here
    files = {name: Path(tmp, name) for name in ("in", "out", "err")}
    files["in"].write_text(request["input"] or "")
    pid = os.fork()
    if pid == 0:
        conn.close()
        run_memcli(request, files, fds)  # never returns
    for fd in fds:
        os.close(fd)
    conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
    answer: dict[str, Any] = {"code": wait(pid, request["timeout"])}
    if not fds:
        answer["out"] = files["out"].read_text(errors="replace")
        answer["err"] = files["err"].read_text(errors="replace")
    shutil.rmtree(tmp)
    conn.sendall(json.dumps(answer).encode() + b"\n")
    conn.close()


def wait(pid: int, timeout: float) -> int:
    """The child's exit code, killing it after ``timeout`` seconds (code -9)."""
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)


def run_memcli(request: dict[str, Any], files: dict[str, Path], fds: list[int]) -> None:
    """Become ``python -m MODULE ARGS`` in ``cwd`` with ``env``, on the standard streams
    ``fds`` handed over (else the files), and exit as the interpreter would."""
    if not fds:
        stdin = files["in"] if request["input"] is not None else Path(os.devnull)
        fds = [
            os.open(stdin, os.O_RDONLY),
            os.open(files["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
            os.open(files["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        ]
    for fd, opened in enumerate(fds):
        os.dup2(opened, fd)
        os.close(opened)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # state Python keeps from its own start: read the new environment
    time.tzset()
    sys.path[0] = os.getcwd()  # what `python -m` puts first
    sys.argv = ["-m", *request["args"]]
    code: Any = 0
    try:
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = exc.code
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.exit(code)  # unwinds out of the server loop: atexit, thread joins, flushes as usual


if __name__ == "__main__":
    main(sys.argv[1])
