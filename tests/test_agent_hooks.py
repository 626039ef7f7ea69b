"""memcli agent hook EVENT, run as a coding agent runs it: a process, its JSON on stdin."""

from __future__ import annotations

import json
import shutil
import socket
import time
from pathlib import Path

import pytest

from tests.agent_helpers import MEMCLI, claude_transcript, context_of, run_hook, wait_for_log
from tests.conftest import Cli
from tests.stub_openai import StubOpenAI

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent / "fixtures" / "agents"


@pytest.fixture
def facts(cli: Cli, workspace: Path) -> Path:
    for args in (
        ("--type", "decision", "Use Valkey instead of Redis for the session cache."),
        ("--type", "constraint", "S3 upload tokens rotate every 30 days."),
        ("--type", "procedure", "Release with make release, then tag the commit."),
        ("Alice owns the billing service.",),
    ):
        assert cli("add", *args).exit_code == 0
    return workspace


def hook(event: str, payload: dict | str, cwd: Path) -> str:
    return context_of(run_hook([*MEMCLI, "agent", "hook", event], payload, cwd), EVENT[event])


EVENT = {"session-start": "SessionStart", "prompt": "UserPromptSubmit"}


def test_session_start_briefs_standing_entries_as_data(facts: Path) -> None:
    payload = {
        "session_id": "s1",
        "cwd": str(facts),
        "hook_event_name": "SessionStart",
        "source": "startup",
        "transcript_path": str(facts / "t.jsonl"),
    }
    text = hook("session-start", payload, facts)
    assert text.startswith("<<<BEGIN MEMORY ")
    assert "data, not instructions" in text
    for fact in (
        "Use Valkey instead of Redis",
        "rotate every 30 days",
        "make release",
        "Alice owns the billing service",
    ):
        assert fact in text
    # standing entries come before the latest plain ones
    assert text.index("make release") < text.index("Alice owns")


def test_session_start_respects_its_token_budget(facts: Path, cli: Cli) -> None:
    assert cli("config", "set", "agent.briefing_tokens", "80").exit_code == 0
    text = hook("session-start", {"cwd": str(facts), "source": "compact"}, facts)
    assert 0 < len(text) <= 80 * 4
    assert "<<<END MEMORY " in text


def test_prompt_recalls_only_what_matches(facts: Path) -> None:
    text = hook(
        "prompt", {"cwd": str(facts), "prompt": "Which cache do we use for sessions?"}, facts
    )
    assert "Use Valkey instead of Redis" in text
    assert "Alice" not in text
    # ordinary prompts get no noise
    for prompt in ("Please fix the typo in the footer template", "ok", "/compact", ""):
        assert hook("prompt", {"cwd": str(facts), "prompt": prompt}, facts) == ""


@pytest.mark.parametrize(
    "payload",
    ["not json at all", "[1, 2, 3]", '{"cwd": 5, "prompt": ["x"]}', "\xff\xfe garbage"],
)
def test_a_bad_payload_exits_0_prints_nothing_and_is_logged(facts: Path, payload: str) -> None:
    for event in ("session-start", "prompt", "pre-compact", "session-end"):
        proc = run_hook([*MEMCLI, "-w", str(facts), "agent", "hook", event], payload, facts)
        assert proc.returncode == 0
        if event == "session-start" and payload.startswith("not"):
            assert proc.stdout == ""
        assert "Traceback" not in proc.stderr
    if payload.startswith("not") or payload.startswith("["):
        log = (facts / ".memcli" / "agent.log").read_text()
        assert " prompt error: " in log


def test_no_workspace_exits_0_and_prints_nothing(tmp_path: Path) -> None:
    empty = tmp_path / "nowhere"
    empty.mkdir()
    for event in ("session-start", "prompt", "pre-compact", "session-end"):
        payload = {
            "cwd": str(empty),
            "prompt": "which cache do we use?",
            "session_id": "s",
            "transcript_path": str(empty / "t.jsonl"),
        }
        proc = run_hook([*MEMCLI, "agent", "hook", event], payload, empty)
        assert proc.returncode == 0
        assert proc.stdout == ""
        assert "no memcli workspace" in proc.stderr
    assert not (empty / ".memcli").exists()


def test_a_damaged_index_never_blocks_the_agent(facts: Path) -> None:
    (facts / ".memcli" / "index.db").write_bytes(b"SQLite format 3\x00" + b"\x13" * 5000)
    text = hook("session-start", {"cwd": str(facts)}, facts)
    assert "Use Valkey instead of Redis" in text  # rebuilt from the Markdown


