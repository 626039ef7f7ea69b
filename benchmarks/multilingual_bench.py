"""Recall in Chinese, Japanese, Korean and mixed text, and across languages, keyword and hybrid.

Usage::

    python benchmarks/multilingual_bench.py [--memcli PATH/TO/memcli] [--k 5] [--json]
        [--model-dir DIR | --no-hybrid] [--layout files|days] [--write-results]

``benchmarks/data/multilingual.json`` holds 48 facts (12 Chinese, 12 Japanese, 12 Korean, 12
mixing English words into CJK text), each with an English translation, and two questions per
fact in each language. Two workspaces are built, one with the facts as written and one with
their translations (one file per fact), and every question is asked with
``memcli search --batch``. Each file holds its fact as one list item, as ``memcli add`` writes
it. A question counts as answered when its fact's file is among the
first ``--k`` results (and at 1: the top result).

``--layout days`` writes the facts as a day of ``memcli add`` does instead: six to a file
(``- HH:MM fact`` under the day's heading), the languages mixed, so that several facts share
a chunk. A question then counts only when the text a result quotes (its snippet) holds the
fact: a result that finds the right chunk and quotes its other facts answers nothing.

Same language: each question is asked of the workspace in its own language; the report gives
recall per language for the facts as written and for their English translations, and the
ratio of the two at 1 (the target is at least 0.9).

Across languages: the English questions about the Chinese, Japanese and Korean facts are asked
of the workspace as written (``en->zh``...: 24 questions each, 72 in all), and their questions
in Chinese, Japanese and Korean of the English workspace (``zh->en``...: 72 in all); top-1 and
top-3 per direction. Keyword search can only find what shares words; the target for hybrid
search is a top-3 of at least 0.8 across languages, with the same-language figures no worse
than keyword search alone.

Hybrid search runs with the multilingual model ``local/intfloat/multilingual-e5-small`` read
from ``--model-dir`` (default: ``$MEMCLI_MULTILINGUAL_MODEL_DIR``, else
``multilingual-e5-small-q4-onnx`` in ``../shared/models`` beside the project); without that
folder, or with ``--no-hybrid``, only keyword search runs. ``--write-results`` puts the tables
in ``benchmarks/RESULTS.md`` (section ``multilingual``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from sections import write_section  # noqa: E402

DATA = HERE / "data" / "multilingual.json"
LANGS = ("zh", "ja", "ko", "mixed")
CROSS = ("zh", "ja", "ko")
MODEL = "local/intfloat/multilingual-e5-small"
MODEL_FOLDER = "multilingual-e5-small-q4-onnx"


def default_model_dir() -> Path | None:
    given = os.environ.get("MEMCLI_MULTILINGUAL_MODEL_DIR")
    candidates = [Path(given)] if given else []
    candidates += [HERE.parent.parent / "shared" / "models" / MODEL_FOLDER]
    return next((c for c in candidates if (c / "model.onnx").is_file()), None)


#: Facts to a day file in ``--layout days``.
PER_DAY = 6


def build(
    memcli: str, root: Path, facts: list[dict[str, str]], field: str, env: dict, layout: str
) -> None:
    (root / "memory").mkdir(parents=True)
    quiet = {"env": env, "check": True, "stdout": subprocess.DEVNULL}
    subprocess.run([memcli, "-w", str(root), "-q", "init"], **quiet)
    if layout == "days":
        mixed = sorted(facts, key=lambda f: (facts.index(f) % 12, f["lang"]))
        for day, start in enumerate(range(0, len(mixed), PER_DAY), start=1):
            lines = [f"- 09:{n:02d} {f[field]}" for n, f in enumerate(mixed[start:][:PER_DAY])]
            text = f"# 2026-11-{day:02d}\n\n" + "\n".join(lines) + "\n"
            (root / "memory" / f"2026-11-{day:02d}.md").write_text(text, encoding="utf-8")
    else:
        for fact in facts:
            # a list item, as memcli add writes it: no heading naming the fact (its id holds
            # the language code, which the model would read too)
            (root / "memory" / f"{fact['id']}.md").write_text(
                f"- {fact[field]}\n", encoding="utf-8"
            )
    subprocess.run([memcli, "-w", str(root), "-q", "index"], **quiet)


def ask(
    memcli: str,
    root: Path,
    questions: list[str],
    k: int,
    env: dict,
    strategy: str,
    quoted: dict[str, str] | None = None,
) -> list[list[set[str]]]:
    """The fact ids of each of the first ``k`` results of each question (one batch
    process): its file's, or with ``quoted`` (fact id -> text) those whose text it quotes."""
    r = subprocess.run(
        [memcli, "-w", str(root), "search", "--batch", "-n", str(k), "--strategy", strategy],
        input="\n".join(questions) + "\n",
        capture_output=True,
        text=True,
        env=env,
    )
    answers = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    if len(answers) != len(questions):
        raise SystemExit(f"{len(questions)} questions, {len(answers)} answers: {r.stderr[-400:]}")
    modes = {a.get("mode") for a in answers}
    if modes != {strategy}:
        raise SystemExit(f"asked for {strategy} search, got {modes}: {r.stderr[-400:]}")
    if quoted is None:
        return [[{Path(h["path"]).stem} for h in a.get("results", [])] for a in answers]
    return [
        [{fid for fid, text in quoted.items() if text in h["snippet"]} for h in a["results"]]
        for a in answers
    ]


