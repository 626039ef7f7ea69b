"""Keyword recall in Chinese, Japanese, Korean and mixed English-CJK text.

Usage::

    python benchmarks/multilingual_bench.py [--memcli PATH/TO/memcli] [--k 5] [--json]

``benchmarks/data/multilingual.json`` holds 48 facts (12 Chinese, 12 Japanese, 12 Korean, 12
mixing English words into CJK text), each with an English translation, and two questions per
fact in each language. Two workspaces are built, one with the facts as written and one with
their translations (one file per fact), and every question is asked of its own workspace with
``memcli search --batch``. A question counts as answered when its fact's file is among the
first ``--k`` results (and at 1: the top result). The report gives recall per language for the
facts as written and for their English translations, and the ratio of the two at 1 (the
target is at least 0.9).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "multilingual.json"
LANGS = ("zh", "ja", "ko", "mixed")


def build(memcli: str, root: Path, facts: list[dict[str, str]], field: str, env: dict) -> None:
    (root / "memory").mkdir(parents=True)
    quiet = {"env": env, "check": True, "stdout": subprocess.DEVNULL}
    subprocess.run([memcli, "-w", str(root), "-q", "init"], **quiet)
    for fact in facts:
        text = f"# Note {fact['id']}\n\n- {fact[field]}\n"
        (root / "memory" / f"{fact['id']}.md").write_text(text, encoding="utf-8")
    subprocess.run([memcli, "-w", str(root), "-q", "index"], **quiet)


def ask(memcli: str, root: Path, questions: list[str], k: int, env: dict) -> list[list[str]]:
    """The fact ids of the first ``k`` results of each question (one batch process)."""
    r = subprocess.run(
        [memcli, "-w", str(root), "search", "--batch", "-n", str(k), "--strategy", "keyword"],
        input="\n".join(questions) + "\n",
        capture_output=True,
        text=True,
        env=env,
    )
    answers = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    if len(answers) != len(questions):
        raise SystemExit(f"{len(questions)} questions, {len(answers)} answers: {r.stderr[-400:]}")
    return [[Path(h["path"]).stem for h in a.get("results", [])] for a in answers]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    beside = Path(sys.executable).with_name("memcli")  # the venv running this script
    ap.add_argument("--memcli", default=str(beside) if beside.exists() else "memcli")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    facts = json.loads(DATA.read_text(encoding="utf-8"))["facts"]
    tmp = Path(tempfile.mkdtemp(prefix="memcli-multilingual-"))
    env = {
        **os.environ,
        "MEMCLI_CONFIG_DIR": str(tmp / "config"),
        "MEMCLI_CACHE_DIR": str(tmp / "cache"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    try:
        figures: dict[str, dict[str, float]] = {}
        for field, qfield, name in (("text", "q", "native"), ("en", "q_en", "english")):
            root = tmp / name
            build(args.memcli, root, facts, field, env)
            questions = [(f["id"], f["lang"], q) for f in facts for q in f[qfield]]
            got = ask(args.memcli, root, [q for _, _, q in questions], args.k, env)
            for lang in LANGS:
                ranks = [
                    ids.index(fid) + 1 if fid in ids else None
                    for (fid, lg, _), ids in zip(questions, got, strict=True)
                    if lg == lang
                ]
                row = figures.setdefault(lang, {})
                row[f"{name}@1"] = sum(r == 1 for r in ranks) / len(ranks)
                row[f"{name}@{args.k}"] = sum(r is not None for r in ranks) / len(ranks)
        for row in figures.values():
            row["ratio@1"] = row["native@1"] / row["english@1"] if row["english@1"] else 0.0
        if args.json:
            print(json.dumps(figures, indent=2))
        else:
            k = args.k
            print(f"keyword recall@1 and @{k}, {len(facts)} facts, 2 questions each")
            print(f"{'language':10} {'written @1':>10} {'English @1':>10} {'ratio':>6}", end="")
            print(f" {f'written @{k}':>10} {f'English @{k}':>10}")
            for lang in LANGS:
                r = figures[lang]
                print(f"{lang:10} {r['native@1']:10.3f} {r['english@1']:10.3f}", end="")
                print(f" {r['ratio@1']:6.2f} {r[f'native@{k}']:10.3f} {r[f'english@{k}']:10.3f}")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