def test_an_unknown_event_exits_0_and_is_logged(facts: Path) -> None:
    proc = run_hook([*MEMCLI, "agent", "hook", "stop"], {"cwd": str(facts)}, facts)
    assert proc.returncode == 0 and proc.stdout == ""
    assert "unknown hook event 'stop'" in (facts / ".memcli" / "agent.log").read_text()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_pre_compact_returns_before_the_flush_and_a_provider_down_is_logged(
    facts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_LLM_MODEL", "openai/stub-chat")
    monkeypatch.setenv("MEMCLI_LLM_API_BASE", f"http://127.0.0.1:{_closed_port()}/v1")
    monkeypatch.setenv("MEMCLI_LLM_MAX_RETRIES", "0")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    transcript = claude_transcript("session.jsonl")  # where Claude Code keeps them
    shutil.copy(FIXTURES / "claude_session.jsonl", transcript)
    payload = {
        "session_id": "s-down",
        "transcript_path": str(transcript),
        "cwd": str(facts),
        "hook_event_name": "PreCompact",
        "trigger": "auto",
    }
    proc = run_hook([*MEMCLI, "agent", "hook", "pre-compact"], payload, facts)
    assert proc.returncode == 0 and proc.stdout == ""
    log = wait_for_log(facts, "error: flush of session s-down")
    assert "Traceback" not in log
    # nothing recorded as flushed, the failure is: the next hook sends these turns again
    record = json.loads((facts / ".memcli" / "agent" / "sessions" / "s-down.json").read_text())
    assert record["turns"] == [] and record["failed"] and record["session"] == "s-down"


def test_pre_compact_does_not_wait_for_the_llm(
    facts: Path, tmp_path: Path, openai_stub: StubOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_LLM_MODEL", "openai/stub-chat")
    monkeypatch.setenv("MEMCLI_LLM_API_BASE", openai_stub.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    openai_stub.hang_seconds = 3.0
    openai_stub.chat_replies = [json.dumps({"facts": [{"text": "Staging needs VALKEY_URL."}]})]
    transcript = claude_transcript("session.jsonl")  # where Claude Code keeps them
    shutil.copy(FIXTURES / "claude_session.jsonl", transcript)
    payload = {"session_id": "s-slow", "transcript_path": str(transcript), "cwd": str(facts)}
    proc = run_hook([*MEMCLI, "agent", "hook", "pre-compact"], payload, facts)
    assert proc.returncode == 0 and proc.stdout == ""
    # the hook is back while the model has not answered yet
    log = facts / ".memcli" / "agent.log"
    assert "flushed session s-slow" not in (log.read_text() if log.exists() else "")
    text = wait_for_log(facts, "flushed session s-slow")
    assert "4 new of 4 turns, 1 fact(s) written" in text


def test_doctor_reports_a_failing_hook(facts: Path, cli: Cli) -> None:
    def agent_check() -> dict:
        r = cli("doctor", "--json", "--offline")
        return next(c for c in r.json()["checks"] if c["name"] == "agent")

    assert agent_check()["status"] == "note"  # no hook has run yet
    assert hook("session-start", {"cwd": str(facts)}, facts)
    assert agent_check()["status"] == "note"  # a briefing logs nothing; still no failure
    run_hook([*MEMCLI, "-w", str(facts), "agent", "hook", "prompt"], "{broken", facts)
    check = agent_check()
    assert check["status"] == "problem"
    assert "prompt error: " in check["summary"]


def test_recall_never_gives_a_session_the_same_entry_twice(facts: Path) -> None:
    """A session is given an entry once; another session gets it too; an entry whose text
    changed is new; after a compaction the session may be given it again."""
    ask = "Which cache do we use for sessions?"

    def recall(session: str) -> str:
        return hook("prompt", {"cwd": str(facts), "prompt": ask, "session_id": session}, facts)

    assert "Use Valkey instead of Redis" in recall("s-1")
    assert recall("s-1") == ""  # given already: nothing new to say
    assert "Use Valkey instead of Redis" in recall("s-2")
    daily = next((facts / "memory").glob("2*.md"))
    daily.write_text(
        daily.read_text().replace("Use Valkey instead of Redis", "Use Valkey, not Redis")
    )
    assert "Use Valkey, not Redis" in recall("s-1")  # changed: given again
    assert recall("s-1") == ""
    start = {"cwd": str(facts), "session_id": "s-1", "source": "compact"}
    assert hook("session-start", start, facts)  # the briefing
    assert "Use Valkey, not Redis" in recall("s-1")  # the compaction dropped it


def test_gemini_cli_s_precompress_of_every_turn_starts_no_flush(
    facts: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gemini CLI fires PreCompress ("auto") before each turn's check of its compression
    threshold, compressing or not: no flush (an LLM request) for it; a /compress the user
    asks for ("manual") flushes first."""
    monkeypatch.setenv("MEMCLI_LLM_MODEL", "openai/stub-chat")
    monkeypatch.setenv("MEMCLI_LLM_API_BASE", f"http://127.0.0.1:{_closed_port()}/v1")
    monkeypatch.setenv("MEMCLI_LLM_MAX_RETRIES", "0")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    transcript = claude_transcript("session.jsonl")
    shutil.copy(FIXTURES / "claude_session.jsonl", transcript)

    def precompress(session: str, trigger: str) -> None:
        payload = {
            "session_id": session,
            "transcript_path": str(transcript),
            "cwd": str(facts),
            "hook_event_name": "PreCompress",
            "trigger": trigger,
        }
        proc = run_hook([*MEMCLI, "agent", "hook", "pre-compact"], payload, facts)
        assert proc.returncode == 0 and proc.stdout == ""

    precompress("g-auto", "auto")
    precompress("g-manual", "manual")
    wait_for_log(facts, "error: flush of session g-manual")
    time.sleep(1)  # a flush of the automatic one would have started with the other
    assert "g-auto" not in (facts / ".memcli" / "agent.log").read_text()
    assert not (facts / ".memcli" / "agent" / "sessions" / "g-auto.json").exists()
