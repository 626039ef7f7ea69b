"""A hybrid search of a new query with the local model, whole process, and its stages.

Usage::

    python benchmarks/query_bench.py [--rounds N] [--model-dir DIR] [--locomo PATH]
                                     [--build NAME=DIR ...] [--json OUT] [--write-results]

The workspace is the first LoCoMo dev conversation with ``embedding.model =
local/sentence-transformers/all-MiniLM-L6-v2`` read from its folder (``--model-dir``,
``$MEMCLI_TEST_MODEL_DIR`` or ``../shared/models/all-MiniLM-L6-v2-onnx``), indexed with its
vectors before anything is measured; no engine runs. Each round, interleaved:

* **bare**: ``python -c pass``;
* **new query**: ``memcli search --json Q`` for a question never searched before, so the
  query is embedded: ONNX Runtime, the model and the tokenizer are loaded (the models' cache
  folder holding the optimised graph, as after any earlier search);
* **keyword**: the same question with ``--strategy keyword``.

Medians of whole-process wall and CPU time (user + system), each process started from a
small launcher (``benchmarks/launch.py``). ``--build NAME=DIR`` (repeatable) measures the
``memcli`` package under each ``DIR`` in the same rounds, in alternation (an A/B of two
builds in the same minutes); without it, the checkout's. Then the **first new query** after
the optimised graph is deleted (it is made again and saved), a few times, with the
checkout's build.

**Stages**, each in a fresh process of the checkout's build, medians of the rounds: importing
numpy, importing ONNX Runtime (numpy already loaded), a session optimising the graph in
process and one from the saved graph, the tokenizer (import and load), the model loaded as
memcli loads it (session and tokenizer at once) and the first inference of a query.

The machine may be shared: the load average before and after is printed with the figures.
``--write-results`` replaces the section between ``<!-- query:begin -->`` and
``<!-- query:end -->`` of ``benchmarks/RESULTS.md``.
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
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import locomo  # noqa: E402
from launch import measure  # noqa: E402
from sections import write_section  # noqa: E402

DEFAULT_LOCOMO = ROOT.parent / "shared" / "data" / "locomo-dev.json"
DEFAULT_MODEL = ROOT.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
MODEL = "local/sentence-transformers/all-MiniLM-L6-v2"
GRAPHS = Path("models") / "onnx-graphs"  # in the cache folder (memcli.providers.local)

# One stage in a fresh process: what it needs first (not timed), then the stage (timed).
STAGE = """\
import json, sys, time
from pathlib import Path
stage, folder, cache = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
model = folder / "model.onnx"
if stage != "numpy":
    import numpy
if stage not in ("numpy", "onnxruntime", "tokenizer"):
    import onnxruntime
    from memcli.providers import onnxmodel, onnxsession
    pooling = onnxmodel.POOLING["sentence-transformers/all-MiniLM-L6-v2"]
if stage == "inference":
    loaded = onnxmodel.OnnxModel(folder, pooling, cache)
t0, c0 = time.perf_counter(), time.process_time()
if stage == "numpy":
    import numpy
elif stage == "onnxruntime":
    import onnxruntime
elif stage == "session, optimised in process":
    onnxsession.open_session(model, None)
elif stage == "session, saved graph":
    onnxsession.open_session(model, cache)
elif stage == "tokenizer":
    from memcli.providers.onnxmodel import load_tokenizer
    load_tokenizer(folder)
elif stage == "model (session and tokenizer)":
    onnxmodel.OnnxModel(folder, pooling, cache)
elif stage == "inference":
    loaded.embed(["When did Melanie paint a sunrise?"], 4)
