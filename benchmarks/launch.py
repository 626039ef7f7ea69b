"""Run a measured command from a small launcher process, so its peak RSS is its own.

On Linux a process's ``ru_maxrss`` starts from the memory of the process it was forked from:
``exec`` keeps the high-water mark of the address space it replaces. A child spawned by a
benchmark that holds 50 MiB would report at least 50 MiB however little it used. The
launcher is a bare interpreter (``-S``, a few MiB, less than any memcli process) that spawns
the command, reaps it with ``wait4`` and writes its wall time, exit code, peak RSS and CPU
time to a report file.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, NamedTuple

_LAUNCHER = """\
import os, sys, time
report, cmd = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
pid = os.posix_spawnp(cmd[0], cmd, os.environ)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t0
with open(report, "w") as fh:
    code = os.waitstatus_to_exitcode(status)
    fh.write(f"{wall} {code} {ru.ru_maxrss} {ru.ru_utime + ru.ru_stime}")
"""


class Measured(NamedTuple):
    wall: float  # seconds, from spawn to reaping, start-up of the launcher excluded
    rc: int
    rss_kb: int  # the command's own peak RSS, KiB
    cpu: float  # the command's user + system seconds


def measure(
    cmd: list[str],
    *,
    stdin: IO[bytes] | int | None = None,
    stdout: IO[bytes] | int | None = None,
    stderr: IO[bytes] | int | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | str | None = None,
) -> Measured:
    """Run ``cmd`` (standard streams as given) through the launcher; its own figures."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report"
        launcher = [sys.executable, "-S", "-c", _LAUNCHER, str(report), *cmd]
        subprocess.run(launcher, stdin=stdin, stdout=stdout, stderr=stderr, env=env, cwd=cwd)
        if not report.exists():
            raise RuntimeError(f"could not run {cmd[0]}")
        wall, rc, rss, cpu = report.read_text().split()
    rss_kb = int(rss) // 1024 if sys.platform == "darwin" else int(rss)  # bytes there
    return Measured(float(wall), int(rc), rss_kb, float(cpu))
