"""Sessions are never lost: a flush that failed is tried again by the next hook, a session
that ended without its end hook (Ctrl-C, a crash) is caught up at the next session start, no
flush starts without an LLM, and no lock file is left per session. Real hook processes, a real
transcript where Claude Code keeps it, and the loopback LLM stub."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import time
from pathlib import Path

import pytest

from tests.agent_helpers import MEMCLI, run_hook, wait_for_log
from tests.conftest import Cli
from tests.stub_openai import StubOpenAI

FIXTURES = Path(__file__).parent / "fixtures" / "agents"


@pytest.fixture
def ws(cli: Cli, workspace: Path) -> Path:
    assert cli("add", "Use Valkey instead of Redis for the session cache.").exit_code == 0
    return workspace


def project_transcript(root: Path, session: str) -> Path:
    """Where Claude Code keeps the transcript of a session started in ``root``."""
    slug = re.sub(r"[^A-Za-z0-9]", "-", str(root.resolve()))
    folder = Path(os.environ["HOME"]) / ".claude" / "projects" / slug
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session}.jsonl"
    shutil.copy(FIXTURES / "claude_session.jsonl", path)
    return path


def llm(monkeypatch: pytest.MonkeyPatch, base_url: str) -> None:
    monkeypatch.setenv("MEMCLI_LLM_MODEL", "openai/stub-chat")
    monkeypatch.setenv("MEMCLI_LLM_API_BASE", base_url)
    monkeypatch.setenv("MEMCLI_LLM_MAX_RETRIES", "0")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def record(root: Path, session: str) -> dict[str, object]:
    path = root / ".memcli" / "agent" / "sessions" / f"{session}.json"
    return dict(json.loads(path.read_text())) if path.exists() else {}


def wait_for(check: object, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError("timed out")


@pytest.mark.slow
def test_a_failed_flush_is_retried_by_the_next_session_start(
    ws: Path, openai_stub: StubOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcript = project_transcript(ws, "s-failed")
    llm(monkeypatch, f"http://127.0.0.1:{_closed_port()}/v1")  # the provider is down
    end = {"session_id": "s-failed", "transcript_path": str(transcript), "cwd": str(ws)}
    assert run_hook([*MEMCLI, "agent", "hook", "session-end"], end, ws).returncode == 0
    wait_for_log(ws, "error: flush of session s-failed")
    assert record(ws, "s-failed")["failed"]
    llm(monkeypatch, openai_stub.base_url)  # back up: a new session starts
    start = {"session_id": "s-next", "cwd": str(ws), "source": "startup"}
    proc = run_hook([*MEMCLI, "agent", "hook", "session-start"], start, ws)
    assert proc.returncode == 0 and "Valkey" in proc.stdout
    wait_for(
        lambda: record(ws, "s-failed").get("turns") and not record(ws, "s-failed").get("failed")
    )
    assert openai_stub.count("/chat/completions") >= 1
    assert record(ws, "s-next") == {}  # the session that asked is not flushed at its start


@pytest.mark.slow
def test_a_session_that_ended_without_its_hook_is_caught_up(
    ws: Path, openai_stub: StubOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm(monkeypatch, openai_stub.base_url)
    project_transcript(ws, "s-crashed")  # Claude Code kept it; no session-end ever ran
    start = {"session_id": "s-new", "cwd": str(ws), "source": "startup"}
    assert run_hook([*MEMCLI, "agent", "hook", "session-start"], start, ws).returncode == 0
    wait_for(lambda: bool(record(ws, "s-crashed").get("turns")))
    log = wait_for_log(ws, "flushed session s-crashed")
    assert "session-start (due)" in log
    # caught up once: the next start sends nothing again
    sent = openai_stub.count("/chat/completions")
    assert run_hook([*MEMCLI, "agent", "hook", "session-start"], start, ws).returncode == 0
    time.sleep(3)
    assert openai_stub.count("/chat/completions") == sent


@pytest.mark.slow
def test_no_flush_starts_without_an_llm(ws: Path) -> None:
    transcript = project_transcript(ws, "s-nollm")
    end = {"session_id": "s-nollm", "transcript_path": str(transcript), "cwd": str(ws)}
    for event in ("pre-compact", "session-end", "session-start"):
        assert run_hook([*MEMCLI, "agent", "hook", event], end, ws).returncode == 0
    time.sleep(2)
    log = ws / ".memcli" / "agent.log"
    assert not log.exists() or "error" not in log.read_text()
    assert record(ws, "s-nollm") == {}


@pytest.mark.slow
def test_no_lock_file_is_left_per_session(
    ws: Path, openai_stub: StubOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm(monkeypatch, openai_stub.base_url)
    folder = ws / ".memcli" / "agent" / "sessions"
    for session in ("s-a", "s-b", "s-c"):
        transcript = project_transcript(ws, session)
        end = {"session_id": session, "transcript_path": str(transcript), "cwd": str(ws)}
        assert run_hook([*MEMCLI, "agent", "hook", "session-end"], end, ws).returncode == 0
        wait_for(lambda s=session: bool(record(ws, s).get("turns")))
    assert sorted(p.name for p in folder.glob("*.lock")) == ["flush.lock"]


def test_install_and_status_say_once_that_sessions_are_not_saved_without_an_llm(
    cli: Cli, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_AGENT_OWN_MODEL", "false")  # nor the agent's own CLI
    installed = cli("agent", "install", "claude-code")
    assert installed.exit_code == 0
    assert installed.stderr.count("no LLM model configured") == 1
    status = cli("agent", "status", "--json").json()
    assert status["flush"] == {
        "on": False,
        "model": None,
        "backend": None,
        "agents": [],
        "why": "no LLM model configured (llm.model): sessions are not saved as facts"
        " (agent.own_model is off)",
    }
    assert cli("agent", "status").stderr.count("no LLM model configured") == 1
