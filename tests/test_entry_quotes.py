"""A chunk found by vectors is quoted by its entry nearest the question, not by its first
lines: in search (table, JSON, context block) and in the MCP search tool, with the real
multilingual and English models.

Six facts added on one day share one chunk of the day file; a question in English about the
fourth fact, written in Japanese, used to be answered with the first two (the Valkey and
backup facts)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli

MODEL_DIR = os.environ.get("MEMCLI_TEST_MODEL_DIR", "")
E5_DIR = Path(MODEL_DIR).parent / "multilingual-e5-small-q4-onnx" if MODEL_DIR else None
needs_models = pytest.mark.skipif(
    E5_DIR is None or not (E5_DIR / "model.onnx").is_file(), reason="no local models"
)
pytestmark = [needs_models, pytest.mark.slow]

DAY = [
    "We use Valkey instead of Redis for the session cache.",
    "数据库备份每天凌晨三点运行。",
    "本番環境へのデプロイは毎週木曜日に行います。",
    "결제 서비스는 환불을 30일 이내에만 허용합니다.",
    "前端使用 React 18 和 TypeScript。",
    "ログは90日間保存されます。",
]
ACROSS = [
    ("which weekday do we deploy to production?", DAY[2]),
    ("what is the refund window of the payment service?", DAY[3]),
    ("which frontend framework and language do we use?", DAY[4]),
    ("how long are the logs kept?", DAY[5]),
]

ENGLISH = [
    "Use Valkey instead of Redis for the session cache.",
    "The nightly export job writes CSV files to the reports bucket.",
    "Alice owns the billing service and its on-call rota.",
    "Release notes are drafted in the docs/releases folder.",
    "The staging database is reset every Sunday night.",
    "Our office dog Biscuit visits on Fridays.",
]
PARAPHRASE = [("which puppy comes to the workplace?", ENGLISH[5])]


def _day_file(cli: Cli, workspace: Path, model: str, folder: Path, facts: list[str]) -> None:
    assert cli("config", "set", "embedding.model", model).exit_code == 0
    assert cli("config", "set", "embedding.model_path", str(folder)).exit_code == 0
    for fact in facts:
        assert cli("add", fact).exit_code == 0
    assert cli("index").exit_code == 0
    files = [p for p in (workspace / "memory").glob("2*.md")]
    assert len(files) == 1  # one day file: the facts share its chunk


@pytest.fixture
def across(cli: Cli, workspace: Path) -> Cli:
    assert E5_DIR is not None
    _day_file(cli, workspace, "local/intfloat/multilingual-e5-small", E5_DIR, DAY)
    return cli


@pytest.fixture
def paraphrase(cli: Cli, workspace: Path) -> Cli:
    _day_file(
        cli, workspace, "local/sentence-transformers/all-MiniLM-L6-v2", Path(MODEL_DIR), ENGLISH
    )
    return cli


def _matched(cli: Cli, question: str) -> list[str]:
    """The lines each of the first three results points at (``match_lines``): the issue's
    measure is the fact quoted in the top three."""
    r = cli("search", "--json", "-n", "3", question)
    assert r.exit_code == 0, r.stderr
    out = r.json()
    assert out["mode"] == "hybrid"
    lines: list[str] = []
    for hit in out["results"]:
        first = hit["start_line"]
        rows = hit["snippet"].split("\n")
        lines += [rows[n - first] for n in hit["match_lines"]]
    return lines


@pytest.mark.parametrize(("question", "fact"), ACROSS)
def test_a_question_across_languages_points_at_its_fact(
    across: Cli, question: str, fact: str
) -> None:
    assert any(fact in line for line in _matched(across, question))
    block = across("search", "--format", "context", "-n", "3", question).stdout
    assert fact in block


@pytest.mark.parametrize(("question", "fact"), PARAPHRASE)
def test_a_paraphrase_points_at_its_fact(paraphrase: Cli, question: str, fact: str) -> None:
    assert any(fact in line for line in _matched(paraphrase, question))
    table = paraphrase("search", "-n", "1", question).stdout
    assert fact in table


def test_a_hit_scored_by_its_entry_says_so(across: Cli) -> None:
    hit = across("search", "--json", "-n", "1", ACROSS[3][0]).json()["results"][0]
    assert 0 < hit["scores"]["entry"] <= 1
    assert hit["match_line"] == hit["match_lines"][0]


def test_the_mcp_search_tool_quotes_the_fact(across: Cli, workspace: Path) -> None:
    pytest.importorskip("mcp")
    from tests.test_mcp import session, text_of

    async def body(s: Any) -> list[str]:
        return [text_of(await s.call_tool("search", {"query": q, "limit": 3})) for q, _ in ACROSS]

    answers = session(workspace, body)
    for (_, fact), text in zip(ACROSS, answers, strict=True):
        assert fact in text


#: Facts as ``memcli add`` writes them (time, type, tags) with prompts about them in other
#: words (benchmarks/recall_bench.py). Embedded with their time and tags, each entry's own
#: similarity to its prompt was below the model's recall threshold (0.27-0.33).
RECALLED = [
    (
        "- 14:20 [constraint] Admin accounts must have TOTP two-factor enabled; the middleware"
        " blocks admin routes otherwise. #auth",
        "Do admins need 2FA?",
    ),
    (
        "- 14:21 [fact] The main database is PostgreSQL 15 on RDS; read replicas serve"
        " reporting queries. #db",
        "Where should the heavy analytics queries go?",
    ),
    (
        "- 14:22 [decision] Background jobs run on Celery with RabbitMQ as the broker; tasks"
        " must be idempotent because they can run twice. #queue",
        "Which message broker do the workers use?",
    ),
]


def test_recall_reads_an_entry_by_its_kind_and_words(cli: Cli, workspace: Path) -> None:
    """Recall embeds an entry without its list mark, time and tags: each prompt gets its fact
    (and an unrelated prompt nothing), with the real MiniLM model."""
    from memcli.memory import Memory

    assert cli("config", "set", "embedding.model", "local/all-MiniLM-L6-v2").exit_code == 0
    assert cli("config", "set", "embedding.model_path", MODEL_DIR).exit_code == 0
    lines = [line for line, _ in RECALLED]
    lines.append("- 14:30 [convention] Changelog entries are written in the past tense. #docs")
    (workspace / "memory" / "2026-11-20.md").write_text("\n".join(lines) + "\n")
    assert cli("index").exit_code == 0
    with Memory.open(workspace) as mem:
        for line, prompt in RECALLED:
            ctx = mem.recall(prompt)
            assert ctx is not None, prompt
            assert line.split("] ", 1)[1].split(" #")[0] in ctx.block.text, prompt
        assert mem.recall("Turn this script into a CLI with argparse") is None
