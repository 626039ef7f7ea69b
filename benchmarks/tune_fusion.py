"""Sweep of search settings on LoCoMo-format conversations, in one process: fusion and more.

Usage::

    python benchmarks/tune_fusion.py ../shared/data/locomo-dev.json \\
        --set embedding.model=local/sentence-transformers/all-MiniLM-L6-v2 \\
        --set embedding.model_path=../shared/models/all-MiniLM-L6-v2-onnx

The metric is the one of ``benchmarks/locomo.py`` (snippets in rank order until 2,000
characters; evidence recall per question; means over all questions, categories 1-4 and each
category), on the same workspaces (one Markdown file per session). Unlike ``locomo.py``, which
runs the CLI once per setting, each conversation is indexed once per *index variant* and every
question embedded once; then every *configuration* searches through the library
(``memcli.search.pipeline.run_search``) with that index and those query vectors. A sweep of
twenty fusion settings costs little more than one run.

``--embed-text text|heading|date`` (repeatable) makes one index variant per form of the text
a chunk is embedded from: its text (what memcli embeds), or its text after its heading or its
file's date; each new form is embedded once (about 1,000 chunks: 1-6 minutes on a loaded
2-core machine), then comes from the cache.

A configuration is a space-separated list of ``key=value`` search settings, e.g.
``"search.fusion=rrf search.keyword_weight=0.9 search.vector_weight=0.1"``, or the word
``keyword`` (keyword mode with the base settings); ``--config`` adds one (repeatable), without
any the coarse grid of :data:`COARSE` runs. ``--index-set key=value`` sets an index setting for
an index variant (repeatable; ``--variant`` separates variants, e.g. what goes into the embedded
text). ``--set`` applies to everything (settings go through ``Memory.open(overrides=...)``).

Gains that carry: every figure is also given for a *tuning* part (the first three
conversations of the file, conv-26, -30, -41 in the dev set) and a *checking* part (the last
two, conv-42, -43); a ranking change is kept only when it helps both (``--split N`` moves the
line). ``--embed-text context`` embeds each chunk after its heading and its file's date (the
context a reader sees). The word ``question-words=keep`` in a configuration keeps the
question-framing words (memcli.search.query.QUESTION_WORDS) instead of dropping them, to check
that rule the same way. Each run also reports the cost of its model: index seconds per 1,000
chunks (with an empty ``--cache``), query embedding per question and the process's peak
resident memory.

The embedding cache lives in ``--cache`` (default: a folder in the system temp dir that is kept),
so a second run of the same index variant calls the model for nothing. Every configuration
reports recall per category and per conversation; ``--json`` writes them all.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from locomo import Conversation, Score, load, recall, taken_text, write_workspace  # noqa: E402

from memcli.memory import Memory  # noqa: E402
from memcli.notes.workspace import init_workspace  # noqa: E402
from memcli.search.options import SETTING_OF, SearchOptions  # noqa: E402
from memcli.search.pipeline import run_search  # noqa: E402

FIELD_OF = {key: name for name, key in SETTING_OF.items()}
CATS = (1, 2, 3, 4)

#: The coarse grid: fusion method and weights, candidate depth, and the keyword settings that
#: interact with fusion (context before a match, chunk share, proximity).
W = "search.fusion=weighted search.keyword_weight={} search.vector_weight={}"
BEST = W.format(0.6, 0.4)
COARSE = [
    "keyword",
    *(W.format(k, round(1 - k, 2)) for k in (0.4, 0.5, 0.55, 0.6, 0.65, 0.7)),
    "search.fusion=rrf search.keyword_weight=0.5 search.vector_weight=0.5",
    "search.fusion=rrf search.keyword_weight=0.7 search.vector_weight=0.3",
    f"{BEST} search.candidates=30",
    f"{BEST} search.candidates=100",
    *(f"{BEST} search.hybrid_snippet_before_chars={n}" for n in (300, 400, 500)),
    f"{BEST} search.chunk_weight=0.5",
    f"{BEST} search.proximity_weight=1",
]

#: What ``--embed-text`` can put in the text a chunk is embedded from (memcli embeds the
#: chunk's text alone): SQL over ``chunks c``, ``chunks_fts t`` and ``files f``.
EMBED_TEXT = {
    "text": "t.text",
    "heading": "CASE WHEN c.heading != '' THEN c.heading || char(10) ELSE '' END || t.text",
    "date": "CASE WHEN f.date IS NOT NULL THEN f.date || char(10) ELSE '' END || t.text",
    "context": "CASE WHEN c.heading != '' THEN c.heading || char(10) ELSE '' END"
    " || CASE WHEN f.date IS NOT NULL THEN f.date || char(10) ELSE '' END || t.text",
}


def embed_text(form: str) -> None:
    """Make the index embed ``EMBED_TEXT[form]`` instead of the chunk's text (this process
    only: the benchmark's own replacement of memcli.index.vectors.pending)."""
    from memcli.index import vectors

    expr = EMBED_TEXT[form]

    def pending(store: Any, limit: int, after: int = 0) -> list[tuple[int, str]]:
        rows = store.conn.execute(
            f"SELECT c.id, {expr} FROM chunks c JOIN chunks_fts t ON t.rowid = c.id"
            " JOIN files f ON f.id = c.file_id WHERE c.embedded = 0 AND c.id > ?"
            " ORDER BY c.id LIMIT ?",
            (after, limit),
        )
        return [(int(r[0]), r[1]) for r in rows]

    vectors.pending = pending  # type: ignore[assignment]
    vectors.still_pending = lambda store, todo: [True] * len(todo)  # type: ignore[assignment]


