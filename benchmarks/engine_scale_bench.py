"""The warm engine as workspaces grow, and an engine left running: search time from 1k to 100k
files with and without ``memcli serve``, and an idle engine's CPU, memory and open files over
1,000 edits.

Usage::

    python benchmarks/engine_scale_bench.py [--quick] [--sizes 1000,10000,100000]
                                            [--runs N] [--idle S] [--edits N] [--write-results]

*Scale*: for each size the deterministic corpus of ``benchmarks/corpus.py`` (shared with
``perf.py`` under ``benchmarks/.work/corpus-<size>/``) is indexed, then the median wall time of
whole-process ``memcli search --json`` (keyword, the same queries at every size) is taken three
ways: in process with ``index.freshness = "auto"`` (the default: every file's stat below
``index.full_check_files``, above it the folders' times and the files changed last, with a full
check at most ``index.full_check_secs`` apart), in process with ``"full"`` (every file's stat),
and through an engine (``memcli serve --detach``, watching; one per size, all running). Runs
are interleaved query by query and size by size, so the machine's drift moves every size
alike; the slowest ``auto`` run is given too (it may hold a periodic full check).

*Idle*: an engine on the 1k corpus, sampled from ``/proc``: CPU over ``--idle`` seconds with
no request, then ``--edits`` edits (an entry appended to a file, every tenth a new file, one
every 50 ms) with a search through the engine after every tenth; open file descriptors,
threads and RSS before the edits, after a tenth of them and after all.

Figures are printed as Markdown; ``--write-results`` replaces the ``engine-scale`` section of
``benchmarks/RESULTS.md``. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpus as corpus_mod  # noqa: E402
from perf import WORK, corpus_dir, make_queries, settle  # noqa: E402
from sections import write_section  # noqa: E402

MEMCLI = [sys.executable, "-m", "memcli"]
TICK = os.sysconf("SC_CLK_TCK")


def memcli(root: Path, *args: str, env: dict[str, str] | None = None) -> tuple[float, str]:
    """(seconds, stdout) of one whole ``memcli`` process; exits on an unexpected failure."""
    t0 = time.perf_counter()
    r = subprocess.run(
        [*MEMCLI, "-q", "-w", str(root), *args],
        capture_output=True,
        text=True,
        timeout=3600,
        env={**os.environ, **(env or {})},
    )
    took = time.perf_counter() - t0
    if r.returncode not in (0, 1):
        raise SystemExit(f"memcli {' '.join(args)} failed ({r.returncode}): {r.stderr.strip()}")
    return took, r.stdout


def start_engine(root: Path) -> tuple[int, float, float]:
    """Start an engine and wait until it is warm: (pid, seconds until its watcher's first
    sync was done, seconds until the score bounds of the index's common terms were learnt)."""
    t0 = time.perf_counter()
    _, out = memcli(root, "serve", "--detach", "--json")
    pid = int(json.loads(out)["engine"]["pid"])
    deadline = time.monotonic() + 600
    watching = None
    while time.monotonic() < deadline:  # its watcher's first sync done: searches trust it
        _, out = memcli(root, "serve", "--status", "--json")
        info = json.loads(out)["engine"]
        if watching is None and info.get("watch_ready"):
            watching = time.perf_counter() - t0
        if watching is not None and (info.get("bounds") or {}).get("ready"):
            return pid, watching, time.perf_counter() - t0
        time.sleep(0.5)
    raise SystemExit("the engine did not get ready")


def stop_engine(root: Path) -> None:
    memcli(root, "serve", "--stop")


# -- scale ------------------------------------------------------------------------------------
def prepare(size: int, log: Any) -> Path:
    """The corpus of ``size`` files, indexed, its page cache warm."""
    ws = corpus_dir(size)
    ws.mkdir(parents=True, exist_ok=True)
    manifest = corpus_mod.generate(ws, size, quiet=True)
    took, _ = memcli(ws, "index")
    log(f"[{size}] corpus {manifest['bytes'] / 1e6:.1f} MB, index {took:.1f} s")
    settle(ws / "corpus.json")
    memcli(ws, "search", "--json", "warm the page cache")
    return ws


def scale(sizes: list[int], runs: int, log: Any) -> list[dict[str, Any]]:
    """Whole-process search times at every size, three ways. Sizes are interleaved query by
    query (the machine's drift then moves every size alike: the ratios are what count)."""
    spaces = {size: prepare(size, log) for size in sizes}
    full = {"MEMCLI_INDEX_FRESHNESS": "full"}
    queries = make_queries(spaces[sizes[-1]], runs)
    times = {size: {"auto": [], "full": [], "engine": []} for size in sizes}
    for q in queries:  # in process, both ways
        for size, ws in spaces.items():
            times[size]["auto"].append(memcli(ws, "search", "--json", q)[0])
            times[size]["full"].append(memcli(ws, "search", "--json", q, env=full)[0])
    ready: dict[int, float] = {}
    learnt: dict[int, float] = {}
    try:
        for size, ws in spaces.items():
            _, ready[size], learnt[size] = start_engine(ws)
        for q in queries:
            for size, ws in spaces.items():
                times[size]["engine"].append(memcli(ws, "search", "--json", q)[0])
    finally:
        for ws in spaces.values():
            stop_engine(ws)
    rows = []
    for size in sizes:
        med = {k: statistics.median(v) for k, v in times[size].items()}
        slowest = max(times[size]["auto"]) * 1000
        log(
            f"[{size}] auto {med['auto'] * 1000:.0f} ms (slowest {slowest:.0f}),"
            f" full {med['full'] * 1000:.0f} ms, engine {med['engine'] * 1000:.0f} ms"
            f" (ready in {ready[size]:.1f} s, bounds in {learnt[size]:.1f} s)"
        )
        rows.append(
            {
                "files": size,
                "ms": {k: v * 1000 for k, v in med.items()},
                "auto_slowest_ms": slowest,
                "engine_ready_s": ready[size],
                "engine_bounds_s": learnt[size],
            }
        )
    return rows


# -- idle -------------------------------------------------------------------------------------
def sample(pid: int) -> dict[str, float]:
    """CPU seconds, RSS (MiB), open descriptors and threads of a process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    status = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return {
        "cpu": (int(fields[11]) + int(fields[12])) / TICK,
        "rss": int(status["VmRSS"].split()[0]) / 1024,
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
        "threads": int(status["Threads"]),
    }


def idle(size: int, idle_s: float, edits: int, log: Any) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="memcli-engine-idle-") as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        corpus_mod.generate(ws, size, quiet=True)
        memcli(ws, "index")
        settle(ws / "corpus.json")
        pid, _, _ = start_engine(ws)
        try:
            memcli(ws, "search", "--json", "first search")
            before_idle = sample(pid)
            time.sleep(idle_s)
            after_idle = sample(pid)
            cpu_pct = 100 * (after_idle["cpu"] - before_idle["cpu"]) / idle_s
            log(f"[idle] {idle_s:.0f} s: {cpu_pct:.3f} % of a core")
            files = sorted((ws / "memory").rglob("*.md"))
            rng = random.Random(11)
            marks: dict[str, dict[str, float]] = {"start": after_idle}
            searched: list[float] = []
            series: list[dict[str, float]] = []  # at each tenth of the edits
            t0 = time.perf_counter()
            for i in range(edits):
                if i % 10 == 9:
                    new = ws / "memory" / "edits" / f"{date.today()}-{i}.md"
                    new.parent.mkdir(exist_ok=True)
                    new.write_text(f"- Edit {i}: a new file about zebrafish{i}.\n")
                    searched.append(memcli(ws, "search", "--json", f"zebrafish{i}")[0])
                else:
                    with open(rng.choice(files), "a", encoding="utf-8") as f:
                        f.write(f"- Edit {i}: appended note on kiwifruit{i}.\n")
                    time.sleep(0.05)
                if (i + 1) % max(1, edits // 10) == 0:
                    series.append(sample(pid))
                    if len(series) == 1:
                        marks["tenth"] = series[0]
            took = time.perf_counter() - t0
            time.sleep(3)  # the last batch synced
            marks["end"] = sample(pid)
            _, out = memcli(ws, "search", "--json", f"kiwifruit{edits - 2}")
            last_found = bool(json.loads(out)["results"])
            edit_cpu = marks["end"]["cpu"] - marks["start"]["cpu"]
        finally:
            stop_engine(ws)
    log(
        f"[idle] {edits} edits in {took:.0f} s;"
        f" fds {marks['start']['fds']} -> {marks['end']['fds']}"
    )
    return {
        "files": size,
        "idle_s": idle_s,
        "idle_cpu_pct": cpu_pct,
        "edits": edits,
        "edits_s": took,
        "edit_cpu_s": edit_cpu,
        "marks": marks,
        "series": series,
        "search_ms": statistics.median(searched) * 1000 if searched else None,
        "last_edit_found": last_found,
    }


# -- report -----------------------------------------------------------------------------------
def render(rows: list[dict[str, Any]], idle_res: dict[str, Any] | None, cmd: str) -> str:
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    out = [
        "## A warm engine at 1k to 100k files",
        "",
        f"`{cmd}` on {machine}, {date.today()}. Whole-process `memcli search --json` (keyword,"
        " spawn to exit), medians over the same queries at every size, run interleaved size by"
        " size (an engine for each size running at once); the corpus of `benchmarks/corpus.py`."
        " The machine is shared: read the ratios.",
        "",
        '| files | in process, freshness "auto" (slowest) | in process, "full" |'
        " through the engine |",
        "|---:|---:|---:|---:|",
    ]
    for r in rows:
        ms = r["ms"]
        out.append(
            f"| {r['files']:,} | {ms['auto']:.0f} ms ({r['auto_slowest_ms']:.0f} ms)"
            f" | {ms['full']:.0f} ms | {ms['engine']:.0f} ms |"
        )
    if len(rows) > 1:
        a, b = rows[0], rows[-1]
        out += [
            "",
            f"From {a['files']:,} to {b['files']:,} files: "
            + ", ".join(
                f"{name} x{b['ms'][k] / a['ms'][k]:.2f}"
                for k, name in (
                    ("auto", "auto (the default)"),
                    ("full", "full check"),
                    ("engine", "engine"),
                )
            )
            + f". The engine was ready (watcher established, first sync done) in"
            f" {b['engine_ready_s']:.1f} s at {b['files']:,} files, and had learnt the score"
            f" bounds of the index's common terms (in the background) after"
            f" {b['engine_bounds_s']:.1f} s; the searches were timed after that.",
        ]
    if idle_res:
        m = idle_res["marks"]
        out += [
            "",
            f"An idle engine on {idle_res['files']:,} files: {idle_res['idle_cpu_pct']:.3f} % of"
            f" one core over {idle_res['idle_s']:.0f} s. Then {idle_res['edits']:,} edits in"
            f" {idle_res['edits_s']:.0f} s (a search through the engine after every tenth,"
            f" median {idle_res['search_ms']:.0f} ms; the last edit found:"
            f" {'yes' if idle_res['last_edit_found'] else 'no'}), engine CPU"
            f" {idle_res['edit_cpu_s']:.1f} s:",
            "",
            "| | before the edits | after a tenth | after all |",
            "|---|---:|---:|---:|",
            "| RSS | "
            + " | ".join(f"{m[k]['rss']:.1f} MiB" for k in ("start", "tenth", "end"))
            + " |",
            "| open descriptors | "
            + " | ".join(f"{m[k]['fds']:.0f}" for k in ("start", "tenth", "end"))
            + " |",
            "| threads | "
            + " | ".join(f"{m[k]['threads']:.0f}" for k in ("start", "tenth", "end"))
            + " |",
            "",
            "At each tenth of the edits: RSS "
            + ", ".join(f"{x['rss']:.1f}" for x in idle_res["series"])
            + " MiB; descriptors "
            + ", ".join(f"{x['fds']:.0f}" for x in idle_res["series"])
            + ".",
        ]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="1k and 5k files, 10 s idle, 100 edits")
    p.add_argument("--sizes", default=None, help="file counts (default 1000,10000,100000)")
    p.add_argument("--runs", type=int, default=15, help="queries per figure")
    p.add_argument("--idle", type=float, default=None, help="idle seconds (default 120)")
    p.add_argument("--edits", type=int, default=None, help="edits (default 1000)")
    p.add_argument("--write-results", action="store_true")
    args = p.parse_args(argv)
    sizes = [
        int(s)
        for s in (args.sizes or ("1000,5000" if args.quick else "1000,10000,100000")).split(",")
    ]
    idle_s = args.idle if args.idle is not None else (10 if args.quick else 120)
    edits = args.edits if args.edits is not None else (100 if args.quick else 1000)
    runs = 7 if args.quick else args.runs
    WORK.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="memcli-engine-scale-") as tmp:
        for name in ("RUNTIME", "CONFIG", "CACHE"):
            os.environ[f"MEMCLI_{name}_DIR"] = str(Path(tmp) / name.lower())
        os.environ.pop("MEMCLI_INDEX_FRESHNESS", None)

        def log(msg: str) -> None:
            print(msg, file=sys.stderr, flush=True)

        rows = scale(sizes, runs, log)
        idle_res = idle(sizes[0], idle_s, edits, log) if edits or idle_s else None
    cmd = "python benchmarks/engine_scale_bench.py " + " ".join(argv or sys.argv[1:])
    markdown = render(rows, idle_res, cmd.strip())
    print(markdown)
    if args.write_results:
        write_section("engine-scale", markdown)


if __name__ == "__main__":
    main()
