"""Resource bounds: peak memory (RSS) of indexing a 50 MB memory folder and of searching a
100k-chunk index, next to the same figures for a small folder, to show they stay flat.

Usage::

    python benchmarks/bounds_bench.py [--mb 50] [--chunks 100000] [--json OUT] [--write-results]

Corpora come from ``benchmarks/corpus.py`` (deterministic notes) under ``benchmarks/.work/``:
a small one (1,000 files), one sized to give at least ``--chunks`` chunks and one of at least
``--mb`` MiB of Markdown; file counts are derived from the small corpus's bytes and chunks per
file. Every figure is one real ``memcli`` process (keyword mode, isolated config) started by
a small launcher (``benchmarks/launch.py``) that reaps it with ``os.wait4``, so ``ru_maxrss``
is that process's own peak RSS (not inflated by this script's memory):

* **startup**: ``memcli --version`` (interpreter and imports, the floor of every command);
* **index**: ``memcli index --json`` with no ``.memcli/`` (a cold full index);
* **search**: ``memcli search --json -n 8 Q`` for each query of a fixed set (max and median);
* **batch**: ``memcli search --batch --json`` over the whole query set in one process.

``--write-results`` replaces the "Resource bounds" section of ``benchmarks/RESULTS.md``
(between its markers) and leaves the rest of the file alone. Nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
RESULTS = HERE / "RESULTS.md"
START, END = "<!-- bounds:start -->", "<!-- bounds:end -->"
sys.path.insert(0, str(HERE))

import corpus as corpus_mod  # noqa: E402
import launch  # noqa: E402

PY = sys.executable
MiB = 1024 * 1024


def run(cmd: list[str], env: dict[str, str], stdin: str | None = None) -> dict[str, Any]:
    """Run ``cmd`` through the launcher (benchmarks/launch.py); its wall time, exit code,
    stdout and own peak RSS (MiB)."""
    with tempfile.TemporaryFile() as fin, tempfile.TemporaryFile() as fout:
        if stdin is not None:
            fin.write(stdin.encode())
            fin.seek(0)
        m = launch.measure(cmd, stdin=fin, stdout=fout, stderr=subprocess.DEVNULL, env=env)
        fout.seek(0)
        out = fout.read().decode("utf-8", "replace")
    return {"rc": m.rc, "wall": m.wall, "out": out, "rss_mib": m.rss_kb / 1024}


def memcli(ws: Path | None, *args: str) -> list[str]:
    return [PY, "-m", "memcli", *(["-w", str(ws)] if ws else []), *args]


def isolated_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")}
    env.update(
        HOME=str(home),
        MEMCLI_CONFIG_DIR=str(home / "config"),
        MEMCLI_CACHE_DIR=str(home / "cache"),
        NO_COLOR="1",
    )
    return env


def queries(n: int = 12, seed: int = 11) -> list[str]:
    """Frequent and rare technical words, questions and a phrase: broad and narrow matches."""
    rng = random.Random(seed)
    tech, common = corpus_mod.TECH, corpus_mod.COMMON
    out = []
    for i in range(n):
        if i % 3 == 0:
            out.append(" ".join(rng.sample(tech, 2)))
        elif i % 3 == 1:
            out.append(f"what did we decide about the {rng.choice(tech)} {rng.choice(common)}?")
        else:
            out.append(f'"{rng.choice(tech)}" {rng.choice(common)} {rng.choice(tech)}')
    return out


def corpus(files: int) -> tuple[Path, dict[str, Any]]:
    dest = WORK / f"corpus-{files}"
    dest.mkdir(parents=True, exist_ok=True)
    manifest = corpus_mod.generate(dest, files, quiet=False)
    return dest, manifest


def fewer_bigger_files(src: Path, files: int, into: int) -> Path:
    """The Markdown of ``src`` (a corpus of ``files`` files) concatenated into ``into`` files."""
    dest = WORK / f"bigfiles-{files}-into-{into}"
    marker = dest / "done.json"
    if marker.is_file():
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    (dest / "memory").mkdir(parents=True)
    paths = sorted((src / "memory").rglob("*.md"))
    for i in range(into):
        text = "\n".join(p.read_text(encoding="utf-8") for p in paths[i::into])
        (dest / "memory" / f"big-{i:05d}.md").write_text(text, encoding="utf-8")
    marker.write_text(json.dumps({"from": src.name, "into": into}) + "\n")
    return dest


def measure(ws: Path, env: dict[str, str], qs: list[str], log: Any) -> dict[str, Any]:
    shutil.rmtree(ws / ".memcli", ignore_errors=True)
    log(f"indexing {ws.name} ...")
    idx = run(memcli(ws, "index", "--json"), env)
    if idx["rc"] != 0:
        raise SystemExit(f"index of {ws} failed with exit {idx['rc']}")
    report = json.loads(idx["out"])
    md_bytes = sum(p.stat().st_size for p in (ws / "memory").rglob("*.md"))
    searches = []
    for q in qs:
        r = run(memcli(ws, "search", "--json", "-n", "8", q), env)
        if r["rc"] not in (0, 1):
            raise SystemExit(f"search {q!r} failed with exit {r['rc']}")
        searches.append(r["rss_mib"])
    batch = run(memcli(ws, "search", "--batch", "--json", "-n", "8"), env, "\n".join(qs) + "\n")
    size = os.path.getsize(ws / ".memcli" / "index.db")
    return {
        "files": report["files"],
        "chunks": report["chunks"],
        "markdown_mib": round(md_bytes / MiB, 1),
        "index_db_mib": round(size / MiB, 1),
        "index_seconds": round(idx["wall"], 1),
        "index_rss_mib": round(idx["rss_mib"], 1),
        "search_rss_max_mib": round(max(searches), 1),
        "search_rss_median_mib": round(statistics.median(searches), 1),
        "batch_rss_mib": round(batch["rss_mib"], 1),
        "queries": len(qs),
    }


def render(res: dict[str, Any]) -> str:
    rows = res["corpora"]
    lines = [
        "## Resource bounds",
        "",
        f"`python benchmarks/bounds_bench.py --write-results` on {res['machine']}, "
        f"{res['date']}. Peak RSS is each process's own `ru_maxrss` (`os.wait4` in a small "
        f"launcher), keyword mode. `memcli --version` alone peaks at "
        f"**{res['startup_rss_mib']} MiB** (interpreter and imports: the floor of every command).",
        "",
        "| corpus | files | chunks | Markdown | index.db | cold index | index peak RSS "
        "| search peak RSS (max / median of "
        f"{rows[0]['queries']}) | `--batch` peak RSS |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['files']:,} | {r['chunks']:,} | {r['markdown_mib']} MiB "
            f"| {r['index_db_mib']} MiB | {r['index_seconds']} s | {r['index_rss_mib']} MiB "
            f"| {r['search_rss_max_mib']} / {r['search_rss_median_mib']} MiB "
            f"| {r['batch_rss_mib']} MiB |"
        )
    by = {r["key"]: r for r in rows}
    small, wide, many = by["small"], by["bigfiles"], by["mb"]
    lines += [
        "",
        f"*Same {small['files']:,} files, {wide['markdown_mib'] / small['markdown_mib']:.0f}x "
        f"the Markdown* ({small['markdown_mib']} -> {wide['markdown_mib']} MiB): index peak RSS "
        f"{small['index_rss_mib']} -> {wide['index_rss_mib']} MiB, search "
        f"{small['search_rss_max_mib']} -> {wide['search_rss_max_mib']} MiB, `--batch` "
        f"{small['batch_rss_mib']} -> {wide['batch_rss_mib']} MiB. "
        + _content_verdict(small, wide),
        "",
        f"*{many['files'] / small['files']:.0f}x the files* ({small['files']:,} -> "
        f"{many['files']:,}): index peak RSS {small['index_rss_mib']} -> "
        f"{many['index_rss_mib']} MiB, search {small['search_rss_max_mib']} -> "
        f"{many['search_rss_max_mib']} MiB, about "
        f"{_per_k(small, many, 'search_rss_max_mib')} KiB per 1,000 files for a search. The "
        "changed-files check before every search compares the folders with the index's rows "
        "as it walks them, holding only the folders on its current path: no record per file "
        "is kept, and what remains grows with the widest folder.",
        "",
    ]
    return "\n".join(lines)


def _content_verdict(small: dict[str, Any], wide: dict[str, Any]) -> str:
    try:
        from memcli.search import snippets

        whole_kib = snippets.WHOLE_FILE_BYTES // 1024
        cached = f"{snippets._CACHE.max_bytes // (1024 * 1024)} MiB of"
    except (ImportError, AttributeError):
        whole_kib, cached = "a few hundred", "a bounded amount of"
    out = []
    if wide["index_rss_mib"] < 1.3 * small["index_rss_mib"]:
        out.append(
            "Indexing is streamed (one file at a time, batched transactions): its peak stays "
            "flat however much Markdown there is."
        )
    else:
        out.append("Indexing peak grows with the amount of Markdown.")
    if wide["search_rss_max_mib"] >= 1.15 * small["search_rss_max_mib"]:
        out.append(
            f"A search loads the whole indexed text of each file it hits to build snippets "
            f"(files up to {whole_kib} KiB; of larger ones only the chunks around the hits), "
            f"so bigger files cost more per search, and `--batch` keeps at most {cached} such "
            "text cached across queries: bounded by that cache, not by the folder."
        )
    else:
        out.append("Search takes a bounded number of candidates: its peak stays flat too.")
    return " ".join(out)


def _per_k(a: dict[str, Any], b: dict[str, Any], key: str) -> int:
    return round((b[key] - a[key]) * 1024 / ((b["files"] - a["files"]) / 1000))


def write_results(section: str) -> None:
    block = f"{START}\n{section}{END}\n"
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else "# Benchmark results\n\n"
    if START in text and END in text:
        head, rest = text.split(START, 1)
        tail = rest.split(END, 1)[1].lstrip("\n")
        text = head + block + ("\n" + tail if tail else "")
    else:
        text = text.rstrip("\n") + "\n\n" + block
    RESULTS.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=50.0, help="MiB of Markdown for the big index")
    ap.add_argument("--chunks", type=int, default=100_000, help="chunks for the search corpus")
    ap.add_argument("--small", type=int, default=1000, help="files in the small corpus")
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument("--write-results", action="store_true", help="update benchmarks/RESULTS.md")
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    home = Path(tempfile.mkdtemp(prefix="memcli-bounds-"))
    try:
        env = isolated_env(home)
        qs = queries()
        startup = run(memcli(None, "--version"), env)
        small_ws, small_manifest = corpus(args.small)
        small = measure(small_ws, env, qs, log)
        per_file_chunks = small["chunks"] / small["files"]
        per_file_bytes = small_manifest["bytes"] / args.small
        n_chunks = math.ceil(args.chunks / per_file_chunks * 1.03)
        n_mb = math.ceil(args.mb * MiB / per_file_bytes * 1.02)
        corpora = [("small", f"{args.small:,} files", small)]
        for key, name, files in (
            ("chunks", f"{args.chunks // 1000}k chunks", n_chunks),
            ("mb", f"{args.mb:g} MB", n_mb),
        ):
            ws, _ = corpus(files)
            corpora.append((key, name, measure(ws, env, qs, log)))
        # The same Markdown as the big corpus in as many files as the small one.
        wide = fewer_bigger_files(WORK / f"corpus-{n_mb}", n_mb, args.small)
        name = f"{args.mb:g} MB in {args.small:,} files"
        corpora.append(("bigfiles", name, measure(wide, env, qs, log)))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    res = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, {platform.system()}",
        "startup_rss_mib": round(startup["rss_mib"], 1),
        "corpora": [{"key": k, "name": n, **r} for k, n, r in corpora],
    }
    print(json.dumps(res, indent=1))
    if args.json:
        args.json.write_text(json.dumps(res, indent=1) + "\n")
    section = render(res)
    print(section)
    if args.write_results:
        write_results(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