def rates(pairs: list[tuple[str, list[set[str]]]], k: int) -> tuple[float, float]:
    """(share at 1, share within ``k``) of (fact id, each result's fact ids) pairs."""
    if not pairs:
        return 0.0, 0.0
    top1 = sum(1 for fid, found in pairs if found[:1] and fid in found[0]) / len(pairs)
    topk = sum(1 for fid, found in pairs if any(fid in ids for ids in found[:k])) / len(pairs)
    return top1, topk


def run_mode(
    memcli: str, tmp: Path, facts: list[dict], k: int, env: dict, strategy: str, layout: str
) -> dict[str, dict[str, float]]:
    """Same-language and cross-language figures of one search strategy."""
    roots = {}
    texts: dict[str, dict[str, str] | None] = {}
    for field, name in (("text", "native"), ("en", "english")):
        roots[name] = tmp / f"{strategy}-{name}"
        build(memcli, roots[name], facts, field, env, layout)
        texts[name] = {f["id"]: f[field] for f in facts} if layout == "days" else None
    n = max(k, 3)
    asks = {
        # (workspace, question field): the questions asked of it
        ("native", "q"): [(f["id"], f["lang"], q) for f in facts for q in f["q"]],
        ("english", "q_en"): [(f["id"], f["lang"], q) for f in facts for q in f["q_en"]],
        ("native", "q_en"): [
            (f["id"], f["lang"], q) for f in facts if f["lang"] in CROSS for q in f["q_en"]
        ],
        ("english", "q"): [
            (f["id"], f["lang"], q) for f in facts if f["lang"] in CROSS for q in f["q"]
        ],
    }
    got = {
        key: list(
            zip(
                qs,
                ask(
                    memcli,
                    roots[key[0]],
                    [q for _, _, q in qs],
                    n,
                    env,
                    strategy,
                    texts[key[0]],
                ),
                strict=True,
            )
        )
        for key, qs in asks.items()
    }
    figures: dict[str, dict[str, float]] = {}
    for lang in LANGS:
        row = figures.setdefault(lang, {})
        for key, name in ((("native", "q"), "native"), (("english", "q_en"), "english")):
            pairs = [(fid, ids) for (fid, lg, _), ids in got[key] if lg == lang]
            row[f"{name}@1"], row[f"{name}@{k}"] = rates(pairs, k)
            row[f"{name}@3"] = rates(pairs, 3)[1]
        row["ratio@1"] = row["native@1"] / row["english@1"] if row["english@1"] else 0.0
    for key, fmt in ((("native", "q_en"), "en->{}"), (("english", "q"), "{}->en")):
        for lang in (*CROSS, "all"):
            pairs = [(fid, ids) for (fid, lg, _), ids in got[key] if lang in (lg, "all")]
            top1, top3 = rates(pairs, 3)
            figures[fmt.format(lang)] = {"@1": top1, "@3": top3, "questions": len(pairs)}
    return figures


