"""What a local model costs a whole ``memcli search`` process: wall time and peak memory.

Usage::

    python benchmarks/model_costs.py ../shared/data/locomo-dev.json \\
        --model local/intfloat/multilingual-e5-small \\
        --model-path ../shared/models/multilingual-e5-small-q4-onnx [--cache DIR] [--queries 8]

One LoCoMo conversation (the first) becomes a workspace indexed with the model (its vectors
from ``--cache`` when an earlier run, e.g. ``tune_fusion.py --cache``, left them there). Then
``--queries`` questions never searched before are each asked in a process of their own
(``memcli search --json``: the process loads the model and embeds the question), the same
questions again (their vectors are cached: the model is not loaded), and in keyword mode;
medians of the wall time and the largest peak resident memory of each kind. The load average
is printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import locomo  # noqa: E402


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of one process (the child's own rusage)."""
    wrapper = (
        "import resource, subprocess, sys, time; t = time.perf_counter();"
        " subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=False);"
        " w = time.perf_counter() - t;"
        " print(w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)"
    )
    out = subprocess.run(
        [sys.executable, "-c", wrapper, *cmd], capture_output=True, text=True, env=env, check=True
    )
    wall, rss = out.stdout.split()
    return float(wall), float(rss)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("data")
    p.add_argument("--model", required=True)
    p.add_argument("--model-path", required=True)
    p.add_argument("--cache", help="embedding cache folder (default: a new one)")
    p.add_argument("--queries", type=int, default=8)
    args = p.parse_args(argv)
    conv = locomo.load(Path(args.data))[0]
    with tempfile.TemporaryDirectory(prefix="memcli-model-costs-") as tmpdir:
        tmp = Path(tmpdir)
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")}
        env.update(
            MEMCLI_CONFIG_DIR=str(tmp / "config"),
            MEMCLI_CACHE_DIR=args.cache or str(tmp / "cache"),
            MEMCLI_EMBEDDING_MODEL=args.model,
            MEMCLI_EMBEDDING_MODEL_PATH=str(Path(args.model_path).resolve()),
        )
        root = tmp / "ws"
        memcli = [sys.executable, "-m", "memcli", "-q", "-w", str(root)]
        subprocess.run([*memcli, "init"], env=env, check=True, stdout=subprocess.DEVNULL)
        locomo.write_workspace(conv, root)
        t0 = time.perf_counter()
        subprocess.run([*memcli, "index"], env=env, check=True, stdout=subprocess.DEVNULL)
        index_s = time.perf_counter() - t0
        stamp = str(time.time_ns())  # questions this cache has never seen
        questions = [f"{q} ({stamp})" for q, _, _ in conv.questions[: args.queries]]
        runs: dict[str, list[tuple[float, float]]] = {"new": [], "again": [], "keyword": []}
        for q in questions:
            runs["new"].append(timed([*memcli, "search", "--json", q], env))
            runs["again"].append(timed([*memcli, "search", "--json", q], env))
            kw = [*memcli, "search", "--json", "--strategy", "keyword", q]
            runs["keyword"].append(timed(kw, env))
        figures = {
            kind: {
                "median_wall_ms": round(1000 * statistics.median(w for w, _ in rs)),
                "peak_rss_mib": round(max(r for _, r in rs), 1),
            }
            for kind, rs in runs.items()
        }
        report = {
            "model": args.model,
            "chunks_indexed_s": round(index_s, 1),
            "searches": figures,
            "load_average": os.getloadavg(),
            "self_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        }
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
