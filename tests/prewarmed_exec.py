"""``python tests/prewarmed_exec.py SOCKET ARGS...``: run ``python -m memcli ARGS`` as a child of
the prewarmed server at ``SOCKET`` (:mod:`tests.prewarmed`) on this process's own standard
streams, in its folder and environment; exit with the child's code. SIGTERM and SIGINT are
passed on to the child."""

import json
import os
import signal
import socket
import sys


def main() -> int:
    path, args = sys.argv[1], sys.argv[2:]
    request = {
        "module": "memcli",
        "args": args,
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "input": None,
        "timeout": 3600,
    }
    with socket.socket(socket.AF_UNIX) as conn:
        conn.connect(path)
        socket.send_fds(conn, [b"+"], [0, 1, 2])
        conn.sendall(json.dumps(request).encode() + b"\n")
        conn.shutdown(socket.SHUT_WR)
        with conn.makefile("rb") as reader:
            pid = json.loads(reader.readline())["pid"]
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, lambda n, _f: os.kill(pid, n))
            code = int(json.loads(reader.readline())["code"])
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