print(json.dumps([time.perf_counter() - t0, time.process_time() - c0]))
"""
STAGES = (
    "numpy",
    "onnxruntime",
    "session, optimised in process",
    "session, saved graph",
    "tokenizer",
    "model (session and tokenizer)",
    "inference",
)


class Bench:
    """The workspace, its private config, cache and runtime folders, and the builds."""

    def __init__(self, tmp: Path, model_dir: Path, builds: dict[str, Path]) -> None:
        self.tmp = tmp
        self.root = tmp / "ws"
        self.model_dir = model_dir
        self.builds = builds
        self.env = {
            **os.environ,
            "MEMCLI_CONFIG_DIR": str(tmp / "config"),
            "MEMCLI_CACHE_DIR": str(tmp / "cache"),
            "MEMCLI_RUNTIME_DIR": str(tmp / "run"),
            "MEMCLI_ENGINE": "off",
        }

    def env_of(self, build: str | None) -> dict[str, str]:
        """The environment of a build's processes (None: the checkout's)."""
        return {**self.env, "PYTHONPATH": str(self.builds[build] if build else ROOT)}

    def memcli(self, *args: str) -> None:
        """Run memcli with the checkout's build (not measured)."""
        r = subprocess.run(
            [sys.executable, "-m", "memcli", "-q", "-w", str(self.root), *args],
            capture_output=True,
            text=True,
            env=self.env_of(None),
            cwd=self.tmp,
            timeout=1800,
        )
        if r.returncode not in (0, 1):
            raise SystemExit(f"memcli {' '.join(args)} failed: {r.stderr[-2000:]}")

    def search(self, build: str | None, query: str, *extra: str) -> dict[str, Any]:
        cmd = [sys.executable, "-m", "memcli", "-w", str(self.root), "search", "--json", *extra]
        out = self.tmp / "out.json"
        with out.open("wb") as fh:
            m = measure(
                [*cmd, query],
                stdout=fh,
                stderr=subprocess.DEVNULL,
                env=self.env_of(build),
                cwd=self.tmp,
            )
        if m.rc not in (0, 1):
            raise SystemExit(f"search {query!r} with {build}: exit {m.rc}")
        mode = json.loads(out.read_text())["mode"]
        return {"wall": m.wall, "cpu": m.cpu, "rss_mib": m.rss_kb / 1024, "mode": mode}

    def bare(self) -> dict[str, Any]:
        m = measure([sys.executable, "-c", "pass"], env=self.env, cwd=self.tmp)
        return {"wall": m.wall, "cpu": m.cpu}

    def stage(self, name: str) -> tuple[float, float]:
        r = subprocess.run(
            [
                sys.executable,
                "-c",
                STAGE,
                name,
                str(self.model_dir),
                str(self.tmp / "cache" / GRAPHS),
            ],
            capture_output=True,
            text=True,
            env=self.env_of(None),
            cwd=self.tmp,
        )
        if r.returncode:
            raise SystemExit(f"stage {name}: {r.stderr[-2000:]}")
        wall, cpu = json.loads(r.stdout)
        return wall, cpu


def _medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "wall": statistics.median(r["wall"] for r in runs),
        "cpu": statistics.median(r["cpu"] for r in runs),
        "wall_min": min(r["wall"] for r in runs),
        "n": len(runs),
        **({"rss_mib": max(r["rss_mib"] for r in runs)} if "rss_mib" in runs[0] else {}),
        **({"modes": sorted({r["mode"] for r in runs})} if "mode" in runs[0] else {}),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    model_dir = args.model_dir or Path(os.environ.get("MEMCLI_TEST_MODEL_DIR") or DEFAULT_MODEL)
    if not (model_dir / "model.onnx").is_file():
        raise SystemExit(f"query_bench: no model in {model_dir} (--model-dir)")
    builds = dict(b.split("=", 1) for b in args.build) if args.build else {"checkout": str(ROOT)}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="memcli-query-bench-") as tmp:
        bench = Bench(Path(tmp), model_dir, {k: Path(v).resolve() for k, v in builds.items()})
        bench.root.mkdir()
        questions = locomo.write_combined(bench.root, args.locomo)
        for extra in sorted(p for p in (bench.root / "memory").iterdir() if p.is_dir())[1:]:
            shutil.rmtree(extra)  # the first conversation only
        bench.memcli("config", "set", "embedding.model", MODEL)
        bench.memcli("config", "set", "embedding.model_path", str(model_dir))
        bench.memcli("trust")
        bench.memcli("index")  # the vectors, and the saved graph
        fresh = iter(dict.fromkeys(reversed(questions)))  # never searched
        runs: dict[str, list[dict[str, Any]]] = {"bare": []}
        for _ in range(args.rounds):
            runs["bare"].append(bench.bare())
            for build in bench.builds:
                q = next(fresh)
                runs.setdefault(f"{build}: new query", []).append(bench.search(build, q))
                runs.setdefault(f"{build}: keyword", []).append(
                    bench.search(build, q, "--strategy", "keyword")
                )
        log(f"whole process: {args.rounds} rounds")
        first: list[dict[str, Any]] = []
        for _ in range(args.first):
            shutil.rmtree(bench.tmp / "cache" / GRAPHS, ignore_errors=True)
            first.append(bench.search(None, next(fresh)))
        bench.stage("session, saved graph")  # saved again (not measured)
        stages: dict[str, list[tuple[float, float]]] = {name: [] for name in STAGES}
        for _ in range(args.rounds):
            for name in STAGES:
                stages[name].append(bench.stage(name))
        log("stages measured")
    load_after = os.getloadavg()
    return {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "cpus": os.cpu_count(),
        "load": [round(x, 1) for x in (*load_before, *load_after)],
        "rounds": args.rounds,
        "process": {name: _medians(rs) for name, rs in runs.items()},
        "first_query": _medians(first) if first else None,
        "stages": {
            name: {
                "wall": statistics.median(w for w, _ in vs),
                "cpu": statistics.median(c for _, c in vs),
            }
            for name, vs in stages.items()
        },
    }


