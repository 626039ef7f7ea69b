"""Interleaved A/B of two memcli builds on whole commands: ``--help``, ``search --json`` on
10k files, a cold ``index`` of 1k files (medians; the two builds alternate, so load on the
machine hits both alike).

Usage::

    python benchmarks/ab_startup.py BEFORE/bin/memcli AFTER/bin/memcli [--rounds 21]
    python benchmarks/ab_startup.py BEFORE/bin/memcli AFTER/bin/memcli --instructions

``--instructions`` counts the CPU instructions of ``--help`` and of a search instead
(``valgrind --tool=callgrind``, ``PYTHONHASHSEED=0``): the same count on every run whatever
else the machine is doing, so two builds compare on a shared machine too.

Each build should be a regular (not editable) install in its own venv: an editable install
adds an import hook to every memcli module. The corpora come from ``perf.py`` runs
(``benchmarks/.work/corpus-{1000,10000}``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
sys.path.insert(0, str(HERE))

from grind import instructions  # noqa: E402  (benchmarks/grind.py: callgrind counts)


def timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def copy_corpus(size: int) -> str:
    folder = tempfile.mkdtemp(prefix="memcli-ab-")
    shutil.copytree(WORK / f"corpus-{size}" / "memory", Path(folder) / "memory")
    return folder


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--instructions", action="store_true", help="count instructions (callgrind)")
    args = ap.parse_args()
    builds = {"before": args.before, "after": args.after}
    env = {
        **os.environ,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "MEMCLI_CACHE_DIR": tempfile.mkdtemp(),
        "MEMCLI_CONFIG_DIR": tempfile.mkdtemp(),
    }
    workspaces = {}
    for name, exe in builds.items():  # each build searches an index it made itself
        workspaces[name] = copy_corpus(10000)
        subprocess.run([exe, "-w", workspaces[name], "-q", "index"], env=env, check=True)
    if args.instructions:
        counts: dict[str, dict[str, int]] = {}
        for name, exe in builds.items():
            ws = workspaces[name]
            counts[name] = {
                "--help": instructions([exe, "--help"], env),
                "search --json (10k files)": instructions(
                    [exe, "-w", ws, "search", "--json", "deploy rollback token"], env
                ),
            }
        for label, before in counts["before"].items():
            after = counts["after"][label]
            print(f"{label}: {before:,} -> {after:,} instructions ({after / before:.3f}x)")
        return 0
    times: dict[str, list[float]] = {}
    for i in range(args.rounds):
        order = list(builds.items()) if i % 2 == 0 else list(builds.items())[::-1]
        for name, exe in order:
            ws = workspaces[name]
            times.setdefault(f"--help {name}", []).append(timed([exe, "--help"], env))
            search = [exe, "-w", ws, "search", "--json", "deploy rollback token"]
            times.setdefault(f"search {name}", []).append(timed(search, env))
        bare = [sys.executable, "-S", "-c", "pass"]
        times.setdefault("bare python", []).append(timed(bare, env))
    for i in range(5):
        order = list(builds.items()) if i % 2 == 0 else list(builds.items())[::-1]
        for name, exe in order:
            ws = copy_corpus(1000)
            times.setdefault(f"index {name}", []).append(timed([exe, "-w", ws, "-q", "index"], env))
            shutil.rmtree(ws)
    for ws in workspaces.values():
        shutil.rmtree(ws)
    for label, values in times.items():
        print(f"{label}: {statistics.median(values) * 1000:.1f} ms (median of {len(values)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
