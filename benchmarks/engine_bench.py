"""The warm engine (``memcli serve``): whole-process search with and without it.

Usage::

    python benchmarks/engine_bench.py [--quick] [--runs N] [--model-dir DIR] [--clients N]
                                       [--calls N] [--write-results]

On the LoCoMo dev conversations as one workspace, medians of whole-process
``memcli search --json`` (spawn to exit) for new queries (never searched before, so a hybrid
search must embed them), in keyword mode and, when the local model folder is found
(``--model-dir``, ``$MEMCLI_TEST_MODEL_DIR`` or ``../shared/models/all-MiniLM-L6-v2-onnx``),
in hybrid mode with it: without an engine, then with ``memcli serve --detach`` running.
Also 8 clients x 200 mixed searches and adds against one engine: errors, lost facts, p95.
Figures are printed as Markdown; ``--write-results`` replaces the ``engine`` section of
``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import date
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import locomo  # noqa: E402
from sections import write_section  # noqa: E402

DEFAULT_LOCOMO = HERE.parent.parent / "shared" / "data" / "locomo-dev.json"
DEFAULT_MODEL = HERE.parent.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
MEMCLI = [sys.executable, "-m", "memcli"]


def memcli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MEMCLI, "-q", "-w", str(root), *args], capture_output=True, text=True, timeout=300
    )


def timed_searches(root: Path, queries: list[str], *extra: str) -> float:
    """Median seconds of whole-process searches, one per query."""
    times = []
    for q in queries:
        t0 = time.perf_counter()
        r = memcli(root, "search", "--json", *extra, q)
        times.append(time.perf_counter() - t0)
        if r.returncode not in (0, 1):
            raise SystemExit(f"search failed: {r.stderr}")
    return statistics.median(times)


def mode_of(root: Path, query: str, *extra: str) -> str:
    return str(json.loads(memcli(root, "search", "--json", *extra, query).stdout)["mode"])


def contention(root: Path, clients: int, per_client: int) -> dict[str, Any]:
    errors: list[str] = []
    times: list[float] = []
    by_kind: dict[str, list[float]] = {"add": [], "search": []}
    lock = threading.Lock()

    def client(n: int) -> None:
        for i in range(per_client):
            t0 = time.perf_counter()
            kind = "add" if i % 5 == 0 else "search"
            if kind == "add":
                r = memcli(root, "add", f"Benchmark client {n} fact {i}.")
            else:
                r = memcli(root, "search", "--json", f"client {n} fact {i}")
            with lock:
                times.append(time.perf_counter() - t0)
                by_kind[kind].append(times[-1])
                if r.returncode not in (0, 1):
                    errors.append(r.stderr.strip())

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    text = "".join(p.read_text() for p in (root / "memory").rglob("*.md"))
    wanted = [f" Benchmark client {n} fact {i}.\n" for n in range(clients)
              for i in range(0, per_client, 5)]  # fmt: skip
    lost = sum(1 for w in wanted if text.count(w) != 1)
    return {
        "calls": len(times),
        "errors": len(errors),
        "lost": lost,
        **{f"{k}_ms": quantiles(v) for k, v in (("all", times), *by_kind.items())},
    }


def quantiles(xs: list[float]) -> tuple[float, float]:
    """(median, p95) in milliseconds."""
    xs = sorted(xs)
    return statistics.median(xs) * 1000, xs[max(0, int(len(xs) * 0.95) - 1)] * 1000


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="5 queries, 2 clients x 10 calls")
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--calls", type=int, default=200, help="calls per client")
    p.add_argument("--write-results", action="store_true", help="update RESULTS.md")
    p.add_argument("--runs", type=int, default=15, help="new queries per figure")
    p.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    p.add_argument("--model-dir", type=Path, default=None)
    args = p.parse_args(argv)
    if not args.locomo.is_file():
        print(f"engine_bench: skipped ({args.locomo} not found)")
        return
    model = args.model_dir or Path(os.environ.get("MEMCLI_TEST_MODEL_DIR") or DEFAULT_MODEL)
    runs = 5 if args.quick else args.runs
    rows: list[tuple[str, float, float]] = []
    with tempfile.TemporaryDirectory(prefix="memcli-engine-bench-") as tmp:
        os.environ["MEMCLI_RUNTIME_DIR"] = str(Path(tmp) / "run")
        os.environ["MEMCLI_CONFIG_DIR"] = str(Path(tmp) / "config")
        os.environ["MEMCLI_CACHE_DIR"] = str(Path(tmp) / "cache")
        root = Path(tmp) / "ws"
        root.mkdir()
        questions = locomo.write_combined(root, args.locomo)
        memcli(root, "index")
        sets = iter(questions[i * runs : (i + 1) * runs] for i in range(len(questions) // runs))
        modes = [("keyword", ["--strategy", "keyword"])]
        if model.is_dir():
            memcli(
                root,
                "config",
                "set",
                "embedding.model",
                "local/sentence-transformers/all-MiniLM-L6-v2",
            )
            memcli(root, "config", "set", "embedding.model_path", str(model))
            memcli(root, "trust")
            memcli(root, "index")
            modes.append(("hybrid (local model)", []))
        for name, extra in modes:
            alone = timed_searches(root, next(sets), *extra)
            assert memcli(root, "serve", "--detach").returncode == 0
            warm = timed_searches(root, next(sets), *extra)
            memcli(root, "serve", "--stop")
            rows.append((name, alone, warm))
        hybrid_mode = mode_of(root, questions[-1]) if model.is_dir() else "keyword"
        assert memcli(root, "serve", "--detach").returncode == 0
        clients, calls = (2, 10) if args.quick else (args.clients, args.calls)
        load = contention(root, clients, calls)
        memcli(root, "serve", "--stop")
    lines = [
        "## A warm engine: new queries and many clients",
        "",
        f"`python benchmarks/engine_bench.py{' --quick' if args.quick else ''}` on"
        f" {platform.machine()}, {os.cpu_count()} CPUs, {date.today()}: the LoCoMo dev"
        " conversations as one workspace (129 files), whole-process `memcli search --json`"
        f" for {runs} new queries each (never searched before, so a hybrid search embeds"
        " them), medians. The machine is shared: read the ratios.",
        "",
        "| mode | without engine | with engine | ratio |",
        "|---|---:|---:|---:|",
    ]
    for name, alone, warm in rows:
        lines.append(
            f"| {name} | {alone * 1000:.0f} ms | {warm * 1000:.0f} ms | {warm / alone:.2f} |"
        )
    if len(rows) > 1:
        lines += [
            "",
            f"Hybrid with the engine against keyword without it: {rows[1][2] / rows[0][1]:.2f}x"
            f" (mode reported: {hybrid_mode}).",
        ]
    lines += [
        "",
        f"{clients} concurrent clients x {calls} calls (every fifth an `add`, the rest searches,"
        f" each a whole `memcli` process) through one engine: {load['calls']} calls,"
        f" {load['errors']} errors, {load['lost']} facts lost; median / p95: "
        + "; ".join(
            f"{name} {load[k + '_ms'][0]:.0f} / {load[k + '_ms'][1]:.0f} ms"
            for k, name in (("all", "all calls"), ("search", "searches"), ("add", "adds"))
        )
        + ".",
    ]
    markdown = "\n".join(lines) + "\n"
    print(markdown)
    if args.write_results:
        write_section("engine", markdown)


if __name__ == "__main__":
    main()
