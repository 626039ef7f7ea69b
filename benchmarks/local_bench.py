"""The local embedding model: cold hybrid index against the model's floor, rebuild, searches.

Usage::

    python benchmarks/local_bench.py [--quick] [--runs N] [--queries N] [--model-dir DIR]
                                     [--locomo PATH] [--write-results]

On the LoCoMo dev conversations as one workspace (``locomo.write_combined``; ``--quick``: the
first conversation only) with ``embedding.model = local/sentence-transformers/all-MiniLM-L6-v2``
read from the model folder (``--model-dir``, ``$MEMCLI_TEST_MODEL_DIR`` or
``../shared/models/all-MiniLM-L6-v2-onnx``):

* **floor**: fastembed alone (the model loaded first, not timed) embedding the texts memcli
  embeds for that workspace (its chunks, as the back-fill reads them), in index order, at each
  batch size of a sweep; and the same with the texts sorted by length. In a process of its own.
* **cold index**: whole-process ``memcli index --json`` with a keyword index already built,
  no vector and an empty embedding cache, so it measures the back-fill: peak RSS, and the
  time inside ONNX Runtime's ``InferenceSession.run`` (summed by a wrapper around the command).
  ``in model`` = that time / whole-process wall; ``floor / memcli`` = the best ordered floor /
  whole-process wall (the issue's target: at least 0.85).
* **rebuild**: ``memcli index --force --json`` with the cache warm: its ``embed_requests``
  (calls to the model) and ``embed_cached``, and whether ONNX Runtime was imported at all.
* **search**: whole-process ``memcli search --json`` for LoCoMo questions never searched before
  (hybrid: the query is embedded), the same questions again (their vectors are cached) and in
  keyword mode, interleaved; medians and peak RSS.

The machine may be shared: the load average before and after is printed with the figures.
``--write-results`` replaces the section between ``<!-- local:begin -->`` and
``<!-- local:end -->`` of ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import locomo  # noqa: E402
from launch import measure  # noqa: E402
from sections import write_section  # noqa: E402

DEFAULT_LOCOMO = HERE.parent.parent / "shared" / "data" / "locomo-dev.json"
DEFAULT_MODEL = HERE.parent.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
MODEL = "local/sentence-transformers/all-MiniLM-L6-v2"

# Runs memcli with InferenceSession.run timed; the sum and whether ONNX Runtime was imported
# go to the file named by $LOCAL_BENCH_REPORT.
TIMED = """\
import json, os, runpy, sys, time
spent = [0.0, 0]
if os.environ.get("LOCAL_BENCH_TIME_MODEL"):
    import onnxruntime
    run = onnxruntime.InferenceSession.run
    def timed(self, *a, **k):
        t0 = time.perf_counter()
        try:
            return run(self, *a, **k)
        finally:
            spent[0] += time.perf_counter() - t0
            spent[1] += 1
    onnxruntime.InferenceSession.run = timed
