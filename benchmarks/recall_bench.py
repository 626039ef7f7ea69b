"""Recall for an agent's prompt: does the right fact come up, and does noise stay out?

Usage::

    python benchmarks/recall_bench.py [--quick] [--write-results] [--models-dir DIR]

Two project memories are written, each into a temporary workspace of its own, with
coding-agent prompts written for them: relevant ones, each naming the fact(s) it should
recall and mostly not using their words, and unrelated ones (refactors, typos, generic
questions, commands, ``/compact``, short replies). ``benchmarks/data/recall_project.json``: a
shop's web service, 68 facts in 12 dated files (decisions, constraints, procedures,
conventions and gotchas about payments, auth, deploys, the database, caching, tests,
logging, on-call). ``benchmarks/data/recall_logistics.json``: a logistics company's data
platform and driver app, 63 facts, written apart from the first; its unrelated prompts share
ordinary words with its facts by chance more often (log, version, flag, route, model).

Each project's prompts are split in two halves (alternately, in file order). The *tuning*
halves of both projects together are what a rule is chosen on; each project's *checking*
half is what it must hold on too, reported apart. For each mode (keyword, the default without
an embedding model; hybrid with each local model ``--models-dir`` holds) it reports, per
rule:

* **relevant**: the share of relevant prompts whose recalled block holds one of their facts;
* **unrelated**: the share of unrelated prompts that got any recall;
* **riders**: entries in the recalled blocks of relevant prompts that are none of their
  facts (per recalled prompt).

The rules are swept, in process, on the results of the search recall runs (the prompt as
``Memory.recall`` cleans it, ``agent.recall_limit`` results, no threshold), each result
standing for the facts its matching passage quotes (``score >= t``) or, with vectors, for the
entry of its chunk nearest the prompt and that entry's own similarity (``entry similarity >=
t``, swept around the model's measured value). The row **recall** runs ``Memory.recall``
itself with the shipped settings; the row before it, the same results as a search's context
block (each with its neighbouring entries), shows what riding along costs. Hybrid rows come
for each local model memcli knows whose folder ``--models-dir`` holds (``../shared/models``). A
sample of prompts goes through the whole process ``memcli agent hook prompt`` too, to check
that it gives the same blocks as in process. ``--write-results`` replaces the section between
``<!-- recall:begin -->`` and ``<!-- recall:end -->`` of ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

DATA = HERE / "data" / "recall_project.json"
#: The project memories, each with its prompts: a shop's web service, a logistics platform.
PROJECTS = (("shop", DATA), ("logistics", HERE / "data" / "recall_logistics.json"))
MODELS_DIR = ROOT.parent / "shared" / "models"
MEMCLI = [sys.executable, "-m", "memcli"]


def log(msg: str) -> None:
    print(f"[recall_bench] {msg}", file=sys.stderr, flush=True)


# -- the workspace ---------------------------------------------------------------------------
def entry_line(e: dict[str, Any]) -> str:
    """An entry of the data as ``memcli add`` writes it: a list item with its time, type and
    tags."""
    tags = "".join(f" #{t}" for t in e["tags"])
    return f"- {e['time']} [{e['type']}] {e['text']}{tags}"


def write_memory(root: Path, data: dict[str, Any], today: date) -> dict[str, str]:
    """The data's dated files under ``root/memory``; fact id by fact text."""
    texts: dict[str, str] = {}
    for f in data["files"]:
        day = (today - timedelta(days=int(f["days_ago"]))).isoformat()
        lines = [f"# {day}", ""]
        for e in f["entries"]:
            lines.append(entry_line(e))
            texts[e["text"]] = e["id"]
        (root / "memory" / f"{day}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return texts


def halves(items: list[Any]) -> tuple[list[Any], list[Any]]:
    """(tuning, checking): items 0, 2, 4... and 1, 3, 5..."""
    return items[0::2], items[1::2]


def facts_in(text: str, ids: dict[str, str]) -> set[str]:
    """The facts whose text a recalled block quotes."""
    return {fid for fact, fid in ids.items() if fact in text}


# -- rules -----------------------------------------------------------------------------------
# A rule sees the candidates of a prompt, best first, and says which facts to recall. A
# candidate: (score, fact ids of its matching passage, similarity of an entry to the prompt
# or None in keyword mode, fact ids of that entry, the prompt's mean similarity to its
# nearest everyday requests (memcli.search.background) or None in keyword mode, where it
# comes from, and whether the entry names a thing the prompt names in other words
# (memcli.search.related). Where from: "search" (a result of recall's search, with the entry
# of its chunk nearest the prompt), "other" (another entry of that chunk) or "keyword" (with
# vectors: an entry of the best keyword result's matching lines, its score that result's).
Cand = tuple[float, set[str], float | None, set[str], float | None, str, bool]


def searched(cands: list[Cand]) -> list[Cand]:
    return [c for c in cands if c[5] == "search"]


def fixed(t: float) -> Any:
    def rule(cands: list[Cand]) -> list[set[str]]:
        return [c[1] for c in searched(cands) if c[0] >= t]

    rule.__name__ = f"score >= {t:.2f}"
    return rule


def relative(t: float, r: float) -> Any:
    def rule(cands: list[Cand]) -> list[set[str]]:
        cands = searched(cands)
        if not cands or cands[0][0] < t:
            return []
        return [c[1] for c in cands if c[0] >= r * cands[0][0]]

    rule.__name__ = f"best >= {t:.2f}, others >= {r:.2f} x best"
    return rule


def nearest(t: float) -> Any:
    """Recall's rule with vectors: the entry of each candidate's chunk nearest the prompt,
    when its similarity reaches ``t``."""

    def rule(cands: list[Cand]) -> list[set[str]]:
        return [c[3] for c in searched(cands) if c[2] is not None and c[2] >= t]

    rule.__name__ = f"entry similarity >= {t:.4g}"
    return rule


def nearer(t: float, margin: float) -> Any:
    """Recall's rule: :func:`nearest`, and the entry nearer the prompt than the everyday
    requests nearest it are, by ``margin``."""

    def rule(cands: list[Cand]) -> list[set[str]]:
        return [
            c[3]
            for c in searched(cands)
            if c[2] is not None and c[4] is not None and c[2] >= max(t, c[4] + margin)
        ]

    rule.__name__ = f"entry similarity >= {t:.4g} and >= everyday requests' {margin:+.4g}"
    return rule


def agreeing(t: float, margin: float, score: float, agreed: float) -> Any:
    """Recall's rule (memcli.providers.models.RecallRule): :func:`nearer`, and the entries of
    the best keyword result (when it scores at least ``score``) with the margin ``agreed``."""
    vectors = nearer(t, margin)

    def rule(cands: list[Cand]) -> list[set[str]]:
        first: list[set[str]] = vectors(cands)
        return first + [
            c[3]
            for c in cands
            if c[5] == "keyword"
            and c[0] >= score
            and c[2] is not None
            and c[4] is not None
            and c[2] >= max(t, c[4] + agreed)
        ]

    rule.__name__ = (
        f"{vectors.__name__}; the best keyword result's entries (score >= {score:.2f})"
        f" >= everyday requests' {agreed:+.4g}"
    )
    return rule


def relating(t: float, margin: float, score: float, agreed: float, related: float) -> Any:
    """Recall's rule (memcli.providers.models.RecallRule): every entry of the results' chunks
    and of the best keyword result's lines (when it scores at least ``score``), with the
    smallest margin over the everyday requests that applies to it: ``margin``, the entry of
    its chunk nearest the prompt; ``agreed``, an entry of the best keyword result; ``related``,
    an entry that names a thing the prompt names in other words. The :data:`RECALL_LIMIT`
    entries nearest the prompt of those that pass."""

    def rule(cands: list[Cand]) -> list[set[str]]:
        kept: dict[frozenset[str], float] = {}  # an entry (its facts): its similarity
        for c in cands:
            if c[5] == "keyword" and c[0] < score:  # no keyword result agrees
                continue
            margins = [margin] if c[5] == "search" else [agreed] if c[5] == "keyword" else []
            if c[6]:
                margins.append(related)
            usual, sim = c[4], c[2]
            if not margins or sim is None or usual is None:
                continue
            if sim >= max(t, usual + min(margins)):
                kept[frozenset(c[3])] = sim
        best = sorted(kept, key=lambda k: -kept[k])[:RECALL_LIMIT]
        return [set(k) for k in best]

    rule.__name__ = (
        f"{agreeing(t, margin, score, agreed).__name__}; entries that name what the prompt"
        f" names in other words >= everyday requests' {related:+.4g}; the"
        f" {RECALL_LIMIT} nearest"
    )
    return rule


def evaluate(
    rule: Any, relevant: list[tuple[list[str], list[Cand]]], unrelated: list[list[Cand]]
) -> dict[str, float]:
    found = riders = recalled = 0
    for want, cands in relevant:
        kept = rule(cands)
        got = set().union(*kept) if kept else set()
        if got & set(want):
            found += 1
        if kept:
            recalled += 1
            riders += len(got - set(want))
    noisy = sum(1 for cands in unrelated if rule(cands))
    return {
        "relevant": found / max(len(relevant), 1),
        "unrelated": noisy / max(len(unrelated), 1),
        "riders": riders / max(recalled, 1),
    }


# -- running it ------------------------------------------------------------------------------
#: The targets: relevant prompts recalled with their fact, unrelated prompts with any recall.
TARGET_RELEVANT, TARGET_UNRELATED = 0.95, 0.05
THRESHOLDS = (0.25, 0.30, 0.35, 0.40, 0.45, 0.50, 0.55)
QUICK_THRESHOLDS = (0.35, 0.45)
#: Recall's rule with vectors swept per model: floors of the entry's similarity, highest
#: first (of two rules as good on the tuning halves, the stricter is chosen), and margins
#: over the everyday requests. E5's similarities sit in a narrow band: finer steps.
GRIDS: dict[str, tuple[list[float], list[float]]] = {
    "all-MiniLM-L6-v2": (
        [round(0.45 - i * 0.01, 3) for i in range(31)],
        [0.05, 0.02, 0.0, -0.02, -0.05],
    ),
    "multilingual-e5-small": (
        [round(0.90 - i * 0.005, 4) for i in range(41)],
        [0.02, 0.01, 0.005, 0.0, -0.005, -0.01, -0.02],
    ),
}


def grid(model: str, floor: float) -> tuple[list[float], list[float]]:
    """The floors and margins swept for ``model``: its own (:data:`GRIDS`), or for a model
    not listed there, floors 0.10 either side of its ``floor`` in steps of 0.01."""
    own = GRIDS.get(model)
    if own is not None:
        return own
    return [round(floor + 0.10 - i * 0.01, 3) for i in range(21)], [0.05, 0.02, 0.0, -0.02, -0.05]


#: For the entries of the best keyword result: its scores from which they count, and their
#: margins over the everyday requests (strictest first).
AGREED_SCORES = (0.45, 0.40, 0.35, 0.30, 0.25)
AGREED_MARGINS = (0.0, -0.01, -0.02, -0.03, -0.04, -0.05)
#: With related entries (memcli.search.related): their margins over the everyday requests,
#: and the keyword scores and margins swept with them (strictest first; fewer: the sweep
#: multiplies).
#: The entries recall gives at most (``agent.recall_limit``'s default).
RECALL_LIMIT = 3
RELATED_MARGINS = (0.0, -0.02, -0.04, -0.05, -0.06, -0.08)
RELATED_SCORES = (0.45, 0.40, 0.35)
RELATED_AGREED = (0.0, -0.02, -0.04)
#: Prompts of each kind that also go through the whole process ``memcli agent hook prompt``.
HOOK_SAMPLE = 6


def memcli(root: Path, env: dict[str, str], *args: str) -> None:
    r = subprocess.run(
        [*MEMCLI, "-q", "-w", str(root), *args], capture_output=True, text=True, env=env
    )
    if r.returncode != 0:
        raise SystemExit(f"memcli {' '.join(args)} failed: {r.stderr[-2000:]}")


def hook_text(root: Path, env: dict[str, str], prompt: str) -> str:
    r = subprocess.run(
        [*MEMCLI, "agent", "hook", "prompt"],
        input=json.dumps({"cwd": str(root), "prompt": prompt}),
        capture_output=True,
        text=True,
        cwd=root,
        env=env,
        timeout=120,
    )
    if r.returncode != 0 or not r.stdout.strip():
        return ""
    return str(json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"])


def measure_mode(
    root: Path, env: dict[str, str], data: dict[str, Any], ids: dict[str, str], mode: str
) -> dict[str, Any]:
    """Candidates (for the sweep) and the shipped recall's blocks of every prompt, in process;
    a sample through the hook process, compared with the blocks in process."""
    from functools import partial

    import memcli.search.background as background
    import memcli.search.related as related
    from memcli.memory import Memory
    from memcli.search.context import _core
    from memcli.search.nearest import chunk_entries, matched_entries
    from memcli.search.options import SearchRequest
    from memcli.service.agent import MIN_RECALL_CHARS, RECALL_QUERY_CHARS, recall_search

    relevant = [(r["prompt"], r["facts"]) for r in data["relevant"]]
    unrelated = list(data["unrelated"])
    cands: dict[str, list[Cand]] = {}
    blocks: dict[str, str] = {}
    given: dict[str, list[set[str]]] = {}  # the facts of each prompt's recalled block
    with_neighbours: dict[str, list[set[str]]] = {}  # ... of its search's context block
    with Memory.open(root) as mem:
        limit = int(mem.settings.get("agent.recall_limit"))
        opts = mem.search_options(SearchRequest(limit=limit, min_score=0.0))
        keyword = mem.search_options(SearchRequest(limit=1, min_score=0.0, strategy="keyword"))
        default = float(mem.settings.get("agent.recall_min_score"))
        similarity = mem.recall_min_similarity()
        shipped = mem.search_options(SearchRequest(limit=limit, min_score=default))
        budget = int(mem.settings.get("agent.recall_tokens"))
        for prompt in [p for p, _ in relevant] + unrelated:
            text = " ".join(prompt.split())
            found: list[Cand] = []
            if len(text) >= MIN_RECALL_CHARS and not text.startswith("/"):  # as recall does
                result = recall_search(mem, text[:RECALL_QUERY_CHARS], opts)
                if result.mode != mode:
                    raise SystemExit(f"searched in mode {result.mode}, not {mode}")
                quoted = {}  # each result's facts, as its matching passage quotes them
                for h in result.hits:
                    core = _core(h)
                    quoted[h.chunk_id] = facts_in(core[2] if core else h.snippet, ids)
                if mode == "keyword" or mem.embedder is None:
                    for h in result.hits:
                        found.append(
                            (h.score, quoted[h.chunk_id], None, set(), None, "search", False)
                        )
                else:
                    vector = mem.embedder.embed_query(result.query)
                    embed = partial(mem.embedder.embed, quick=True)
                    usual = background.similarity(vector, embed, mem.embedder.fingerprint.key)
                    names = related.named(result.query)
                    for h, sim, nearest in chunk_entries(result.hits, vector, embed):
                        one = facts_in(h.snippet, ids)
                        near = bool(names & related.entry_named(h.snippet))
                        where = "search" if nearest else "other"
                        got = quoted[h.chunk_id] if nearest else one
                        found.append((h.score, got, sim, one, usual, where, near))
                    for h in mem.search(result.query, keyword).hits[:1]:  # the best keyword
                        for e, sim in matched_entries(h, vector, embed):  # result's entries
                            one = facts_in(e.snippet, ids)
                            near = bool(names & related.entry_named(e.snippet))
                            found.append((h.score, one, sim, one, usual, "keyword", near))
            cands[prompt] = found
            ctx = mem.recall(prompt)
            blocks[prompt] = ctx.block.text if ctx is not None else ""
            given[prompt] = [facts_in(blocks[prompt], ids)] if blocks[prompt] else []
            # the same results as a search's context block: each with its neighbours
            whole = mem.context(text[:RECALL_QUERY_CHARS], shipped, budget) if found else None
            block = whole.block.text if whole and whole.block.included else ""
            with_neighbours[prompt] = [facts_in(block, ids)] if block else []
        whole = whole_memory(mem, data, [p for p, _ in relevant] + unrelated, limit)
    sample = [p for p, _ in relevant[:HOOK_SAMPLE]] + unrelated[:HOOK_SAMPLE]
    same = sum(1 for p in sample if hook_text(root, env, p) == blocks[p])
    return {
        "mode": mode,
        "default": default,
        "similarity": similarity if mode != "keyword" else None,
        "cands": cands,
        "whole": whole,
        "given": given,
        "with_neighbours": with_neighbours,
        "limit": limit,
        "hook_same": same,
        "hook_sample": len(sample),
    }


def whole_memory(mem: Any, data: dict[str, Any], prompts: list[str], limit: int) -> Any:
    """Without a search: every entry of the memory ranked by its own similarity to each prompt,
    the first ``limit`` as candidates (None in keyword mode): what a threshold on the model's
    own similarity does, whatever the search finds."""
    import memcli.search.background as background
    from memcli.notes.entryparse import plain_entry
    from memcli.search.nearest import cosine
    from memcli.service.agent import MIN_RECALL_CHARS, RECALL_QUERY_CHARS

    if mem.embedder is None:
        return None
    entries = [(e["id"], plain_entry(entry_line(e))) for f in data["files"] for e in f["entries"]]
    vectors = mem.embedder.embed([text for _, text in entries])

    out: dict[str, list[Cand]] = {}
    for prompt in prompts:
        text = " ".join(prompt.split())
        if len(text) < MIN_RECALL_CHARS or text.startswith("/"):  # as recall does
            out[prompt] = []
            continue
        query = mem.embedder.embed_query(text[:RECALL_QUERY_CHARS])
        sims = sorted(
            ((cosine(query, v), fid) for (fid, _), v in zip(entries, vectors, strict=True)),
            reverse=True,
        )
        usual = background.similarity(query, mem.embedder.embed, mem.embedder.fingerprint.key)
        out[prompt] = [
            (sim, {fid}, sim, {fid}, usual, "search", False) for sim, fid in sims[:limit]
        ]
    return out


Project = tuple[str, dict[str, Any], dict[str, str], dict[str, Any]]  # name, data, ids, m


def split(projects: list[Project], key: str = "cands") -> tuple[Any, Any, list[Any]]:
    """The tuning halves of every project together (relevant, unrelated), and each project's
    checking half (name, relevant, unrelated): candidates from ``m[key]``."""
    rt: list[Any] = []
    ut: list[Any] = []
    checks = []
    for name, data, _, m in projects:
        rel = [(r["facts"], m[key][r["prompt"]]) for r in data["relevant"]]
        unr = [m[key][p] for p in data["unrelated"]]
        (r1, r2), (u1, u2) = halves(rel), halves(unr)
        rt += r1
        ut += u1
        checks.append((name, r2, u2))
    return rt, ut, checks


def best_rule(
    rules: list[Any], rt: list[Any], ut: list[Any], checks: list[Any]
) -> tuple[float, str, list[dict[str, float]]] | None:
    """The rule with the most relevant prompts recalled and unrelated ones within the target,
    on the tuning halves (ties: the first listed): (its tuning relevant share, its name, its
    figures on each project's checking half)."""
    best: tuple[float, str, list[dict[str, float]]] | None = None
    for rule in rules:
        t = evaluate(rule, rt, ut)
        if t["unrelated"] <= TARGET_UNRELATED and (best is None or t["relevant"] > best[0]):
            best = (t["relevant"], rule.__name__, [evaluate(rule, r, u) for _, r, u in checks])
    return best


def cells(t: dict[str, float]) -> str:
    return f" {t['relevant']:.0%} | {t['unrelated']:.1%} | {t['riders']:.2f} |"


def as_given(cands: list[set[str]]) -> list[set[str]]:
    """The "rule" of the blocks a recall gave: the facts each block quotes, as they are."""
    return cands


def families(floors: list[float], margins: list[float]) -> list[list[Any]]:
    """The families of rules with vectors swept, each a list: for each margin, every floor
    (:func:`nearer`); for each margin of agreed entries, every floor, margin and keyword score
    (:func:`agreeing`); for each margin of related entries, every floor, margin, keyword score
    and agreed margin (:func:`relating`)."""
    out = [[nearer(t, margin) for t in floors] for margin in margins]
    out += [
        [agreeing(t, m, score, agreed) for m in margins for score in AGREED_SCORES for t in floors]
        for agreed in AGREED_MARGINS
    ]
    out += [
        [
            relating(t, m, score, agreed, related)
            for agreed in RELATED_AGREED
            for m in margins
            for score in RELATED_SCORES
            for t in floors
        ]
        for related in RELATED_MARGINS
    ]
    return out


def table(projects: list[Project], quick: bool) -> tuple[str, dict[str, Any]]:
    """Markdown rows of one mode: each rule on the tuning halves and on each project's checking
    half, then the shipped recall's blocks; and the rules chosen on the tuning halves."""
    m = projects[0][3]
    rules = [fixed(t) for t in (QUICK_THRESHOLDS if quick else THRESHOLDS)]
    if not quick:
        rules += [relative(t, 0.8) for t in (0.35, 0.45)]
    shown = list(rules)
    rt, ut, checks = split(projects)
    if m["similarity"] is not None:
        floors, margins = grid(m["model"], m["similarity"])
        alone = [nearest(t) for t in floors]
        rules += alone
        shown += [r for i, r in enumerate(alone) if i % 3 == 0]
        best_alone = best_rule(alone, rt, ut, checks)
        if best_alone is not None and best_alone[1] not in [r.__name__ for r in shown]:
            shown.append(next(r for r in alone if r.__name__ == best_alone[1]))
        for swept in families(floors, margins):  # each family's best rule on the tuning halves
            rules += swept
            best = best_rule(swept, rt, ut, checks)
            if best is not None:
                shown.append(next(r for r in swept if r.__name__ == best[1]))

    def row(name: str, rule: Any, key: str = "cands") -> str:
        r, u, cs = (rt, ut, checks) if key == "cands" else split(projects, key)
        line = f"| {m['mode']} | {name} |" + cells(evaluate(rule, r, u))
        return line + "".join(cells(evaluate(rule, cr, cu)) for _, cr, cu in cs)

    rows = [row(rule.__name__, rule) for rule in shown]
    chosen: dict[str, Any] = {"best": best_rule(rules, rt, ut, checks)}
    if m.get("whole") is not None:
        sweep = [nearest(t) for t in grid(m["model"], m["similarity"])[0]]
        chosen["whole"] = best_rule(sweep, *split(projects, "whole"))
    name = f"score >= {m['default']:.2f}, results with their neighbours (search's block)"
    rows.append(row(name, as_given, "with_neighbours"))
    name = f"**recall** (score >= {m['default']:.2f}, matching entries only)"
    if m["similarity"] is not None:
        rule = m["rule"]
        name = "**recall** (" + relating(*rule).__name__ + ")"
    rows.append(row(name, as_given, "given"))
    return "\n".join(rows), chosen


def ceiling(data: dict[str, Any], m: dict[str, Any]) -> float:
    """The share of relevant prompts with one of their facts among the candidates at all."""
    hit = sum(
        1
        for r in data["relevant"]
        if set(r["facts"]) & set().union(*(c[1] | c[3] for c in m["cands"][r["prompt"]]))
    )
    return hit / max(len(data["relevant"]), 1)


def checking(figures: list[dict[str, float]], names: list[str]) -> str:
    return "; ".join(
        f"{n} {f['relevant']:.0%} and unrelated {f['unrelated']:.1%}"
        for n, f in zip(names, figures, strict=True)
    )


def project_run(
    name: str, path: Path, tmp: Path, env: dict[str, str], args: argparse.Namespace
) -> list[Project]:
    """One project's memory in a workspace of its own, measured in each mode: keyword, then
    hybrid with each local model on hand."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if args.quick:
        data["relevant"] = data["relevant"][:40]
        data["unrelated"] = data["unrelated"][:40]
    root = tmp / name
    root.mkdir()
    memcli(root, env, "init")
    ids = write_memory(root, data, date.today())
    memcli(root, env, "index")
    from memcli.providers.models import MODELS

    modes: list[tuple[str, Any]] = [("keyword", None)]
    for model in MODELS:  # each local model on hand, for the hybrid rows
        if (args.models_dir / model.folder / "model.onnx").is_file():
            modes.append((f"hybrid, {model.short}", model))
        else:
            log(f"no {model.folder} in {args.models_dir}: no hybrid rows for it")
    out: list[Project] = []
    for label, model in modes:
        if model is not None:
            memcli(root, env, "config", "set", "embedding.model", f"local/{model.name}")
            folder = str(args.models_dir / model.folder)
            memcli(root, env, "config", "set", "embedding.model_path", folder)
            memcli(root, env, "trust")
            memcli(root, env, "index")
        t0 = time.perf_counter()
        m = measure_mode(root, env, data, ids, "keyword" if model is None else "hybrid")
        m["mode"] = label
        m["model"] = model.short if model is not None else None
        m["rule"] = model.recall if model is not None else None
        log(f"{name}, {label}: {time.perf_counter() - t0:.1f} s")
        out.append((name, data, ids, m))
    return out


def run(args: argparse.Namespace) -> str:
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="memcli-recall-bench-") as tmp:
        env = {
            **os.environ,
            "MEMCLI_CONFIG_DIR": f"{tmp}/config",
            "MEMCLI_CACHE_DIR": f"{tmp}/cache",
            "MEMCLI_RUNTIME_DIR": f"{tmp}/run",
        }
        for k in ("MEMCLI_CONFIG_DIR", "MEMCLI_CACHE_DIR", "MEMCLI_RUNTIME_DIR"):
            os.environ[k] = env[k]
        runs = [project_run(n, p, Path(tmp), env, args) for n, p in PROJECTS]
    load_after = os.getloadavg()
    by_mode = list(zip(*runs, strict=True))  # each mode: the projects measured in it
    names = [n for n, _ in PROJECTS]
    sizes = []
    for name, data, _, _ in by_mode[0]:
        facts = sum(len(f["entries"]) for f in data["files"])
        sizes.append(
            f"{name} ({facts} facts in {len(data['files'])} dated files,"
            f" {len(data['relevant'])} relevant and {len(data['unrelated'])} unrelated prompts)"
        )
    out = [
        f"## Recall for an agent's prompt ({time.strftime('%Y-%m-%d')})",
        "",
        f"`benchmarks/recall_bench.py{' --quick' if args.quick else ''}` (run by `make bench`):"
        f" two project memories, each in a workspace of its own: {'; '.join(sizes)}"
        " (`benchmarks/data/recall_project.json`, `recall_logistics.json`, written apart;"
        " the second's prompts share more ordinary words with its facts by chance). Each"
        " relevant prompt names its facts, mostly in other words. Each project's prompts are"
        " split in two halves: prompts 1, 3, 5... of both projects are the tuning half a rule"
        " is chosen on; prompts 2, 4, 6... of each are its checking half. *relevant*: recalled"
        " with one of its facts in the block; *unrelated*: got any recall; *riders*: entries in"
        " the block that are none of the prompt's facts, per recalled relevant prompt."
        f" {platform.machine()}, {os.cpu_count()} CPUs, load"
        f" {' '.join(f'{x:.1f}' for x in load)} before, {' '.join(f'{x:.1f}' for x in load_after)}"
        " after.",
        "",
        "| mode | rule | relevant (tuning) | unrelated (tuning) | riders (tuning) |"
        + "".join(
            f" relevant ({n} checking) | unrelated ({n} checking) | riders ({n} checking) |"
            for n in names
        ),
        "|---|---|" + "---:|" * (3 + 3 * len(names)),
    ]
    notes = []
    for projects in by_mode:
        rows, chosen = table(list(projects), args.quick)
        out.append(rows)
        m = projects[0][3]
        tops = ", ".join(f"{n} {ceiling(d, pm):.0%}" for n, d, _, pm in projects)
        same = sum(pm["hook_same"] for *_, pm in projects)
        sample = sum(pm["hook_sample"] for *_, pm in projects)
        notes.append(
            f"- {m['mode']}: one of the facts among the {m['limit']} candidates at all (no"
            f" threshold): {tops}; hook process = in process for {same} of {sample} prompts."
        )
        best = chosen["best"]
        if best is None:
            notes.append(f"  No rule swept keeps unrelated <= {TARGET_UNRELATED:.0%} (tuning).")
        else:
            notes.append(
                f"  Best rule with unrelated <= {TARGET_UNRELATED:.0%} on the tuning half:"
                f" {best[1]}, relevant {best[0]:.0%} (tuning); checking:"
                f" {checking(best[2], names)}. The targets: relevant >= {TARGET_RELEVANT:.0%},"
                f" unrelated <= {TARGET_UNRELATED:.0%}."
            )
        whole = chosen.get("whole")
        if whole is not None:
            notes.append(
                f"  Similarity alone, every entry of the memory ranked by it (no search), the"
                f" best threshold with unrelated <= {TARGET_UNRELATED:.0%} on the tuning half:"
                f" {whole[1]}, relevant {whole[0]:.0%} (tuning); checking:"
                f" {checking(whole[2], names)}; of the floors swept for the model."
            )
    return "\n".join([*out, "", *notes]) + "\n"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="40 + 40 prompts, two thresholds")
    p.add_argument("--write-results", action="store_true", help="update benchmarks/RESULTS.md")
    p.add_argument(
        "--models-dir", type=Path, default=MODELS_DIR, help="the folder of the local models"
    )
    args = p.parse_args(argv)
    section = run(args)
    print(section)
    if args.write_results:
        from sections import write_section

        write_section("recall", section)
        log("updated the recall section of benchmarks/RESULTS.md")


if __name__ == "__main__":
    main()