def report(
    results: dict[str, dict[str, dict[str, float]]], k: int, facts: int, layout: str = "files"
) -> str:
    """The figures as Markdown tables."""
    counts = (
        f"{facts} facts, six to a day file, 2 questions each; a question counts when the"
        " snippet of the first result quotes its fact (@1), or of one of the first 3 or"
        f" {k}."
        if layout == "days"
        else f"{facts} facts, 2 questions each; a question counts when its fact's file is"
        f" first (@1) or among the first 3 or {k}."
    )
    out = [counts, ""]
    out += [
        "Same language (each question asked of the workspace in its own language):",
        "",
        "| mode | language | written @1 | written @3 | English @1 | English @3 | ratio @1 |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for mode, figs in results.items():
        for lang in LANGS:
            r = figs[lang]
            out.append(
                f"| {mode} | {lang} | {r['native@1']:.3f} | {r['native@3']:.3f}"
                f" | {r['english@1']:.3f} | {r['english@3']:.3f} | {r['ratio@1']:.2f} |"
            )
    out += [
        "",
        "Across languages (an English question for a fact written in Chinese, Japanese or Korean,"
        " and the reverse):",
        "",
        "| mode | direction | questions | top-1 | top-3 |",
        "|---|---|---:|---:|---:|",
    ]
    for mode, figs in results.items():
        for fmt in ("en->{}", "{}->en"):
            for lang in (*CROSS, "all"):
                r = figs[fmt.format(lang)]
                name = fmt.format(lang).replace("->", " → ")
                bold = "**" if lang == "all" else ""
                out.append(
                    f"| {mode} | {bold}{name}{bold} | {int(r['questions'])}"
                    f" | {bold}{r['@1']:.3f}{bold} | {bold}{r['@3']:.3f}{bold} |"
                )
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    beside = Path(sys.executable).with_name("memcli")  # the venv running this script
    ap.add_argument("--memcli", default=str(beside) if beside.exists() else "memcli")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--model-dir", help=f"folder of {MODEL} (default: found beside the project)")
    ap.add_argument("--no-hybrid", action="store_true", help="keyword search only")
    ap.add_argument(
        "--layout",
        choices=("files", "days"),
        default="files",
        help="a file per fact, or six facts to a day file (a hit counts when it quotes the fact)",
    )
    ap.add_argument("--write-results", action="store_true", help="update benchmarks/RESULTS.md")
    args = ap.parse_args(argv)
    facts = json.loads(DATA.read_text(encoding="utf-8"))["facts"]
    model_dir = (
        None
        if args.no_hybrid
        else (Path(args.model_dir) if args.model_dir else default_model_dir())
    )
    tmp = Path(tempfile.mkdtemp(prefix="memcli-multilingual-"))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")},
        "MEMCLI_CONFIG_DIR": str(tmp / "config"),
        "MEMCLI_CACHE_DIR": str(tmp / "cache"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    try:
        results: dict[str, dict[str, dict[str, float]]] = {}
        seconds: dict[str, float] = {}
        t0 = time.perf_counter()
        results["keyword"] = run_mode(args.memcli, tmp, facts, args.k, env, "keyword", args.layout)
        seconds["keyword"] = round(time.perf_counter() - t0, 1)
        if model_dir is not None:
            hybrid_env = {
                **env,
                "MEMCLI_EMBEDDING_MODEL": MODEL,
                "MEMCLI_EMBEDDING_MODEL_PATH": str(model_dir),
            }
            t0 = time.perf_counter()
            results["hybrid"] = run_mode(
                args.memcli, tmp, facts, args.k, hybrid_env, "hybrid", args.layout
            )
            seconds["hybrid"] = round(time.perf_counter() - t0, 1)
        elif not args.no_hybrid:
            print(f"hybrid: skipped ({MODEL_FOLDER} not found; --model-dir DIR)", file=sys.stderr)
        if args.json:
            print(json.dumps({"results": results, "seconds": seconds}, indent=2))
        else:
            print(report(results, args.k, len(facts), args.layout), end="")
            print(f"seconds: {seconds}, load average {os.getloadavg()[0]:.1f}")
        if args.write_results:
            when = time.strftime("%Y-%m-%d")
            head = (
                f"### Across languages: `benchmarks/multilingual_bench.py` ({when})\n\n"
                f"Hybrid: `{MODEL}` (weighted fusion, the defaults); keyword: the same"
                " workspaces without a model.\n\n"
            )
            section = "multilingual" if args.layout == "files" else "multilingual-days"
            write_section(section, head + report(results, args.k, len(facts), args.layout))
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