sys.argv = ["memcli", *sys.argv[1:]]
code = 0
try:
    runpy.run_module("memcli", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else 1
with open(os.environ["LOCAL_BENCH_REPORT"], "w") as fh:
    json.dump({"model_seconds": spent[0], "model_runs": spent[1],
               "onnxruntime": "onnxruntime" in sys.modules}, fh)
sys.exit(code)
"""

# fastembed alone: load the model (not timed), then embed the texts at each batch size.
FLOOR = """\
import json, os, sys, time
os.environ["HF_HUB_OFFLINE"] = "1"
texts_file, model_dir, sizes, orders = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
texts = json.load(open(texts_file))
from fastembed import TextEmbedding
model = TextEmbedding("sentence-transformers/all-MiniLM-L6-v2", specific_model_path=model_dir)
list(model.embed(texts[:16], batch_size=16))
docs_in = {"ordered": texts, "sorted": sorted(texts, key=len)}
out = {}
for size in [int(s) for s in sizes.split(",")]:
    for order in orders.split(","):
        t0 = time.perf_counter()
        list(model.embed(docs_in[order], batch_size=size))
        out[f"{order} {size}"] = time.perf_counter() - t0
print(json.dumps(out))
"""

# memcli's runtime on one thread: CPU seconds per batch size, which the machine's load does not
# inflate as it does wall time (no other thread to wait for).
CPU_SWEEP = """\
import json, sys, time
from pathlib import Path
import onnxruntime as ort
from memcli.providers.onnxmodel import POOLING, OnnxModel, model_file
texts_file, model_dir, sizes = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
texts = json.load(open(texts_file))
model = OnnxModel(model_dir, POOLING["sentence-transformers/all-MiniLM-L6-v2"])
options = ort.SessionOptions()
options.intra_op_num_threads = 1
model.session = ort.InferenceSession(str(model_file(model_dir)), options)
model.embed(texts[:16], 16)
docs_in = {"ordered": texts, "sorted": sorted(texts, key=len)}
out = {}
for size in [int(s) for s in sizes.split(",")]:
    for order, docs in docs_in.items():
        t0 = time.process_time()
        model.embed(docs, size)
        out[f"{order} {size}"] = time.process_time() - t0
print(json.dumps(out))
"""


class Bench:
    """A workspace with the local model, in a temporary home of its own."""

    def __init__(self, tmp: Path, model_dir: Path) -> None:
        self.tmp = tmp
        self.root = tmp / "ws"
        self.model_dir = model_dir
        self.env = {
            **os.environ,
            "MEMCLI_CONFIG_DIR": str(tmp / "config"),
            "MEMCLI_CACHE_DIR": str(tmp / "cache"),
            "MEMCLI_RUNTIME_DIR": str(tmp / "run"),
        }

    def memcli(self, *args: str) -> dict[str, Any]:
        """Run memcli (not measured); its JSON output."""
        r = subprocess.run(
            [sys.executable, "-m", "memcli", "-q", "-w", str(self.root), *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=1800,
        )
        if r.returncode not in (0, 1):
            raise SystemExit(f"memcli {' '.join(args)} failed: {r.stderr[-2000:]}")
        return json.loads(r.stdout) if "--json" in args and r.stdout.strip() else {}

    def measured(self, *args: str, time_model: bool = False) -> dict[str, Any]:
        """Whole-process run of memcli through the launcher: wall, peak RSS, its JSON output
        and (``time_model``) the seconds spent in InferenceSession.run."""
        report = self.tmp / "report.json"
        out = self.tmp / "out.json"
        env = {**self.env, "LOCAL_BENCH_REPORT": str(report)}
        if time_model:
            env["LOCAL_BENCH_TIME_MODEL"] = "1"
        cmd = [sys.executable, "-c", TIMED, "-q", "-w", str(self.root), *args]
        with out.open("wb") as fh:
            m = measure(cmd, stdout=fh, stderr=subprocess.DEVNULL, env=env)
        if m.rc not in (0, 1):
            raise SystemExit(f"memcli {' '.join(args)}: exit {m.rc}")
        text = out.read_text()
        return {
            "wall": m.wall,
            "rss_mib": m.rss_kb / 1024,
            "cpu": m.cpu,
            "out": json.loads(text) if text.strip() else {},
            **json.loads(report.read_text()),
        }

    def texts(self) -> list[str]:
        """The texts memcli gives the model for this workspace (chunks waiting for vectors)."""
        from memcli.index import db, vectors
        from memcli.index.store import Store
        from memcli.providers.local import LocalEmbedder

        embedder = LocalEmbedder(MODEL, model_path=str(self.model_dir))
        path = self.root / ".memcli" / "index.db"
        conn = db.connect(path, readonly=True)
        try:
            rows = vectors.pending(Store(path, conn), 10**9)
        finally:
            conn.close()
        return [embedder._prepare(text) for _, text in rows]

    def cold(self) -> None:
        """No index and an empty embedding cache."""
        shutil.rmtree(self.root / ".memcli", ignore_errors=True)
        shutil.rmtree(self.tmp / "cache", ignore_errors=True)


def floor(bench: Bench, texts: list[str], sizes: str, orders: str = "") -> dict[str, float]:
    """Seconds of fastembed alone per "ordered N" / "sorted N" (N texts per batch); without
    ``orders``, CPU seconds of memcli's runtime on one thread instead."""
    path = bench.tmp / "texts.json"
    path.write_text(json.dumps(texts))
    script = (
        [FLOOR, str(path), str(bench.model_dir), sizes, orders]
        if orders
        else [CPU_SWEEP, str(path), str(bench.model_dir), sizes]
    )
    r = subprocess.run(
        [sys.executable, "-c", *script],
        capture_output=True,
        text=True,
        env=bench.env,
        timeout=7200,
    )
    if r.returncode != 0:
        raise SystemExit(f"floor failed: {r.stderr[-2000:]}")
    found: dict[str, float] = json.loads(r.stdout)
    return found


def searches(bench: Bench, questions: list[str]) -> dict[str, dict[str, float]]:
    """Whole-process search --json: new question (hybrid), the same again, keyword; medians."""
    runs: dict[str, list[dict[str, Any]]] = {"new": [], "repeated": [], "keyword": []}
    modes: set[str] = set()
    for q in questions:
        runs["new"].append(bench.measured("search", "--json", q))
        runs["repeated"].append(bench.measured("search", "--json", q))
        runs["keyword"].append(bench.measured("search", "--json", "--strategy", "keyword", q))
        modes |= {runs["new"][-1]["out"].get("mode"), runs["repeated"][-1]["out"].get("mode")}
    if modes != {"hybrid"}:
        raise SystemExit(f"searches ran in mode {sorted(map(str, modes))}, not hybrid")
    return {
        name: {
            "wall": statistics.median(r["wall"] for r in rs),
            "rss_mib": statistics.median(r["rss_mib"] for r in rs),
            "cpu": statistics.median(r["cpu"] for r in rs),
            "onnxruntime": sum(1 for r in rs if r["onnxruntime"]),
        }
        for name, rs in runs.items()
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    model_dir = args.model_dir or Path(os.environ.get("MEMCLI_TEST_MODEL_DIR") or DEFAULT_MODEL)
    if not (model_dir / "model.onnx").is_file():
        raise SystemExit(f"local_bench: no model in {model_dir} (--model-dir)")
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="memcli-local-bench-") as tmp:
        bench = Bench(Path(tmp), model_dir)
        bench.root.mkdir()
        questions = locomo.write_combined(bench.root, args.locomo)
        if args.quick:  # the first conversation only
            convs = sorted(p for p in (bench.root / "memory").iterdir() if p.is_dir())
            for extra in convs[1:]:
                shutil.rmtree(extra)
        files = sum(1 for _ in (bench.root / "memory").rglob("*.md"))
        bench.memcli("config", "set", "embedding.model", MODEL)
        bench.memcli("config", "set", "embedding.model_path", str(model_dir))
        bench.memcli("trust")
        bench.memcli("index", "--json", "--no-embed")
        texts = bench.texts()
        log(f"{files} files, {len(texts)} chunks; floor sweep (fastembed alone)")
        sample = texts[: args.sweep_texts]
        floors = floor(bench, sample, args.sizes, "ordered,sorted")
        log(f"CPU sweep (memcli's runtime, one thread) on {len(sample)} texts")
        cpu = floor(bench, sample, args.sizes)
        best_size = min((v, k) for k, v in floors.items() if k.startswith("ordered"))[1]
        # each cold index right after a floor run at the best batch size: the pair sees about
        # the same load from the rest of the machine
        cold, paired = [], []
        for i in range(args.runs):
            paired.append(floor(bench, texts, best_size.split()[1], "ordered")[best_size])
            bench.cold()
            cold.append(bench.measured("index", "--json", time_model=True))
            log(
                f"run {i + 1}/{args.runs}: floor {paired[-1]:.1f} s, cold index"
                f" {cold[-1]['wall']:.1f} s"
            )
        rebuild = bench.measured("index", "--force", "--json")
        log(f"rebuild: {rebuild['out']}")
        fresh = list(dict.fromkeys(reversed(questions)))[: args.queries]  # never searched
        search = searches(bench, fresh)
    load_after = os.getloadavg()
    wall = statistics.median(c["wall"] for c in cold)
    best = (statistics.median(paired), best_size)
    return {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs,"
        f" Python {platform.python_version()}",
        "quick": args.quick,
        "files": files,
        "chunks": len(texts),
        "chars": round(statistics.mean(len(t) for t in texts)),
        "load": [round(x, 1) for x in (*load_before, *load_after)],
        "floor_runs": paired,
        "floors": floors,
        "cpu_sweep": cpu,
        "sweep_texts": len(sample),
        "floor_best": {"seconds": best[0], "batch": best[1]},
        "cold": {
            "runs": len(cold),
            "wall": wall,
            "walls": [c["wall"] for c in cold],
            "model": statistics.median(c["model_seconds"] for c in cold),
            "in_model": statistics.median(c["model_seconds"] / c["wall"] for c in cold),
            "model_runs": cold[0]["model_runs"],
            "rss_mib": max(c["rss_mib"] for c in cold),
            "embedded": cold[0]["out"].get("embedded"),
            "requests": cold[0]["out"].get("embed_requests"),
        },
        "floor_over_memcli": statistics.median(
            f / c["wall"] for f, c in zip(paired, cold, strict=True)
        ),
        "rebuild": {
            "wall": rebuild["wall"],
            "requests": rebuild["out"].get("embed_requests"),
            "cached": rebuild["out"].get("embed_cached"),
            "embedded": rebuild["out"].get("embedded"),
            "onnxruntime": rebuild["onnxruntime"],
        },
        "search": search,
        "queries": args.queries,
    }


def markdown(f: dict[str, Any]) -> str:
    c, s, rb = f["cold"], f["search"], f["rebuild"]
    load = f["load"]
    ordered = sorted((int(k.split()[1]), v) for k, v in f["floors"].items() if "ordered" in k)
    by_len = dict((int(k.split()[1]), v) for k, v in f["floors"].items() if "sorted" in k)
    cpu = f["cpu_sweep"]
    per = 1000 / f["chunks"]
    lines = [
        f"## Local embedding model ({f['date']})",
        "",
        f"`benchmarks/local_bench.py{' --quick' if f['quick'] else ''}` (run by `make bench`):"
        f" the LoCoMo dev conversations as one workspace ({f['files']} files, {f['chunks']}"
        f" chunks of {f['chars']} characters on average), `embedding.model = {MODEL}` read from"
        f" its folder; {f['machine']}. Load average {load[0]} / {load[1]} before, {load[3]} /"
        f" {load[4]} after (1 / 5 min): the 2 cores were shared with other work, so every"
        " figure is slower than on an idle machine; compare the ratios.",
        "",
        f"Batch sizes, on the first {f['sweep_texts']} texts in index order or sorted by length:"
        " fastembed alone (model loaded first, not timed; wall time, which the machine's load"
        " inflates) and memcli's runtime on one thread (CPU time, which it hardly does):",
        "",
        "| texts per batch | fastembed, index order | sorted | memcli runtime 1 thread,"
        " index order | sorted |",
        "|---:|---:|---:|---:|---:|",
    ]
    per_sweep = 1000 / f["sweep_texts"]
    for size, secs in ordered:
        row = [secs, by_len.get(size), cpu.get(f"ordered {size}"), cpu.get(f"sorted {size}")]
        cells = " | ".join(f"{v * per_sweep:.1f} ms" if v is not None else "" for v in row)
        lines.append(f"| {size} | {cells} |")
    lines += [
        "",
        "| measure | figure |",
        "|---|---:|",
        f"| cold `memcli index` (whole process, median of {c['runs']}) | {c['wall']:.1f} s"
        f" ({c['wall'] * per:.1f} ms per chunk) |",
        f"| of which inside ONNX Runtime (`InferenceSession.run`, {c['model_runs']} runs)"
        f" | {c['model']:.1f} s = **{c['in_model']:.0%}** |",
        f"| floor: fastembed alone on all texts, best batch of the sweep in index order"
        f" ({f['floor_best']['batch'].split()[1]}), run before each cold index (median)"
        f" | {f['floor_best']['seconds']:.1f} s |",
        f"| floor / memcli cold index (median of the pairs) | **{f['floor_over_memcli']:.2f}** |",
        f"| peak RSS of the cold index | {c['rss_mib']:.0f} MiB |",
        f"| `index --force` with the cache warm | {rb['wall']:.2f} s,"
        f" {rb['requests']} model calls,"
        f" {rb['cached']} of {rb['embedded']} vectors from the cache, ONNX Runtime"
        f" {'imported' if rb['onnxruntime'] else 'not imported'} |",
        "",
        f"Whole-process `memcli search --json`, {f['queries']} LoCoMo questions, medians"
        " (interleaved: new, the same again, keyword):",
        "",
        "| search | median wall | × keyword | median CPU | × keyword | peak RSS"
        " | ONNX Runtime imported |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    kw, kw_cpu = s["keyword"]["wall"], s["keyword"]["cpu"]
    for name, label in (
        ("new", "hybrid, a new question"),
        ("repeated", "hybrid, the same question again (vector cached)"),
        ("keyword", "keyword (`--strategy keyword`)"),
    ):
        r = s[name]
        lines.append(
            f"| {label} | {r['wall'] * 1000:.0f} ms | {r['wall'] / kw:.2f} |"
            f" {r['cpu'] * 1000:.0f} ms | {r['cpu'] / kw_cpu:.2f} | {r['rss_mib']:.0f} MiB |"
            f" {r['onnxruntime']} of {f['queries']} |"
        )
    return "\n".join(lines) + "\n"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="one conversation, 1 run, 5 queries")
    p.add_argument("--runs", type=int, default=3, help="cold indexes (median)")
    p.add_argument("--queries", type=int, default=15, help="questions searched")
    p.add_argument("--sizes", default="1,2,4,8,16,32,64", help="batch sizes of the sweeps")
    p.add_argument("--sweep-texts", type=int, default=512, help="texts of the sweeps")
    p.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    p.add_argument("--model-dir", type=Path, default=None)
    p.add_argument("--json", type=Path, help="write the figures here")
    p.add_argument("--write-results", action="store_true", help="update benchmarks/RESULTS.md")
    args = p.parse_args(argv)
    if not args.locomo.is_file():
        print(f"local_bench: skipped ({args.locomo} not found)")
        return 0
    if args.quick:
        args.runs, args.queries, args.sizes, args.sweep_texts = 1, 5, "4,16", 128
    figures = run(args)
    section = markdown(figures)
    print(section)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    if args.write_results:
        write_section("local", section)
        log("updated the Local embedding model section of benchmarks/RESULTS.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
