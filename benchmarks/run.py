"""Run every benchmark of ``benchmarks/`` (the ``make bench`` entry point).

Usage::

    python benchmarks/run.py [--quick] [--only NAME[,NAME...]] [--locomo PATH] [--no-write]

Runs, one after the other (they measure time, so never two at once):

* ``perf``: ``perf.py`` (index against the FTS5 floor, re-index, search latency, batch,
  peak RSS, scaling, start-up) at 1k, 10k and 100k files; ``--quick``: 1k files;
* ``bounds``: ``bounds_bench.py`` (peak RSS of a 50 MB index and a 100k-chunk search);
  ``--quick``: a 5 MB / 10k-chunk version;
* ``watch``: ``watch_bench.py`` (idle CPU, RSS and edit latency of ``memcli watch``);
  ``--quick``: 10 s idle, 20 edit cycles;
* ``vector``: ``vector_bench.py`` (sqlite-vec KNN against numpy) when numpy is installed
  (``pip install -e '.[bench]'``); ``--quick``: 2,000 chunks;
* ``local``: ``local_bench.py`` (the local embedding model: cold hybrid index against
  fastembed's floor, rebuild, whole-process searches); ``--quick``: one conversation;
* ``locomo``: ``locomo.py PATH`` (retrieval recall) only with ``--locomo PATH``;
* ``multilingual_bench``: keyword recall in Chinese, Japanese and Korean, and hybrid recall
  across languages with the multilingual model when its folder is found beside the project
  (``$MEMCLI_MULTILINGUAL_MODEL_DIR`` elsewhere);
* any other ``*_bench.py`` found in the folder, with ``--quick`` when it offers it (and, on
  a full run, ``--write-results`` when it offers that).

Each script's output is printed as it runs and kept in ``benchmarks/.work/run/NAME.log``;
a summary (exit code and seconds per script) goes to ``benchmarks/.work/run/summary.json``.
A full run also lets each script update its own section of ``benchmarks/RESULTS.md``; a quick
run (small sizes) or ``--no-write`` leaves that file alone. The exit code is 1 when a script
failed, else 0: the figures are printed and recorded, never asserted.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / ".work" / "run"

# name -> (script, full arguments, quick arguments, argument that writes RESULTS.md or None,
#          argument that stops it from writing RESULTS.md or None)
KNOWN: dict[str, tuple[str, list[str], list[str], str | None, str | None]] = {
    "perf": ("perf.py", [], ["--quick"], "--write-results", None),
    "bounds": (
        "bounds_bench.py",
        [],
        ["--mb", "5", "--chunks", "10000", "--small", "300"],
        "--write-results",
        None,
    ),
    "watch": (
        "watch_bench.py",
        [],
        ["--idle", "10", "--cycles", "20", "--files", "50", "--sample", "1"],
        None,
        "--no-write",
    ),
    "vector": ("vector_bench.py", [], ["--sizes", "2000", "--queries", "20"], None, None),
    "local": ("local_bench.py", [], ["--quick"], "--write-results", None),
}
NOT_BENCHMARKS = {"run.py", "corpus.py", "perf.py", "locomo.py", "sections.py"}


def plan(args: argparse.Namespace) -> list[tuple[str, list[str]]]:
    """(name, command) of every benchmark to run, in order."""
    write = not (args.quick or args.no_write)
    steps: list[tuple[str, list[str]]] = []
    for name, (script, full, quick, write_flag, no_write_flag) in KNOWN.items():
        if not (HERE / script).exists():
            continue
        if name == "vector" and importlib.util.find_spec("numpy") is None:
            print("vector: skipped (numpy is not installed: pip install -e '.[bench]')")
            continue
        cmd = [sys.executable, str(HERE / script), *(quick if args.quick else full)]
        if write and write_flag:
            cmd.append(write_flag)
        if not write and no_write_flag:
            cmd.append(no_write_flag)
        steps.append((name, cmd))
    known_scripts = {s for s, *_ in KNOWN.values()} | NOT_BENCHMARKS
    for path in sorted(HERE.glob("*_bench.py")):
        if path.name in known_scripts:
            continue
        cmd = [sys.executable, str(path)]
        offers = _help(path)
        if args.quick and "--quick" in offers:
            cmd.append("--quick")
        if write and "--write-results" in offers:
            cmd.append("--write-results")
        steps.append((path.stem, cmd))
    if args.locomo:
        steps.append(("locomo", [sys.executable, str(HERE / "locomo.py"), args.locomo]))
    if args.only:
        wanted = set(args.only.split(","))
        steps = [s for s in steps if s[0] in wanted]
    return steps


def _help(path: Path) -> str:
    try:
        return subprocess.run(
            [sys.executable, str(path), "--help"], capture_output=True, text=True, timeout=60
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def run_step(name: str, cmd: list[str]) -> dict[str, object]:
    """Run one benchmark, echoing its output and keeping it in a log file."""
    OUT.mkdir(parents=True, exist_ok=True)
    log_path = OUT / f"{name}.log"
    print(f"\n== {name}: {' '.join([Path(cmd[1]).name, *cmd[2:]])}")
    t0 = time.perf_counter()
    with log_path.open("w", encoding="utf-8") as log:
        proc = subprocess.Popen(
            cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            log.write(line)
        rc = proc.wait()
    seconds = time.perf_counter() - t0
    print(f"== {name}: exit {rc} after {seconds:.0f} s (log: {log_path.relative_to(ROOT)})")
    return {"name": name, "command": cmd, "exit": rc, "seconds": round(seconds, 1)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="small sizes; RESULTS.md is not changed")
    p.add_argument("--only", help="comma-separated names: perf, bounds, watch, vector, local...")
    p.add_argument("--locomo", help="LoCoMo-format JSON file: also run the retrieval benchmark")
    p.add_argument("--no-write", action="store_true", help="do not update benchmarks/RESULTS.md")
    args = p.parse_args(argv)
    steps = plan(args)
    results = [run_step(name, cmd) for name, cmd in steps]
    OUT.mkdir(parents=True, exist_ok=True)
    summary = {"when": time.strftime("%Y-%m-%d %H:%M"), "quick": args.quick, "runs": results}
    (OUT / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print("\n== summary")
    for r in results:
        print(f"  {r['name']:<8} exit {r['exit']}  {r['seconds']:>7.1f} s")
    return 1 if any(r["exit"] != 0 for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
