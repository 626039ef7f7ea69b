"""Recall for an agent's prompt over a realistic project memory, through the real hook process:
the right fact comes up, an unrelated prompt gets nothing, and the block quotes the entries
that matched, not their neighbours."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from tests.agent_helpers import MEMCLI, context_of, run_hook

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import recall_bench

DATA = json.loads(recall_bench.DATA.read_text(encoding="utf-8"))
FACTS = {e["id"]: e["text"] for f in DATA["files"] for e in f["entries"]}


@pytest.fixture
def project(workspace: Path) -> Path:
    """The benchmark's project memory: 68 facts in 12 dated files."""
    recall_bench.write_memory(workspace, DATA, date.today())
    return workspace


def recall(root: Path, prompt: str) -> str:
    proc = run_hook(
        [*MEMCLI, "agent", "hook", "prompt"], {"cwd": str(root), "prompt": prompt}, root
    )
    return context_of(proc, "UserPromptSubmit")


def quoted(text: str) -> set[str]:
    """The facts a recalled block quotes."""
    return {fid for fid, fact in FACTS.items() if fact in text}


CASES = [
    ("Is it ok to log the full card number when a payment fails?", "card-log"),
    ("Can I log the user's email address when the signup fails?", "pii-logs"),
    ("Tag the docker image as latest and push it", "image-registry"),
    ("Which country do we use to compute VAT on an invoice?", "vat"),
    ("What port does the cache listen on?", "valkey"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("prompt", "fact"), CASES)
def test_a_prompt_recalls_its_fact_alone_through_the_hook(
    project: Path, prompt: str, fact: str
) -> None:
    text = recall(project, prompt)
    assert text.startswith("<<<BEGIN MEMORY ") and text.rstrip().endswith(">>>")
    assert FACTS[fact] in text
    # each quoted section is one entry that matched: its neighbours in the file are not there
    sections = re.findall(r"^`memory/[\d-]+\.md:(\d+)-(\d+)`", text, re.M)
    assert sections and all(a == b for a, b in sections), text
    found = quoted(text)
    assert fact in found
    assert len(found) == len(sections), text  # no entry rides along with another


@pytest.mark.slow
def test_the_recalled_block_holds_no_neighbour_entry(project: Path) -> None:
    """The card-number fact sits between two other entries of its day: neither comes with it."""
    day = next(f for f in DATA["files"] if any(e["id"] == "card-log" for e in f["entries"]))
    ids = [e["id"] for e in day["entries"]]
    i = ids.index("card-log")
    neighbours = [ids[j] for j in (i - 1, i + 1) if 0 <= j < len(ids)]
    assert neighbours
    text = recall(project, "Is it ok to log the full card number when a payment fails?")
    assert FACTS["card-log"] in text
    for other in neighbours:
        assert FACTS[other] not in text, other


@pytest.mark.parametrize(
    "prompt",
    [
        "Refactor this function into smaller pieces",
        "Center this div horizontally and vertically",
        "Fix the typo in the footer template",
        "/compact",
        "ok",
    ],
)
def test_an_unrelated_prompt_gets_nothing(project: Path, prompt: str) -> None:
    assert recall(project, prompt) == ""


@pytest.mark.slow
def test_the_engine_recalls_the_same_entries(project: Path) -> None:
    """Through a running engine the hook prints the same block as in process."""
    prompts = [p for p, _ in CASES[:2]]
    alone = [recall(project, p) for p in prompts]
    env = {**os.environ}
    start = subprocess.run(
        [*MEMCLI, "-w", str(project), "serve", "--detach"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert start.returncode == 0, start.stderr
    try:
        through = [recall(project, p) for p in prompts]
    finally:
        subprocess.run([*MEMCLI, "-w", str(project), "serve", "--stop"], timeout=60, env=env)
    assert through == alone
    assert all(FACTS[f] in t for (_, f), t in zip(CASES, through, strict=False))


# -- with the local model: the entry nearest the prompt -------------------------------------
MODEL_DIR = os.environ.get("MEMCLI_TEST_MODEL_DIR", "")  # read at import: see isolated_env
needs_model = pytest.mark.skipif(
    not MODEL_DIR or not Path(MODEL_DIR).is_dir(), reason="MEMCLI_TEST_MODEL_DIR not set"
)


@pytest.fixture
def hybrid(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The benchmark's project memory, indexed with the local model (the user's settings)."""
    monkeypatch.setenv("MEMCLI_EMBEDDING_MODEL", "local/sentence-transformers/all-MiniLM-L6-v2")
    monkeypatch.setenv("MEMCLI_EMBEDDING_MODEL_PATH", MODEL_DIR)
    run = subprocess.run(
        [*MEMCLI, "-w", str(project), "index"], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    return project


NEAR_CASES = [  # in other words: no fused score reaches agent.recall_min_score
    ("Do we need to write a postmortem for yesterday's SEV2?", "postmortem"),
    ("Someone asked for a refund of 800 euros, can support just approve it?", "refund-approval"),
    ("Google login fails on staging with redirect_uri_mismatch", "oauth-google"),
    ("The orders page does hundreds of SQL queries, how do I fix it?", "n-plus-one"),
]


@pytest.mark.slow
@needs_model
@pytest.mark.parametrize(("prompt", "fact"), NEAR_CASES)
def test_with_the_local_model_a_prompt_recalls_the_entry_it_means(
    hybrid: Path, prompt: str, fact: str
) -> None:
    text = recall(hybrid, prompt)
    assert FACTS[fact] in text, text
    sections = re.findall(r"^`memory/[\d-]+\.md:(\d+)-(\d+)`", text, re.M)
    assert sections and all(a == b for a, b in sections), text  # one entry each
    assert len(quoted(text)) == len(sections), text


@pytest.mark.slow
@needs_model
@pytest.mark.parametrize(
    "prompt",
    [
        "Refactor this function into smaller pieces",
        "Center this div horizontally and vertically",
        "Fix the typo in the footer template",
        "Rename this variable to something clearer",
    ],
)
def test_with_the_local_model_an_unrelated_prompt_gets_nothing(hybrid: Path, prompt: str) -> None:
    assert recall(hybrid, prompt) == ""


@pytest.mark.slow
@needs_model
@pytest.mark.parametrize(
    ("prompt", "fact"),
    [  # each entry's similarity under the threshold of similarity alone (0.375)
        ("what do I need to do to run the API on my computer", "local-setup"),
        ("Which memory store backs the rate limiter?", "valkey"),
    ],
)
def test_with_the_local_model_a_prompt_nearer_its_entry_than_everyday_requests_recalls_it(
    hybrid: Path, prompt: str, fact: str
) -> None:
    assert FACTS[fact] in recall(hybrid, prompt)


@pytest.mark.slow
@needs_model
def test_with_the_local_model_words_and_vectors_agreeing_recall_an_entry(hybrid: Path) -> None:
    """The Valkey decision is not the entry nearest the prompt of any chunk the search finds
    (the cache-key convention is), but the best keyword result quotes it, and it is near
    enough the prompt: both come."""
    text = recall(hybrid, "which cache do we run, and on what port?")
    assert FACTS["valkey"] in text and FACTS["cache-keys"] in text, text


@pytest.mark.slow
@needs_model
@pytest.mark.parametrize(
    "prompt",
    [  # each nearer an entry than the threshold of similarity alone asks (0.375)
        "show me the git log since Monday",  # the fact on how long logs are kept
        "print the git log for this week",
    ],
)
def test_with_the_local_model_a_prompt_nearer_everyday_requests_gets_nothing(
    hybrid: Path, prompt: str
) -> None:
    assert recall(hybrid, prompt) == ""


@pytest.mark.slow
@needs_model
def test_with_the_local_model_a_recalled_entry_shows_no_secret(hybrid: Path) -> None:
    """The entry recall quotes is redacted as a search's snippet is, even in a file written
    by hand (memcli add redacts on the way in)."""
    token = "ghp_" + "Zq81Lm0Xc4Vb7Nn2Aa9Ss3Dd6Ff1Gg5Hh8Jj"  # built here: no scanner alarm
    (hybrid / "memory" / "deploy-bot.md").write_text(
        f"# Deploy bot\n\n- The deploy bot pushes release tags to GitHub with the token {token}\n"
    )
    text = recall(hybrid, "Which token does the deploy bot use to push release tags to GitHub?")
    assert "The deploy bot pushes release tags" in text, text
    assert token not in text and "[REDACTED:" in text
