"""Retrieval benchmark on LoCoMo-format conversations: evidence recall within a snippet budget.

Usage::

    python benchmarks/locomo.py PATH/TO/locomo.json [--hybrid] [--set KEY=VALUE ...]

For every conversation a workspace is built in a temporary folder: one Markdown file per
session under ``memory/`` (front matter ``date:`` and a heading with the session's date and
time), one list item per dialogue turn that carries its id::

    - [D3:7] Caroline: I went to the LGBTQ support group yesterday.

Image turns append `` [shares image: <caption>]``. Then ``memcli index`` runs with default
settings (keyword mode unless ``--hybrid``), and every question with evidence is searched with
``memcli search --batch --json``. Walking the results in rank order, snippet text is taken until
``--budget`` characters (2,000) have been taken, the last snippet cut at the budget; the turn ids
in the taken text are the retrieved turns. Evidence recall of a question is the share of its
evidence ids retrieved; the mean is reported over all questions and over categories 1-4
(category 5 is adversarial).

A plain BM25 ranking of single turns (lower-cased word tokens, no stemming, no stop words,
k1=1.2, b=0.75) is computed in the same run as the baseline, under the same budget and at ten
turns.

``--set search.limit=12`` passes a setting to memcli through its environment
(``MEMCLI_SEARCH_LIMIT``) to try other configurations. ``--hybrid`` starts the loopback stub
embedder of ``tests/stub_openai.py`` and sets ``embedding.model`` so that search runs hybrid.
The data file is read where it is; nothing of it is written outside the temporary folder.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TURN_ID = re.compile(r"\[(D\d+:\d+)\]")
EVIDENCE_ID = re.compile(r"D\d+:\d+")
WORD = re.compile(r"\w+")
BUDGET = 2000


@dataclass
class Turn:
    dia_id: str
    line: str  # the Markdown list item
    text: str  # speaker and words, for the baseline


@dataclass
class Conversation:
    sample_id: str
    sessions: list[tuple[int, str, list[Turn]]]  # (number, date_time, turns)
    questions: list[tuple[str, list[str], int]]  # (question, evidence ids, category)

    @property
    def turns(self) -> list[Turn]:
        return [t for _, _, turns in self.sessions for t in turns]


@dataclass
class Score:
    recalls: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    chars: list[int] = field(default_factory=list)

    def add(self, category: int, recall: float, chars: int) -> None:
        self.recalls[category].append(recall)
        self.chars.append(chars)

    def mean(self, categories: tuple[int, ...] | None = None) -> float:
        vals = [
            r for c, rs in self.recalls.items() if categories is None or c in categories for r in rs
        ]
        return sum(vals) / len(vals) if vals else 0.0

    def count(self) -> int:
        return sum(len(v) for v in self.recalls.values())


# -- data -------------------------------------------------------------------------------------
def one_line(text: Any) -> str:
    return " ".join(str(text).split())


def evidence_ids(raw: Any) -> list[str]:
    """Turn ids of an evidence list; malformed entries ('D8:6; D9:17', 'D') parsed defensively."""
    items = raw if isinstance(raw, list) else [raw]
    out: list[str] = []
    for item in items:
        for found in EVIDENCE_ID.findall(str(item)):
            if found not in out:
                out.append(found)
    return out


def load(path: Path) -> list[Conversation]:
    data = json.loads(path.read_text(encoding="utf-8"))
    convs = []
    for sample in data:
        conv = sample["conversation"]
        numbers = sorted(
            int(m.group(1))
            for k in conv
            if (m := re.fullmatch(r"session_(\d+)", k)) and isinstance(conv[k], list)
        )
        sessions = []
        for n in numbers:
            turns = []
            for t in conv[f"session_{n}"]:
                words = f"{one_line(t.get('speaker', ''))}: {one_line(t.get('text', ''))}"
                if t.get("blip_caption"):
                    words += f" [shares image: {one_line(t['blip_caption'])}]"
                turns.append(Turn(t["dia_id"], f"- [{t['dia_id']}] {words}", words))
            sessions.append((n, one_line(conv.get(f"session_{n}_date_time", "")), turns))
        questions = []
        for qa in sample.get("qa", []):
            ids = evidence_ids(qa.get("evidence", []))
            question = one_line(qa.get("question", ""))
            if ids and question:
                questions.append((question, ids, int(qa.get("category", 0))))
        convs.append(Conversation(str(sample.get("sample_id", len(convs))), sessions, questions))
    return convs


def session_date(date_time: str) -> str | None:
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(date_time, fmt).date().isoformat()
        except ValueError:
            pass
    return None


def write_workspace(conv: Conversation, root: Path) -> None:
    memory = root / "memory"
    memory.mkdir(parents=True, exist_ok=True)
    for n, date_time, turns in conv.sessions:
        day = session_date(date_time)
        head = f"---\ndate: {day}\n---\n" if day else ""
        body = "\n".join(t.line for t in turns)
        text = f"{head}# Session {n} · {date_time or 'undated'}\n\n{body}\n"
        (memory / f"session-{n:02d}.md").write_text(text, encoding="utf-8")


def write_combined(root: Path, data: Path) -> list[str]:
    """Every conversation of ``data`` in one workspace at ``root`` (``memory/<sample>/
    session-NN.md``, not indexed); returns all their questions."""
    from memcli.notes.workspace import init_workspace

    init_workspace(root)
    questions: list[str] = []
    for conv in load(data):
        tmp = root / ".tmp"
        write_workspace(conv, tmp)
        target = root / "memory" / conv.sample_id
        target.mkdir(parents=True, exist_ok=True)
        for f in sorted((tmp / "memory").iterdir()):
            f.rename(target / f.name)
        questions += [q for q, _, _ in conv.questions]
    return questions


# -- the metric -------------------------------------------------------------------------------
def taken_text(snippets: list[str], budget: int) -> str:
    """Snippets in rank order until ``budget`` characters are taken (the last one cut)."""
    out, left = [], budget
    for s in snippets:
        if left <= 0:
            break
        out.append(s[:left])
        left -= len(out[-1])
    return "\n".join(out)


def recall(evidence: list[str], text: str) -> float:
    got = set(TURN_ID.findall(text))
    return sum(1 for e in evidence if e in got) / len(evidence)


# -- baseline: plain BM25 over single turns ---------------------------------------------------
class BM25:
    def __init__(self, docs: list[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.tfs = [Counter(WORD.findall(d.lower())) for d in docs]
        self.lens = [sum(tf.values()) for tf in self.tfs]
        self.avg = sum(self.lens) / max(len(self.lens), 1)
        df: Counter[str] = Counter()
        for tf in self.tfs:
            df.update(tf.keys())
        n = len(docs)
        self.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}

    def rank(self, query: str) -> list[int]:
        terms = set(WORD.findall(query.lower()))
        scores = []
        for i, tf in enumerate(self.tfs):
            s = 0.0
            norm = self.k1 * (1 - self.b + self.b * self.lens[i] / self.avg)
            for t in terms:
                f = tf.get(t)
                if f:
                    s += self.idf[t] * f * (self.k1 + 1) / (f + norm)
            if s > 0:
                scores.append((-s, i))
        return [i for _, i in sorted(scores)]


# -- running memcli ---------------------------------------------------------------------------
def memcli(args: list[str], env: dict[str, str], stdin: str | None = None) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "memcli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"memcli {' '.join(args[:3])} failed ({proc.returncode}): {proc.stderr}")
    return proc.stdout


@contextmanager
def stub_embedder() -> Iterator[dict[str, str]]:
    sys.path.insert(0, str(ROOT))
    from tests.stub_openai import StubOpenAI

    with StubOpenAI() as stub:
        yield {
            "MEMCLI_EMBEDDING_MODEL": "openai/stub-embed",
            "MEMCLI_EMBEDDING_API_BASE": stub.base_url,
            "MEMCLI_EMBEDDING_API_KEY_ENV": "LOCOMO_STUB_KEY",
            "LOCOMO_STUB_KEY": "sk-stub-not-a-secret",
            "NO_PROXY": "127.0.0.1,localhost",
        }


def base_env(tmp: Path, settings: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")}
    env["MEMCLI_CONFIG_DIR"] = str(tmp / "config")  # no user config: default settings
    env["MEMCLI_CACHE_DIR"] = str(tmp / "cache")
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    for key, value in settings.items():
        section, _, name = key.partition(".")
        env[f"MEMCLI_{section.upper()}_{name.upper()}"] = value
    return env


def run(args: argparse.Namespace) -> dict[str, Any]:
    convs = load(Path(args.data))
    if args.only:
        convs = [c for c in convs if c.sample_id in args.only]
    settings = dict(kv.split("=", 1) for kv in args.set)
    system, base10, base_budget = Score(), Score(), Score()
    per_conv: dict[str, Score] = {}
    modes: Counter[str] = Counter()
    dump = open(args.dump, "w", encoding="utf-8") if args.dump else None  # noqa: SIM115
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="memcli-locomo-") as tmpdir:
        tmp = Path(tmpdir)
        with stub_embedder() if args.hybrid else _nothing() as extra:
            env = base_env(tmp, settings)
            env.update(extra)
            for conv in convs:
                root = tmp / conv.sample_id
                memcli(["-q", "init", str(root)], env)
                write_workspace(conv, root)
                memcli(["-q", "-w", str(root), "index", "--json"], env)
                queries = "".join(q + "\n" for q, _, _ in conv.questions)
                out = memcli(["-q", "-w", str(root), "search", "--batch", "--json"], env, queries)
                envelopes = [json.loads(line) for line in out.splitlines() if line.strip()]
                if [e["query"] for e in envelopes] != [q for q, _, _ in conv.questions]:
                    raise SystemExit(f"{conv.sample_id}: batch answers do not match the questions")
                turns = conv.turns
                bm25 = BM25([t.text for t in turns])
                for (question, evidence, cat), envelope in zip(
                    conv.questions, envelopes, strict=True
                ):
                    modes[envelope.get("mode", "?")] += 1
                    text = taken_text([r["snippet"] for r in envelope["results"]], args.budget)
                    r = recall(evidence, text)
                    system.add(cat, r, len(text))
                    per_conv.setdefault(conv.sample_id, Score()).add(cat, r, len(text))
                    ranked = [turns[i].line for i in bm25.rank(question)]
                    b10 = "\n".join(ranked[:10])
                    base10.add(cat, recall(evidence, b10), len(b10))
                    bb = taken_text(ranked, args.budget)
                    base_budget.add(cat, recall(evidence, bb), len(bb))
                    if dump:
                        dump.write(
                            json.dumps(
                                {
                                    "conv": conv.sample_id,
                                    "question": question,
                                    "category": cat,
                                    "evidence": evidence,
                                    "recall": r,
                                    "baseline_recall": recall(evidence, bb),
                                    "retrieved": TURN_ID.findall(text),
                                    "results": envelope["results"],
                                }
                            )
                            + "\n"
                        )
    if dump:
        dump.close()
    cats = (1, 2, 3, 4)
    return {
        "conversations": len(convs),
        "questions": system.count(),
        "budget": args.budget,
        "settings": settings,
        "hybrid": args.hybrid,
        "modes": dict(modes),
        "seconds": round(time.perf_counter() - t0, 1),
        "memcli": _summary(system, cats),
        "baseline_bm25_budget": _summary(base_budget, cats),
        "baseline_bm25_top10": _summary(base10, cats),
        "by_conversation": {k: round(v.mean(), 4) for k, v in per_conv.items()},
    }


def _summary(score: Score, cats: tuple[int, ...]) -> dict[str, Any]:
    return {
        "recall": round(score.mean(), 4),
        "recall_cat1_4": round(score.mean(cats), 4),
        "by_category": {str(c): round(score.mean((c,)), 4) for c in sorted(score.recalls)},
        "mean_chars": round(sum(score.chars) / max(len(score.chars), 1)),
    }


@contextmanager
def _nothing() -> Iterator[dict[str, str]]:
    yield {}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("data", help="LoCoMo-format JSON file (e.g. locomo-dev.json)")
    p.add_argument("--hybrid", action="store_true", help="embed with the loopback stub server")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a memcli setting for this run (repeatable)",
    )
    p.add_argument("--budget", type=int, default=BUDGET, help="snippet characters per question")
    p.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="SAMPLE_ID",
        help="only this conversation (repeatable)",
    )
    p.add_argument("--dump", help="write one JSON line per question to this file")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    args = p.parse_args(argv)
    res = run(args)
    if args.json:
        print(json.dumps(res, indent=2))
        return
    print(
        f"LoCoMo retrieval: {res['conversations']} conversations, {res['questions']} questions, "
        f"budget {res['budget']} chars, mode {res['modes']}, {res['seconds']} s"
    )
    if res["settings"]:
        print("settings: " + ", ".join(f"{k}={v}" for k, v in res["settings"].items()))
    print(f"{'system':<26} {'recall':>7} {'cat 1-4':>8} {'chars':>6}  by category")
    for name, key in (
        ("memcli", "memcli"),
        ("BM25 turns (budget)", "baseline_bm25_budget"),
        ("BM25 turns (top 10)", "baseline_bm25_top10"),
    ):
        s = res[key]
        cats = " ".join(f"{c}:{v:.3f}" for c, v in s["by_category"].items())
        print(
            f"{name:<26} {s['recall']:>7.4f} {s['recall_cat1_4']:>8.4f} {s['mean_chars']:>6}  "
            f"{cats}"
        )


if __name__ == "__main__":
    main()
