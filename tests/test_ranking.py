"""Ranking, filters, decay, threshold, MMR, explain, snippets and the context format (CLI)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import Cli, Run
from tests.fake_embedder import FakeProvider

ROOT = Path(__file__).resolve().parent.parent


def write(ws: Path, rel: str, text: str) -> Path:
    path = ws / "memory" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def search(cli: Cli, *args: str) -> dict:
    r = cli("search", "--json", *args)
    assert r.exit_code in (0, 1), r.stderr
    return r.json()


def day(offset: int) -> str:
    return (date.today() - timedelta(days=offset)).isoformat()


# -- scores ------------------------------------------------------------------------------------
def test_tiny_workspace_scores_are_meaningful(cli: Cli, workspace: Path) -> None:
    write(workspace, "notes.md", "- The cache runs on Valkey.\n")
    env = search(cli, "valkey cache")
    assert len(env["results"]) == 1
    hit = env["results"][0]
    # every query word matched once: 0.75 by construction, far from the 0.0 of a raw FTS5 idf
    assert 0.7 <= hit["score"] <= 1.0
    assert hit["scores"]["keyword"] == hit["score"]
    half = search(cli, "valkey zeppelin")["results"][0]
    assert 0.0 < half["score"] < hit["score"]


def test_scores_sorted_and_in_unit_range(cli: Cli, workspace: Path) -> None:
    write(
        workspace,
        "2026-01-02.md",
        "- Postgres runs on port 5433.\n- Redis was replaced.\n- The port of Valkey is 6380.\n",
    )
    write(workspace, "ops.md", "- Postgres backups run nightly.\n\n- Unrelated gardening note.\n")
    results = search(cli, "postgres port")["results"]
    assert results
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert "5433" in results[0]["snippet"]


# -- snippets ----------------------------------------------------------------------------------
def test_snippet_is_the_matching_item_with_a_little_context(cli: Cli, workspace: Path) -> None:
    items = [f"- fact number {i} about topic{i}" for i in range(1, 31)]
    items[14] = "- the deploy key rotates every ninety days"
    write(workspace, "facts.md", "\n".join(items) + "\n")
    hit = search(cli, "deploy key rotation", "-n", "1")["results"][0]
    lines = hit["snippet"].split("\n")
    assert "- the deploy key rotates every ninety days" in lines
    assert len(lines) <= 3  # the item and at most one neighbour each side
    assert hit["end_line"] - hit["start_line"] + 1 == len(lines)
    got = cli("get", f"{hit['path']}:{hit['start_line']}:{len(lines)}", "--json").json()
    assert got["text"] == hit["snippet"]


def test_multiline_item_is_never_cut(cli: Cli, workspace: Path) -> None:
    text = (
        "- first unrelated entry\n"
        "- 10:00 [decision] migrate the billing service\n"
        "  to the new queue because the old broker drops messages\n"
        "  under load; rollback plan is documented\n"
        "- last unrelated entry\n"
    )
    write(workspace, "2026-02-03.md", text)
    hit = search(cli, "broker drops messages", "-n", "1")["results"][0]
    assert "migrate the billing service" in hit["snippet"]
    assert "rollback plan is documented" in hit["snippet"]


def test_results_never_repeat_a_line(cli: Cli, workspace: Path) -> None:
    write(workspace, "log.md", "".join(f"- kafka consumer note {i}\n" for i in range(12)))
    results = search(cli, "kafka consumer", "-n", "10")["results"]
    seen: set[tuple[str, int]] = set()
    for r in results:
        for n in range(r["start_line"], r["end_line"] + 1):
            assert (r["path"], n) not in seen
            seen.add((r["path"], n))


# -- filters -----------------------------------------------------------------------------------
@pytest.fixture
def filtered(cli: Cli, workspace: Path) -> Cli:
    write(workspace, f"{day(40)}.md", "- 09:00 [decision] rollout plan for alpha #infra\n")
    write(
        workspace,
        f"{day(5)}.md",
        "- 09:00 [incident] rollout of alpha failed #oncall\n"
        "- 09:05 [decision] rollout of alpha paused #infra\n",
    )
    write(workspace, "coder/notes.md", "- rollout checklist for alpha lives in the wiki\n")
    write(workspace, "MEMORY.md", "- alpha rollout owner is Dana\n")
    return cli


def paths(env: dict) -> list[str]:
    return [r["path"] for r in env["results"]]


def test_filter_source(filtered: Cli) -> None:
    env = search(filtered, "alpha rollout", "--source", "coder")
    assert paths(env) == ["memory/coder/notes.md"]
    assert all(r["source"] == "coder" for r in env["results"])
    assert "memory/coder/notes.md" not in paths(
        search(filtered, "alpha rollout", "--source", "memory")
    )


def test_filter_type_is_per_entry(filtered: Cli) -> None:
    env = search(filtered, "alpha rollout", "--type", "incident", "-n", "10")
    assert env["results"]
    for r in env["results"]:
        assert "[incident]" in r["snippet"]
    # the decision in the same chunk is not a result of its own
    assert all("paused" not in r["snippet"] or "[incident]" in r["snippet"] for r in env["results"])
    decisions = search(filtered, "alpha rollout", "--type", "decision", "-n", "10")
    assert len(decisions["results"]) == 2


def test_filter_tag(filtered: Cli) -> None:
    env = search(filtered, "alpha rollout", "--tag", "oncall")
    assert len(env["results"]) == 1
    assert "#oncall" in env["results"][0]["snippet"]
    infra = search(filtered, "alpha rollout", "--tag", "#infra", "-n", "10")
    assert {r["date"] for r in infra["results"]} == {day(40), day(5)}


def test_filter_since_until(filtered: Cli) -> None:
    recent = search(filtered, "alpha rollout", "--since", day(10), "-n", "10")
    assert recent["results"] and {r["date"] for r in recent["results"]} == {day(5)}
    old = search(filtered, "alpha rollout", "--until", day(30), "-n", "10")
    assert {r["date"] for r in old["results"]} == {day(40)}
    r = filtered("search", "alpha", "--since", "last tuesday")  # not a form of the grammar
    assert r.exit_code == 2


def test_filter_path_glob(filtered: Cli) -> None:
    env = search(filtered, "alpha rollout", "--path", "memory/MEMORY.md")
    assert paths(env) == ["memory/MEMORY.md"]
    env = search(filtered, "alpha rollout", "--path", "memory/coder/*", "-n", "10")
    assert paths(env) == ["memory/coder/notes.md"]


# -- decay and threshold -----------------------------------------------------------------------
@pytest.fixture
def dated(cli: Cli, workspace: Path) -> Cli:
    (workspace / "memcli.toml").write_text("[decay]\nhalf_life_days = 30\n")
    write(workspace, f"{day(30)}.md", "- the staging database is called orca\n")
    write(workspace, "MEMORY.md", "- the production database is called orca too\n")
    write(workspace, "glossary.md", "- orca: the database naming scheme\n")
    write(workspace, "team/x.md", f"---\ndate: {day(60)}\n---\n- orca database owner is Sam\n")
    return cli


def test_decay_halves_at_half_life_and_exempts_evergreen(dated: Cli) -> None:
    plain = {r["path"]: r for r in search(dated, "orca database", "-n", "10")["results"]}
    decayed = {
        r["path"]: r for r in search(dated, "orca database", "--decay", "-n", "10")["results"]
    }
    assert set(plain) == set(decayed) and len(plain) == 4
    d30 = f"memory/{day(30)}.md"
    assert decayed[d30]["scores"]["decay"] == pytest.approx(0.5, abs=1e-3)
    assert decayed[d30]["score"] == pytest.approx(plain[d30]["score"] * 0.5, abs=2e-4)
    fm = decayed["memory/team/x.md"]
    assert fm["scores"]["decay"] == pytest.approx(0.25, abs=1e-3)  # front matter date, 60 days
    for evergreen in ("memory/MEMORY.md", "memory/glossary.md"):
        assert decayed[evergreen]["evergreen"] is True
        assert decayed[evergreen]["scores"]["decay"] == 1.0
        assert decayed[evergreen]["score"] == plain[evergreen]["score"]
    assert "decay" not in plain[d30]["scores"]


@pytest.mark.slow
def test_min_score_applies_to_final_scores(dated: Cli) -> None:
    d30 = f"memory/{day(30)}.md"
    plain = {r["path"]: r["score"] for r in search(dated, "orca database", "-n", "10")["results"]}
    cut = plain[d30] * 0.75  # the undecayed score passes, the decayed one (x0.5) does not
    kept = paths(search(dated, "orca database", "--min-score", f"{cut:.4f}", "-n", "10"))
    assert d30 in kept
    decayed = search(dated, "orca database", "--decay", "--min-score", f"{cut:.4f}", "-n", "10")
    assert d30 not in paths(decayed)
    assert all(r["score"] >= cut - 1e-4 for r in decayed["results"])
    r = dated("search", "orca", "--min-score", "1.5")
    assert r.exit_code == 2


def test_default_threshold_keeps_keyword_hits(cli: Cli, workspace: Path) -> None:
    write(workspace, "a.md", "- We chose Terraform for infrastructure.\n")
    write(workspace, "b.md", "- Lunch on Friday is pizza.\n")
    # a natural question where only one word matches still finds its fact
    env = search(cli, "what tool did we pick for terraform things in the end?")
    assert paths(env) == ["memory/a.md"]
    assert env["results"][0]["score"] > 0.0


# -- MMR ---------------------------------------------------------------------------------------
@pytest.mark.slow
def test_mmr_lets_a_different_fact_past_near_duplicates(cli: Cli, workspace: Path) -> None:
    dup = "- the release train leaves every tuesday at noon from the main branch"
    for i in range(4):
        write(workspace, f"2026-03-0{i + 1}.md", dup + ("\n" if i % 2 else " again\n"))
    write(workspace, "release.md", "- release notes are written by the train conductor\n")
    top = paths(search(cli, "release train tuesday", "-n", "3"))
    assert "memory/release.md" not in top
    diverse = search(cli, "release train tuesday", "-n", "3", "--mmr", "--mmr-lambda", "0.5")
    assert "memory/release.md" in paths(diverse)
    assert all("mmr" in r["scores"] for r in diverse["results"])
    same = paths(search(cli, "release train tuesday", "-n", "3", "--mmr-lambda", "1.0"))
    assert same == top
    assert cli("search", "x", "--mmr-lambda", "2").exit_code == 2


# -- explain -----------------------------------------------------------------------------------
@pytest.mark.slow
def test_explain_fields(dated: Cli) -> None:
    env = search(dated, "orca staging database", "--explain", "--decay")
    assert env["results"]
    for r in env["results"]:
        ex = r["explain"]
        assert ex["final"] == r["score"]
        assert set(ex["terms"]) == {"matched", "missing"}
        assert set(ex["terms"]["matched"]) | set(ex["terms"]["missing"]) == {
            "orca",
            "staging",
            "database",
        }
        assert ex["ideal"] == pytest.approx(sum(ex["idf"].values()), abs=1e-3)
        assert ex["scale"] == pytest.approx(ex["ideal"] * 2, abs=1e-3)  # chunk_weight 1
        assert {"keyword", "bm25", "neighbours", "chunk", "decay"} <= set(r["scores"])
        assert any(s.startswith("decay") for s in ex["steps"])
        assert ex["passage"][0] >= r["start_line"] and ex["passage"][1] <= r["end_line"]
        k = r["scores"]["keyword"]
        parts = ("bm25", "neighbours", "proximity", "chunk")
        total = sum(r["scores"].get(p, 0.0) for p in parts)
        assert k == pytest.approx(1 - 2 ** (-2 * total / ex["scale"]), abs=2e-3)
        assert r["score"] == pytest.approx(k * r["scores"]["decay"], abs=2e-4)
    assert env["results"][0]["explain"]["terms"]["missing"] == []
    plain = search(dated, "orca")
    assert "explain" not in plain["results"][0]
    text = dated("search", "orca staging", "--explain")
    assert text.exit_code == 0 and "matched:" in text.stdout and "final" in text.stdout


# -- context format ----------------------------------------------------------------------------
@pytest.fixture
def many(cli: Cli, workspace: Path) -> Cli:
    for d in range(1, 7):
        body = "".join(
            f"- note {d}.{i}: the payment service {'retries' if i % 3 == 0 else 'logs'} "
            f"webhooks with backoff number {i} and a long tail of explanation text\n"
            for i in range(8)
        )
        write(workspace, f"2026-04-0{d}.md", f"# Day {d}\n\n{body}")
    return cli


@pytest.mark.slow
def test_context_block_never_exceeds_budget(many: Cli) -> None:
    ranked = search(many, "payment webhooks retries", "-n", "8")["results"]
    cites = [f"{r['path']}:{r['start_line']}-{r['end_line']}" for r in ranked]

    def context(budget: int) -> Run:
        args = ["payment webhooks retries", "-n", "8", "--format", "context"]
        return many("search", *args, "--max-tokens", str(budget))

    for budget in [1, 5, 20, 40, 60, 90, 120, 150, 200, 260, 333, 500, 800, 2000]:
        r = context(budget)
        assert math.ceil(len(r.stdout) / 4) <= budget, (budget, len(r.stdout))
        if r.exit_code == 0:
            first, second = r.stdout.splitlines()[:2]
            assert first.startswith("<<<BEGIN MEMORY ") and first.endswith(">>>")
            assert second == '## Memory for "payment webhooks retries"'
            assert r.stdout.endswith(first.replace("BEGIN", "END") + "\n")
            shown = [ln.strip("`") for ln in r.stdout.splitlines() if ln.startswith("`memory/")]
            assert shown, budget
            # rank order kept; a citation may be narrowed to the matching passage
            order = [
                next(
                    i
                    for i, c in enumerate(cites)
                    if c.split(":")[0] == s.split(":")[0] and _inside(s, c)
                )
                for s in shown
            ]
            assert order == sorted(order)
        else:
            assert r.exit_code == 1 and r.stdout == ""
    big = context(100000)
    shown = [ln.strip("`") for ln in big.stdout.splitlines() if ln.startswith("`memory/")]
    assert shown == cites


def _inside(narrow: str, wide: str) -> bool:
    a, b = (int(x) for x in narrow.rsplit(":", 1)[1].split("-"))
    c, d = (int(x) for x in wide.rsplit(":", 1)[1].split("-"))
    return c <= a and b <= d


@pytest.mark.slow
def test_context_format_usage_errors(many: Cli) -> None:
    assert many("search", "x", "--format", "context", "--json").exit_code == 2
    assert many("search", "x", "--max-tokens", "50").exit_code == 2
    assert many("search", "x", "--format", "yaml").exit_code == 2
    assert many("search", "--batch", "--format", "context", input="x\n").exit_code == 2
    r = many("search", "payment", "--format", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["results"]


# -- the benchmark scripts ---------------------------------------------------------------------
_TURNS = [
    ("Ann", "D1:1", "I adopted a grey cat named Pixel last week."),
    ("Bob", "D1:2", "That is lovely! How old is Pixel?"),
    ("Ann", "D1:3", "She is two years old and loves climbing shelves."),
]
TINY = [
    {
        "sample_id": "tiny",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": s, "dia_id": i, "text": t} for s, i, t in _TURNS],
        },
        "qa": [
            {
                "question": "What is the name of Ann's cat?",
                "answer": "Pixel",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "How old is the cat?",
                "answer": "two",
                "evidence": ["D1:3; D1:1"],
                "category": 1,
            },
            {"question": "Nothing", "answer": "x", "evidence": ["D"], "category": 5},
        ],
    }
]


@pytest.mark.slow
def test_locomo_benchmark_runs_on_a_tiny_conversation(tmp_path: Path) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "locomo.py"), str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["questions"] == 2  # the question without a parseable evidence id is skipped
    assert res["memcli"]["recall"] == 1.0
    assert set(res["baseline_bm25_budget"]) >= {"recall", "recall_cat1_4", "by_category"}


@pytest.mark.slow
def test_tune_fusion_sweeps_configurations_in_one_process(tmp_path: Path) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "tune_fusion.py"),
            str(path),
            "--config",
            "keyword",
            "--config",
            "keyword search.limit=1 search.snippet_lines=0",
            "--cache",
            str(tmp_path / "cache"),
            "--json",
            str(tmp_path / "out.json"),
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert out.returncode == 0, out.stderr
    res = json.loads((tmp_path / "out.json").read_text())
    assert [r["config"] for r in res] == [
        "keyword",
        "keyword search.limit=1 search.snippet_lines=0",
    ]
    assert res[0]["recall"] == 1.0 and res[0]["by_conversation"] == {"tiny": 1.0}
    assert set(res[1]["by_category"]) == {"1", "4"}


# -- hybrid ------------------------------------------------------------------------------------
@pytest.mark.slow
def test_explain_and_passages_in_hybrid_mode(
    cli: Cli, workspace: Path, fake_vectors: FakeProvider
) -> None:
    lines = [f"- unrelated item {i} about gardening and tomatoes" for i in range(12)]
    lines[6] = "- the message queue is RabbitMQ with quorum queues"
    write(workspace, "infra.md", "\n".join(lines) + "\n")
    assert cli("index").exit_code == 0
    res = search(cli, "which message queue do we run", "--explain", "-n", "3")
    assert res["mode"] == "hybrid"
    top = res["results"][0]
    assert "RabbitMQ" in top["snippet"] and len(top["snippet"].split("\n")) <= 3
    assert {"keyword", "vector", "fusion"} <= set(top["scores"])
    assert top["score"] == top["scores"]["fusion"]
    assert any(s.startswith("fusion") for s in top["explain"]["steps"])
    assert any(s.startswith("vector") for s in top["explain"]["steps"])
    div = search(cli, "which message queue do we run", "--mmr", "-n", "3")
    assert all("mmr" in r["scores"] for r in div["results"])
    assert "which message queue do we run" in fake_vectors.inputs  # vectors made in-process


@pytest.mark.slow
def test_large_file_is_read_in_regions_with_the_same_snippets(cli: Cli, workspace: Path) -> None:
    from memcli.search import snippets

    body = [
        f"- routine entry {i} with filler words lorem ipsum dolor sit amet" for i in range(6000)
    ]
    body[3000] = (
        "- 10:00 [decision] the ledger service moves to eu-west\n  after the audit in March"
    )
    text = "# Log\n\n" + "\n".join(body) + "\n"
    assert len(text) > snippets.WHOLE_FILE_BYTES
    write(workspace, "big.md", text)
    hit = search(cli, "ledger audit", "-n", "1")["results"][0]
    assert "the ledger service moves to eu-west\n  after the audit in March" in hit["snippet"]
    assert len(hit["snippet"].split("\n")) == 4  # the two-line item and one entry either side
    got = cli("get", f"{hit['path']}:{hit['start_line']}:4", "--json").json()
    assert got["text"] == hit["snippet"]


def test_mmr_from_settings(cli: Cli, workspace: Path) -> None:
    write(workspace, "a.md", "- the release train leaves on tuesday\n")
    (workspace / "memcli.toml").write_text("[search]\nmmr = true\nmmr_lambda = 0.4\n")
    env = search(cli, "release train", "--explain")
    assert "mmr" in env["results"][0]["scores"]
    assert env["results"][0]["scores"]["mmr"] == pytest.approx(
        0.4 * env["results"][0]["score"], abs=1e-3
    )
    off = search(cli, "release train", "--no-mmr")
    assert "mmr" not in off["results"][0]["scores"]


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.tuples(st.integers(1, 6), st.integers(0, 120)), min_size=0, max_size=8),
    budget=st.integers(0, 400),
)
def test_context_render_stays_within_any_budget(sizes: list[tuple[int, int]], budget: int) -> None:
    from memcli.search.context import estimate_tokens, render
    from memcli.search.results import Hit

    hits = []
    for n, (lines, width) in enumerate(sizes):
        snippet = "\n".join(f"- item {n}.{i} " + "x" * width for i in range(lines))
        h = Hit(n, f"memory/f{n}.md", 1, lines, "", snippet, "memory", None, True)
        h.start_line, h.end_line, h.snippet = 1, lines, snippet
        hits.append(h)
    block = render("some query", hits, budget)
    assert estimate_tokens(block.text) <= budget
    assert block.included + block.left_out == len(hits)
    assert block.text == "" or block.text.endswith("\n")
    for h, cite in zip(
        [h for h in hits if f"`{h.path}:" in block.text], block.citations, strict=True
    ):
        assert cite.startswith(h.path + ":")


def test_whole_file_cache_is_bounded_by_size() -> None:
    """search --batch keeps files it read for later queries, but never more text than its
    budget, however large the files; the most recently used stay."""
    from memcli.search.snippets import _WholeFiles

    cache = _WholeFiles(max_bytes=150_000)
    big = ["x" * 1000] * 30  # about 34 kB with the per-line estimate: four fit
    for i in range(10):
        cache.put(("idx", f"f{i}.md", ""), f"sha{i}", list(big))
        assert cache.bytes <= 150_000
    assert len(cache._items) == 4
    assert cache.lines(("idx", "f9.md", ""), "sha9") is not None
    assert cache.lines(("idx", "f0.md", ""), "sha0") is None  # evicted, least recently used
    assert cache.lines(("idx", "f9.md", ""), "other") is None  # a changed file is not served
    assert cache.lines(("idx", "f6.md", ""), "sha6") is not None  # used: now the most recent
    cache.put(("idx", "f10.md", ""), "sha10", list(big))
    assert cache.lines(("idx", "f6.md", ""), "sha6") is not None
    assert cache.lines(("idx", "f7.md", ""), "sha7") is None  # the least recent went instead
    one = ["y" * 500_000]  # a single file over the budget is still kept, alone
    cache.put(("idx", "huge.md", ""), "h", one)
    assert cache.lines(("idx", "huge.md", ""), "h") is one and len(cache._items) == 1


def test_a_passage_gains_a_share_of_its_chunk(cli: Cli, workspace: Path) -> None:
    write(workspace, "a.md", "- alpha first\n- some filler words here\n- gamma last\n")
    write(workspace, "b.md", "- alpha first\n- some filler words here\n- beta last\n")
    env = search(cli, "alpha beta", "--explain")
    alpha = {r["path"]: r for r in env["results"] if r["snippet"].startswith("- alpha")}
    assert alpha["memory/b.md"]["scores"]["chunk"] > alpha["memory/a.md"]["scores"]["chunk"]
    assert alpha["memory/b.md"]["score"] > alpha["memory/a.md"]["score"]
    assert any("chunk 1 x" in s for s in alpha["memory/b.md"]["explain"]["steps"])
    assert cli("config", "set", "search.chunk_weight", "0").exit_code == 0
    off = search(cli, "alpha beta")["results"]
    assert all("chunk" not in r["scores"] for r in off)


def test_context_before_a_match_gets_less_room(cli: Cli, workspace: Path) -> None:
    before = "- " + "a long preamble about nothing in particular " * 11
    write(workspace, "k.md", f"{before}\n- the deploy key rotates every ninety days\n- ok\n")
    hit = search(cli, "deploy key rotation", "-n", "1")["results"][0]
    assert hit["snippet"].startswith("- the deploy key") and hit["snippet"].endswith("- ok")
    assert cli("config", "set", "search.snippet_before_chars", "600").exit_code == 0
    wide = search(cli, "deploy key rotation", "-n", "1")["results"][0]
    assert wide["snippet"].startswith("- a long preamble")


def test_hybrid_search_gives_context_before_a_match_less_room(
    cli: Cli, workspace: Path, fake_vectors: FakeProvider
) -> None:
    before = "- " + "a long preamble about nothing in particular " * 8  # 354 characters
    write(workspace, "k.md", f"{before}\n- the deploy key rotates every ninety days\n- ok\n")
    assert cli("index").exit_code == 0
    hybrid = search(cli, "deploy key rotation", "-n", "1")
    assert hybrid["mode"] == "hybrid"
    assert hybrid["results"][0]["snippet"].startswith("- the deploy key")
    keyword = search(cli, "deploy key rotation", "-n", "1", "--strategy", "keyword")
    assert keyword["mode"] == "keyword"
    assert keyword["results"][0]["snippet"].startswith("- a long preamble")


def test_the_chunk_count_comes_from_fts5_and_matches_the_table(cli: Cli, workspace: Path) -> None:
    from memcli.memory import Memory
    from memcli.search.analyzer import chunk_count

    def counts() -> tuple[int, int]:
        with Memory.open(workspace) as mem:
            conn = mem.store.conn
            statements: list[str] = []
            conn.set_trace_callback(statements.append)
            n = chunk_count(conn)
            conn.set_trace_callback(None)
            if n:  # read from the FTS5 record, not counted row by row
                assert not any("count(*)" in s for s in statements), statements
                assert any("chunks_fts_data" in s for s in statements), statements
            return n, conn.execute("SELECT count(*) FROM chunks").fetchone()[0]

    assert counts() == (0, 0)  # an empty index: no averages record yet
    for i in range(40):
        write(
            workspace,
            f"topic-{i}.md",
            f"# Topic {i}\n\n"
            + "".join(f"- Fact {i}.{j} about item{j}.\n\n" for j in range(i % 7 + 1)),
        )
    assert cli("index").exit_code == 0
    first = counts()
    assert first[0] == first[1] > 40
    for i in range(0, 40, 3):
        (workspace / "memory" / f"topic-{i}.md").unlink()
    write(workspace, "topic-1.md", "# Topic 1\n\n- Only this now.\n")
    assert cli("index").exit_code == 0
    second = counts()
    assert second[0] == second[1] < first[1]