def markdown(f: dict[str, Any]) -> str:
    load = f["load"]
    p = f["process"]
    bare = p["bare"]
    lines = [
        f"## Hybrid search of a new query, local model ({f['date']})",
        "",
        "`benchmarks/query_bench.py`: the first LoCoMo dev conversation, `embedding.model ="
        f" {MODEL}` read from its folder, no engine; {f['cpus']} CPUs. Load average"
        f" {load[0]} / {load[1]} before, {load[3]} / {load[4]} after (1 / 5 min). Whole"
        f" process, medians of {f['rounds']} rounds (interleaved; each query never searched"
        " before):",
        "",
        "| process | median wall | fastest | median CPU |",
        "|---|---:|---:|---:|",
        f"| bare `python -c pass` | {bare['wall'] * 1000:.0f} ms | {bare['wall_min'] * 1000:.0f}"
        f" ms | {bare['cpu'] * 1000:.0f} ms |",
    ]
    for name, r in p.items():
        if name != "bare":
            lines.append(
                f"| {name} | {r['wall'] * 1000:.0f} ms | {r['wall_min'] * 1000:.0f} ms"
                f" | {r['cpu'] * 1000:.0f} ms |"
            )
    fq = f.get("first_query")
    if fq:
        lines.append(
            f"| first new query, the optimised graph made and saved ({fq['n']} runs)"
            f" | {fq['wall'] * 1000:.0f} ms | {fq['wall_min'] * 1000:.0f} ms"
            f" | {fq['cpu'] * 1000:.0f} ms |"
        )
    lines += [
        "",
        "Stages of loading the model, each in a fresh process (medians):",
        "",
        "| stage | wall | CPU |",
        "|---|---:|---:|",
    ]
    for name, s in f["stages"].items():
        lines.append(f"| {name} | {s['wall'] * 1000:.0f} ms | {s['cpu'] * 1000:.0f} ms |")
    return "\n".join(lines) + "\n"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=11, help="rounds (medians)")
    p.add_argument("--first", type=int, default=3, help="first queries with no saved graph")
    p.add_argument("--build", action="append", default=[], help="NAME=DIR holding memcli/")
    p.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    p.add_argument("--model-dir", type=Path, default=None)
    p.add_argument("--json", type=Path, help="write the figures here")
    p.add_argument("--write-results", action="store_true", help="update benchmarks/RESULTS.md")
    args = p.parse_args(argv)
    if not args.locomo.is_file():
        print(f"query_bench: skipped ({args.locomo} not found)")
        return 0
    figures = run(args)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    section = markdown(figures)
    print(section)
    if args.write_results:
        write_section("query", section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
