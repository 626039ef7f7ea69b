"""Whole-process time of the calls an agent makes most, as a user's install runs them: the
prompt hook, the file hook (a file the agent read, which a fact names) and ``search --json``,
with bare ``python -c pass`` beside them. Each hook run is a new session, so the facts are
given each time.

Usage::

    python benchmarks/hook_latency.py [--runs 11] [--venv DIR] [--instructions] [--isolated]

memcli is built as a wheel and installed (not editable) into a fresh venv with the locked
dependencies (``make smoke`` does the same), unless ``--venv`` names one already made. The
workspace holds a few facts; no engine runs; the user's config and runtime folders are those
platformdirs finds, as for an agent's hook, with ``$XDG_RUNTIME_DIR`` set to a private folder
when it is not set, as a login session has it (``--isolated``: this run's own folders). The four
commands alternate, ``--runs`` times each; medians are printed with the load average before
and after (``os.getloadavg``), which says how far to trust them. ``--instructions`` adds
their CPU instructions (callgrind, :mod:`grind`), which load does not change.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_guard import FACTS, PROMPT, child_env, file_payload, small_workspace  # noqa: E402
from grind import instructions  # noqa: E402


def installed_venv(folder: Path) -> Path:
    """A fresh venv with memcli's wheel and the locked dependencies; its bin folder."""
    dist = folder / "dist"
    pip = ["-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([sys.executable, *pip, "wheel", "--no-deps", "-w", str(dist), str(ROOT)])
    subprocess.run([sys.executable, "-m", "venv", str(folder / "venv")], check=True)
    wheel = next(dist.glob("memcli-*.whl"))
    lock = ROOT / ".ci" / "lock" / "demo.txt"
    py = str(folder / "venv" / "bin" / "python")
    subprocess.run([py, *pip, "install", "-c", str(lock), str(wheel)], check=True)
    return folder / "venv" / "bin"


def timed(cmd: list[str], env: dict[str, str], stdin: bytes | None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--venv", type=Path, help="a venv with memcli installed (bin folder)")
    ap.add_argument("--instructions", action="store_true", help="count instructions too")
    ap.add_argument(
        "--isolated",
        action="store_true",
        help="set MEMCLI_CONFIG_DIR and MEMCLI_RUNTIME_DIR (as the guard does) instead of using"
        " the user's folders, which platformdirs finds",
    )
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="memcli-latency-"))
    try:
        bin_dir = args.venv or installed_venv(tmp / "build")
        exe, py = str(bin_dir / "memcli"), str(bin_dir / "python")
        env = child_env(tmp)
        if not args.isolated:  # the user's config and runtime folders, as an agent's hook has
            del env["MEMCLI_CONFIG_DIR"], env["MEMCLI_RUNTIME_DIR"]
            if not env.get("XDG_RUNTIME_DIR"):  # as in a login session (systemd-logind sets it)
                (tmp / "xdg-runtime").mkdir(mode=0o700)
                env["XDG_RUNTIME_DIR"] = str(tmp / "xdg-runtime")
        ws = tmp / "ws"
        small_workspace(exe, ws, env)
        sessions = (f"s{n}" for n in range(10**6))  # a new session each run: never "given"

        def prompt() -> bytes:
            return json.dumps(
                {"session_id": next(sessions), "cwd": str(ws), "prompt": PROMPT}
            ).encode()

        runs: dict[str, tuple[list[str], Callable[[], bytes | None]]] = {
            "python -c pass": ([py, "-c", "pass"], lambda: None),
            "memcli agent hook prompt": ([exe, "-w", str(ws), "agent", "hook", "prompt"], prompt),
            "memcli agent hook file": (
                [exe, "-w", str(ws), "agent", "hook", "file"],
                lambda: file_payload(ws, next(sessions)),
            ),
            "memcli search --json": (
                [exe, "-w", str(ws), "search", "--json", "session cache"],
                lambda: None,
            ),
        }
        for name, (cmd, stdin) in runs.items():  # warm: the page cache, the freshness marks
            out = subprocess.run(cmd, input=stdin(), capture_output=True, env=env).stdout
            if "hook" in name and b"additionalContext" not in out:  # each hook gives its fact
                raise SystemExit(f"{name} gave no context: {out[:200]!r}")
        before = load()
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.runs):
            for name, (cmd, stdin) in runs.items():
                times[name].append(timed(cmd, env, stdin()))
        print(f"{len(FACTS)} facts, no engine, medians of {args.runs}")
        print(f"load average before: {before}, after: {load()}")
        for name, values in times.items():
            line = f"{name}: {statistics.median(values) * 1000:.1f} ms"
            if args.instructions:
                cmd, stdin = runs[name]
                line += f", {instructions(cmd, env, stdin()) / 1e6:.1f} M instructions"
            print(line)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
