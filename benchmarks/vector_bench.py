"""Vector benchmark: sqlite-vec KNN latency and vector index throughput, against numpy.

Usage::

    python benchmarks/vector_bench.py [--sizes 10000,100000] [--dims 384] [--queries 50]
                                      [--json OUT]

Needs the ``bench`` extra (``pip install -e '.[bench]'``) for numpy; memcli itself never
imports numpy. No network: a local fake embedder stands in for the provider (deterministic
unit vectors seeded by a hash of the text, computed with numpy), plugged in where memcli calls
its provider, so everything else is memcli's real code path: redaction, the global embedding
cache, batching, the vec0 inserts and the KNN query.

For every size N (chunks) a workspace with N one-paragraph sections is generated under a temp
dir. Each phase runs in its own process so its peak RSS is its own:

* **keyword index**: ``Indexer.sync(embed=False)`` (files, chunks, FTS5) for reference.
* **embed**: the vector back-fill (``memcli.index.backfill.backfill``) of all N chunks with an
  empty cache: fake embedding + cache writes + vec0 inserts. Chunks per second.
* **re-embed from cache**: the same after ``rm -rf .memcli`` and a keyword re-index: every
  vector comes from the global cache (what a re-clone costs).
* **knn**: p50/p95 of ``memcli.index.vectors.knn`` (``embedding MATCH ? AND k = ?``, k = 50) over
  ``--queries`` query vectors, and of a hybrid ``Memory.search`` (FTS5 + KNN + RRF) with the
  query vectors already cached.
* **numpy**: the same KNN as brute-force cosine in numpy on the same vectors (a float32 matrix
  of unit rows, one matrix-vector product and ``argpartition``), p50/p95, plus the time and
  memory to load the matrix. Results are compared with the vec0 ones (recall@50).

Figures are printed as a Markdown table and, with ``--json``, written to a file. Nothing here
asserts anything about speed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import resource
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
K = 50
SECTIONS_PER_FILE = 100
WORDS = (
    "database cache deploy release backup incident review merge branch index search vector "
    "query latency memory disk network service worker queue retry timeout schema migration "
    "token secret rotate alert dashboard metric trace log error warning budget roadmap team "
    "customer invoice payment contract meeting decision preference procedure runbook host "
    "cluster node replica shard partition kafka valkey postgres sqlite python rust docker"
).split()
SYLLABLES = "ka lo mi ne ru sa ti vo ze pa do fi gu he ja ko lu ma no pe ri so tu wa yo".split()
RARE = 20000  # synthetic long-tail vocabulary (names, ids, jargon)


def rare_word(n: int) -> str:
    """The n-th synthetic word (deterministic)."""
    out = []
    n += 1
    while n:
        n, r = divmod(n, len(SYLLABLES))
        out.append(SYLLABLES[r])
    return "".join(out)


def zipf_index(byte_pair: bytes) -> int:
    """A Zipf-like pick in [0, RARE) from two bytes: few frequent words, a long tail."""
    u = (int.from_bytes(byte_pair, "little") + 1) / 65537
    return min(RARE - 1, int(RARE**u) - 1)


# --- the fake embedder (numpy) -------------------------------------------------------------------


def fake_vectors(texts: list[str], dims: int) -> Any:
    import numpy as np

    out = np.empty((len(texts), dims), dtype=np.float32)
    for i, text in enumerate(texts):
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
        v = np.random.default_rng(seed).standard_normal(dims).astype(np.float32)
        out[i] = v / np.linalg.norm(v)
    return out


def install_fake_provider(dims: int) -> dict[str, int]:
    """Replace the provider call (the network) with the local fake; count the calls."""
    from memcli.providers import remote

    calls: dict[str, Any] = {"requests": 0, "texts": 0, "seconds": 0.0}

    def embed(texts: list[str], cfg: Any, dimensions: int | None = None, **_: Any) -> Any:
        t0 = time.perf_counter()
        calls["requests"] += 1
        calls["texts"] += len(texts)
        out = fake_vectors(list(texts), dimensions or dims).tolist()
        calls["seconds"] += time.perf_counter() - t0
        return out

    remote.embed = embed  # type: ignore[assignment]
    return calls


# --- corpus --------------------------------------------------------------------------------------


def make_workspace(root: Path, chunks: int) -> None:
    from memcli.notes.workspace import init_workspace

    root.mkdir(parents=True, exist_ok=True)
    init_workspace(root)
    mem = root / "memory" / "notes"
    mem.mkdir(parents=True, exist_ok=True)
    n_files = (chunks + SECTIONS_PER_FILE - 1) // SECTIONS_PER_FILE
    n = 0
    for f in range(n_files):
        parts = [f"# Notes {f}\n"]
        for _ in range(min(SECTIONS_PER_FILE, chunks - n)):
            h = hashlib.blake2b(str(n).encode(), digest_size=24).digest()
            common = [WORDS[b % len(WORDS)] for b in h[:4]]
            rare = [rare_word(zipf_index(h[i : i + 2])) for i in range(4, 20, 2)]
            words = " ".join(common + rare)
            parts.append(f"## Section {n}\n\nItem {n}: {words} ticket CX-{n:06d}.\n")
            n += 1
        (mem / f"notes-{f:05d}.md").write_text("\n".join(parts), encoding="utf-8")


def settings_env(cache: Path, dims: int) -> dict[str, str]:
    return {
        "MEMCLI_CACHE_DIR": str(cache),
        "MEMCLI_EMBEDDING_MODEL": "openai/fake-local",
        "MEMCLI_EMBEDDING_API_BASE": "http://127.0.0.1:9/v1",  # never called: the fake answers
        "MEMCLI_EMBEDDING_DIMENSIONS": str(dims),
        "MEMCLI_EMBEDDING_BATCH_SIZE": "256",
        "MEMCLI_CACHE_MAX_MB": "4096",
        # one paragraph per chunk: the N sections are N chunks
        "MEMCLI_INDEX_CHUNK_CHARS": "120",
    }


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# --- phases (each in its own process) ------------------------------------------------------------


def phase_index(ws: Path, dims: int) -> dict[str, Any]:
    from memcli.index.backfill import backfill
    from memcli.index.indexer import Indexer
    from memcli.index.indexfile import open_store
    from memcli.memory import Memory
    from memcli.providers.embeddings import RemoteEmbedder

    calls = install_fake_provider(dims)
    mem = Memory.open(ws)
    store = open_store(mem.ws)
    t0 = time.perf_counter()
    report = Indexer(mem.ws, store, mem.settings).sync(embed=False)
    keyword_s = time.perf_counter() - t0
    embedder = RemoteEmbedder.from_settings(mem.settings)
    assert embedder is not None
    t0 = time.perf_counter()
    result = backfill(store, embedder)
    embed_s = time.perf_counter() - t0
    store.close()
    embedder.close()
    db_bytes = sum(p.stat().st_size for p in (ws / ".memcli").glob("index.db*"))
    return {
        "chunks": report.chunks,
        "keyword_index_s": keyword_s,
        "embed_s": embed_s,
        "embedded": result.embedded,
        "embed_chunks_per_s": result.embedded / embed_s if embed_s else None,
        "fake_embedder_s": calls["seconds"],
        "memcli_chunks_per_s": (
            result.embedded / (embed_s - calls["seconds"]) if embed_s > calls["seconds"] else None
        ),
        "provider_requests": calls["requests"],
        "provider_texts": calls["texts"],
        "index_db_mb": db_bytes / 1e6,
        "peak_rss_mb": peak_rss_mb(),
    }


def phase_reembed(ws: Path, dims: int) -> dict[str, Any]:
    shutil.rmtree(ws / ".memcli")
    out = phase_index(ws, dims)
    return {
        "keyword_index_s": out["keyword_index_s"],
        "embed_from_cache_s": out["embed_s"],
        "embed_from_cache_chunks_per_s": out["embed_chunks_per_s"],
        "provider_requests": out["provider_requests"],
        "peak_rss_mb": out["peak_rss_mb"],
    }


def query_texts(n: int) -> list[str]:
    """One common word and two long-tail words per query (like a real question)."""
    out = []
    for i in range(n):
        h = hashlib.blake2b(f"query {i}".encode(), digest_size=8).digest()
        rare = [rare_word(zipf_index(h[j : j + 2])) for j in (2, 4)]
        out.append(" ".join([WORDS[h[0] % len(WORDS)], *rare]))
    return out


def phase_knn(ws: Path, dims: int, queries: int) -> dict[str, Any]:
    from memcli.index import vectors
    from memcli.memory import Memory
    from memcli.providers.embeddings import RemoteEmbedder
    from memcli.search.options import SearchRequest

    install_fake_provider(dims)
    texts = query_texts(queries)
    qvecs = fake_vectors(texts, dims).tolist()
    mem = Memory.open(ws)
    store = mem.store
    assert store.ensure_vec(), store.vec_error
    vectors.knn(store, qvecs[0], K)  # warm the page cache
    times, results = [], []
    for q in qvecs:
        t0 = time.perf_counter()
        got = vectors.knn(store, q, K)
        times.append(time.perf_counter() - t0)
        results.append(sorted(got))
    # hybrid search end to end (query vectors cached by a first pass)
    embedder = RemoteEmbedder.from_settings(mem.settings)
    assert embedder is not None
    embedder.embed(texts)
    embedder.close()
    opts = mem.search_options(SearchRequest(limit=10))
    mem.search(texts[0], opts)
    search_times = []
    for t in texts:
        t0 = time.perf_counter()
        res = mem.search(t, opts)
        search_times.append(time.perf_counter() - t0)
        assert res.mode == "hybrid", res.warnings
    mem.close()
    return {
        "knn_ms": _pcts(times),
        "hybrid_search_ms": _pcts(search_times),
        "ids": results,
        "peak_rss_mb": peak_rss_mb(),
    }


def phase_numpy(ws: Path, dims: int, queries: int) -> dict[str, Any]:
    import numpy as np

    from memcli.index import db

    t0 = time.perf_counter()
    conn = db.connect(ws / ".memcli" / "index.db", readonly=True)
    assert db.load_vec(conn) is None
    rows = conn.execute("SELECT rowid, embedding FROM chunks_vec").fetchall()
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dims)
    del rows
    norms = np.linalg.norm(matrix, axis=1)
    matrix = matrix / norms[:, None]
    load_s = time.perf_counter() - t0
    conn.close()
    qvecs = fake_vectors(query_texts(queries), dims)
    times, results = [], []
    for q in qvecs:
        t0 = time.perf_counter()
        sims = matrix @ (q / np.linalg.norm(q))
        top = np.argpartition(-sims, K)[:K]
        top = top[np.argsort(-sims[top])]
        times.append(time.perf_counter() - t0)
        results.append(sorted(int(i) for i in ids[top]))
    return {
        "numpy_ms": _pcts(times),
        "numpy_load_s": load_s,
        "ids": results,
        "peak_rss_mb": peak_rss_mb(),
    }


def _pcts(seconds: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in seconds)
    return {
        "p50": statistics.median(ms),
        "p95": ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))],
        "mean": statistics.fmean(ms),
    }


# --- driver --------------------------------------------------------------------------------------


def run_phase(name: str, ws: Path, env: dict[str, str], dims: int, queries: int) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--phase", name, "--ws", str(ws), "--dims", str(dims)]
    cmd += ["--queries", str(queries)]
    full_env = {**os.environ, **env, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(cmd, env=full_env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"phase {name} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def bench_size(n: int, dims: int, queries: int, base: Path) -> dict[str, Any]:
    ws = base / f"ws-{n}"
    cache = base / f"cache-{n}"
    env = settings_env(cache, dims)
    t0 = time.perf_counter()
    make_workspace(ws, n)
    gen_s = time.perf_counter() - t0
    print(f"[{n}] corpus generated in {gen_s:.1f}s", file=sys.stderr)
    index = run_phase("index", ws, env, dims, queries)
    print(f"[{n}] index: {index['embed_s']:.1f}s to embed {index['embedded']}", file=sys.stderr)
    reembed = run_phase("reembed", ws, env, dims, queries)
    knn = run_phase("knn", ws, env, dims, queries)
    npy = run_phase("numpy", ws, env, dims, queries)
    recall = statistics.fmean(
        len(set(a) & set(b)) / K for a, b in zip(knn.pop("ids"), npy.pop("ids"), strict=True)
    )
    cache_mb = sum(p.stat().st_size for p in cache.glob("embeddings.db*")) / 1e6
    return {
        "chunks": index["chunks"],
        "dims": dims,
        "index": index,
        "reembed_from_cache": reembed,
        "knn": knn,
        "numpy": npy,
        "recall_at_50_vs_numpy": recall,
        "knn_over_numpy_p50": knn["knn_ms"]["p50"] / npy["numpy_ms"]["p50"],
        "cache_mb": cache_mb,
    }


def markdown(results: list[dict[str, Any]]) -> str:
    lines = [
        "| chunks | embed+store (chunks/s) | without the fake embedder | from cache (chunks/s) "
        "| keyword index (s) "
        "| vec0 KNN p50 / p95 (ms) | numpy p50 / p95 (ms) | KNN / numpy | hybrid search p50 (ms) "
        "| recall@50 | peak RSS index / knn / numpy (MB) | index.db (MB) | cache (MB) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        i, c, k, n = r["index"], r["reembed_from_cache"], r["knn"], r["numpy"]
        lines.append(
            f"| {r['chunks']:,} | {i['embed_chunks_per_s']:,.0f} "
            f"| {i['memcli_chunks_per_s']:,.0f} "
            f"| {c['embed_from_cache_chunks_per_s']:,.0f} | {i['keyword_index_s']:.1f} "
            f"| {k['knn_ms']['p50']:.1f} / {k['knn_ms']['p95']:.1f} "
            f"| {n['numpy_ms']['p50']:.2f} / {n['numpy_ms']['p95']:.2f} "
            f"| {r['knn_over_numpy_p50']:.1f}x | {k['hybrid_search_ms']['p50']:.1f} "
            f"| {r['recall_at_50_vs_numpy']:.3f} "
            f"| {i['peak_rss_mb']:.0f} / {k['peak_rss_mb']:.0f} / {n['peak_rss_mb']:.0f} "
            f"| {i['index_db_mb']:.0f} | {r['cache_mb']:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--dims", type=int, default=384)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--keep", action="store_true", help="Keep the generated workspaces.")
    ap.add_argument("--phase", help=argparse.SUPPRESS)
    ap.add_argument("--ws", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.phase:
        fn = {"index": phase_index, "reembed": phase_reembed}.get(args.phase)
        if fn is not None:
            out = fn(args.ws, args.dims)
        elif args.phase == "knn":
            out = phase_knn(args.ws, args.dims, args.queries)
        else:
            out = phase_numpy(args.ws, args.dims, args.queries)
        print(json.dumps(out))
        return
    base = Path(tempfile.mkdtemp(prefix="memcli-vector-bench-"))
    results = []
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            results.append(bench_size(n, args.dims, args.queries, base))
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    from memcli.index import db

    meta = {
        "python": platform.python_version(),
        "sqlite_driver": db.driver_name(),
        "sqlite": db.sqlite_version(),
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
    }
    print(markdown(results))
    print(f"\n{json.dumps(meta)}")
    if args.json:
        args.json.write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