def question_words(keep: bool) -> None:
    """Drop the question-framing words like stop words (memcli's rule) or keep them."""
    from memcli.search import query

    base = query.STOPWORDS | query.QUESTION_WORDS
    query.STOPWORDS = base - query.QUESTION_WORDS if keep else base  # type: ignore[misc]


def parse_config(text: str) -> tuple[str, dict[str, Any]]:
    """(mode, SearchOptions fields) of a configuration string."""
    mode = "hybrid"
    fields: dict[str, Any] = {}
    for item in text.split():
        if item in ("keyword", "hybrid", "vector"):
            mode = item
            continue
        if item.startswith("question-words="):
            continue
        key, _, raw = item.partition("=")
        if key not in FIELD_OF:
            raise SystemExit(f"not a search setting: {key}")
        default = getattr(SearchOptions(), FIELD_OF[key])
        value: Any = raw
        if isinstance(default, bool):
            value = raw.lower() in ("1", "true", "yes", "on")
        elif isinstance(default, int):
            value = int(raw)
        elif isinstance(default, float):
            value = float(raw)
        fields[FIELD_OF[key]] = value
    return mode, fields


def settings_of(pairs: list[str]) -> dict[str, Any]:
    return dict(kv.split("=", 1) for kv in pairs)


class Prepared:
    """One conversation's indexed workspace and its questions' vectors."""

    def __init__(self, conv: Conversation, mem: Memory, vectors: list[list[float]] | None):
        self.conv, self.mem, self.vectors = conv, mem, vectors


def prepare(
    convs: list[Conversation], work: Path, overrides: dict[str, Any], embed: bool
) -> tuple[list[Prepared], dict[str, float]]:
    """Index every conversation in ``work`` and embed its questions."""
    out = []
    t_index = t_embed = 0.0
    chunks = questions = 0
    for conv in convs:
        root = work / conv.sample_id
        if not root.exists():
            init_workspace(root)
            write_workspace(conv, root)
        mem = Memory.open(root, overrides=overrides)
        t0 = time.perf_counter()
        mem.index()
        t_index += time.perf_counter() - t0
        chunks += mem.store.counts()[1]
        questions += len(conv.questions)
        vectors = None
        if embed and mem.embedder is not None:
            t0 = time.perf_counter()
            vectors = mem.embedder.embed([q for q, _, _ in conv.questions], quick=True)
            t_embed += time.perf_counter() - t0
        out.append(Prepared(conv, mem, vectors))
    return out, {
        "index_s": round(t_index, 1),
        "chunks": chunks,
        "index_s_per_1k_chunks": round(1000 * t_index / max(chunks, 1), 1),
        "query_embed_s": round(t_embed, 1),
        "query_embed_ms": round(1000 * t_embed / max(questions, 1), 1),
    }


