"""Counting the CPU instructions of a command with callgrind: the same count on every run,
whatever else the machine is doing, so two builds (or a build and its baseline) compare on a
shared machine too.

``PYTHONHASHSEED=0`` fixes the order of sets and dicts of strings; child processes are
counted too (``--trace-children=yes``: a cold index parses in a child), their counts summed.
Valgrind slows Python about 50 times: keep what is counted small.
"""

from __future__ import annotations

import re
import subprocess

#: One "Collected : N" line per process valgrind followed.
_COLLECTED = re.compile(r"Collected : (\d+)")


def grind_cmd(cmd: list[str]) -> list[str]:
    """``cmd`` under callgrind, children followed, no output file."""
    return [
        "valgrind",
        "--tool=callgrind",
        "--trace-children=yes",
        "--callgrind-out-file=/dev/null",
        *cmd,
    ]


def collected(stderr: str, cmd: list[str]) -> int:
    """The instructions valgrind reported in ``stderr``, summed over its processes."""
    counts = [int(n) for n in _COLLECTED.findall(stderr)]
    if not counts:
        raise SystemExit(f"valgrind gave no count for {cmd}: {stderr[-300:]}")
    return sum(counts)


def instructions(
    cmd: list[str],
    env: dict[str, str],
    stdin: bytes | None = None,
    *,
    warm_up: bool = True,
    cwd: str | None = None,
) -> int:
    """CPU instructions of one run of ``cmd`` (after a warm-up run that writes any cache,
    unless ``warm_up`` is False: a run that changes its input, such as a cold index)."""
    if warm_up:
        subprocess.run(
            cmd, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd
        )
    r = subprocess.run(
        grind_cmd(cmd),
        input=stdin,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**env, "PYTHONHASHSEED": "0"},
        cwd=cwd,
    )
    return collected(r.stderr.decode(errors="replace"), cmd)