def evaluate(
    prepared: list[Prepared], mode: str, fields: dict[str, Any], budget: int, split: int = 3
) -> dict:
    """Recall of one configuration over every prepared conversation, and over the tuning
    (the first ``split`` conversations) and checking parts."""
    total = Score()
    halves = (Score(), Score())
    per_conv: dict[str, float] = {}
    for n, p in enumerate(prepared):
        part = halves[0 if n < split else 1]
        opts = p.mem.search_options()._replace(**fields)
        score = Score()
        store = p.mem.store
        for i, (question, evidence, cat) in enumerate(p.conv.questions):
            vec = p.vectors[i] if p.vectors is not None and mode != "keyword" else None
            res = run_search(
                store, question, opts, mode=mode if vec else "keyword", query_vector=vec
            )
            text = taken_text([h.snippet for h in res.hits], budget)
            r = recall(evidence, text)
            score.add(cat, r, len(text))
            total.add(cat, r, len(text))
            part.add(cat, r, len(text))
        per_conv[p.conv.sample_id] = round(score.mean(), 4)
    return {
        "recall": round(total.mean(), 4),
        "recall_cat1_4": round(total.mean(CATS), 4),
        "by_category": {str(c): round(total.mean((c,)), 4) for c in sorted(total.recalls)},
        "by_conversation": per_conv,
        "tuning": round(halves[0].mean(), 4),
        "checking": round(halves[1].mean(), 4),
        "mean_chars": round(sum(total.chars) / max(len(total.chars), 1)),
    }


def peak_rss_mib() -> float:
    """This process's peak resident memory so far (MiB)."""
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("data", help="LoCoMo-format JSON file (e.g. locomo-dev.json)")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a memcli setting for every run (repeatable)",
    )
    p.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="'KEY=VALUE ...'",
        help="one search configuration to evaluate (repeatable; default: COARSE)",
    )
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="'KEY=VALUE ...'",
        help="an index variant: index settings that change the index (repeatable;"
        " default: one variant with --set only)",
    )
    p.add_argument(
        "--embed-text",
        action="append",
        default=[],
        choices=sorted(EMBED_TEXT),
        help="what a chunk is embedded from: one index variant each (default: text)",
    )
    p.add_argument("--only", action="append", default=[], metavar="SAMPLE_ID")
    p.add_argument(
        "--split", type=int, default=3, help="conversations in the tuning part (the rest check)"
    )
    p.add_argument("--budget", type=int, default=2000)
    p.add_argument(
        "--cache",
        default=str(Path(tempfile.gettempdir()) / "memcli-tune-cache"),
        help="embedding cache folder, kept between runs",
    )
    p.add_argument("--json", help="write every result to this file")
    args = p.parse_args(argv)

    os.environ["MEMCLI_CACHE_DIR"] = args.cache
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    for k in [k for k in os.environ if k.startswith("MEMCLI_") and k != "MEMCLI_CACHE_DIR"]:
        del os.environ[k]
    convs = load(Path(args.data))
    if args.only:
        convs = [c for c in convs if c.sample_id in args.only]
    base = settings_of(args.set)
    configs = args.config or COARSE
    variants = args.variant or [""]
    results = []
    with tempfile.TemporaryDirectory(prefix="memcli-tune-") as tmpdir:
        os.environ["MEMCLI_CONFIG_DIR"] = str(Path(tmpdir) / "config")  # no user config
        runs = [(v, form) for form in (args.embed_text or ["text"]) for v in variants]
        for vi, (variant, form) in enumerate(runs):
            embed_text(form)
            overrides = {**base, **settings_of(variant.split())}
            t0 = time.perf_counter()
            prepared, timing = prepare(convs, Path(tmpdir) / f"v{vi}", overrides, embed=True)
            variant = " ".join(x for x in (variant, f"embed-text={form}") if x)
            timing["peak_rss_mib"] = peak_rss_mib()
            print(
                f"# variant {variant}: prepared in {time.perf_counter() - t0:.1f} s {timing}",
                flush=True,
            )
            for config in configs:
                mode, fields = parse_config(config)
                question_words("question-words=keep" in config.split())
                t0 = time.perf_counter()
                res = evaluate(prepared, mode, fields, args.budget, args.split)
                res.update(
                    variant=variant, config=config, seconds=round(time.perf_counter() - t0, 1)
                )
                results.append(res)
                cats = " ".join(f"{c}:{v:.3f}" for c, v in res["by_category"].items())
                convs_s = " ".join(f"{v:.3f}" for v in res["by_conversation"].values())
                print(
                    f"{res['recall']:.4f} {res['recall_cat1_4']:.4f}"
                    f"  tune {res['tuning']:.4f} check {res['checking']:.4f}  {cats}"
                    f"  [{convs_s}]  {config}  ({res['seconds']} s)",
                    flush=True,
                )
            for pr in prepared:
                pr.mem.close()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
