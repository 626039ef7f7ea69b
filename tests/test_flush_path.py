"""The flush path goes once: ``memcli agent flush-session`` (what the pre-compact and
session-end hooks start) opens the workspace once, loads its settings once and parses each
transcript once, for its own session and every session due.

A real flush in process: the real Typer app, real transcripts where Claude Code keeps them,
the loopback LLM stub; the counts are taken by wrappers that call through to memcli's own
functions.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import memcli.flush.conversation as conversation
from memcli.config.layers import Settings
from memcli.service.core import MemoryCore
from tests.conftest import Cli
from tests.stub_openai import StubOpenAI

FIXTURES = Path(__file__).parent / "fixtures" / "agents"


def transcript(root: Path, session: str, extra: str = "") -> Path:
    """A Claude Code transcript of a session started in ``root``, where Claude Code keeps it
    (a session of this project that a session start catches up when never flushed)."""
    slug = re.sub(r"[^A-Za-z0-9]", "-", str(root.resolve()))
    folder = Path(os.environ["HOME"]) / ".claude" / "projects" / slug
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session}.jsonl"
    shutil.copy(FIXTURES / "claude_session.jsonl", path)
    if extra:  # another conversation: its own hash, its own request
        record = {
            "type": "user",
            "sessionId": session,
            "message": {"role": "user", "content": extra},
        }
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
    return path


def counting(
    monkeypatch: pytest.MonkeyPatch, counts: Counter[str], owner: Any, name: str, key: str
) -> None:
    """Count the calls of ``owner.name`` (a function or a classmethod), calling through."""
    raw = owner.__dict__[name]
    if isinstance(raw, classmethod):
        real = raw.__func__

        def wrapped_method(cls: Any, *args: Any, **kwargs: Any) -> Any:
            counts[key] += 1
            return real(cls, *args, **kwargs)

        monkeypatch.setattr(owner, name, classmethod(wrapped_method))
        return
    func: Callable[..., Any] = raw

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        counts[key] += 1
        return func(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapped)


def test_a_session_flush_opens_loads_and_parses_once(
    cli: Cli, workspace: Path, openai_stub: StubOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_LLM_MODEL", "openai/stub-chat")
    monkeypatch.setenv("MEMCLI_LLM_API_BASE", openai_stub.base_url)
    monkeypatch.setenv("MEMCLI_LLM_MAX_RETRIES", "0")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    own = transcript(workspace, "s-own")
    transcript(workspace, "s-left", extra="We chose Valkey over Redis for the session cache.")
    openai_stub.chat_replies = [
        json.dumps({"facts": [{"text": "Deploys go out on Tuesdays.", "type": "decision"}]}),
        json.dumps({"facts": [{"text": "The session cache is Valkey.", "type": "decision"}]}),
    ]
    counts: Counter[str] = Counter()
    counting(monkeypatch, counts, MemoryCore, "open", "workspace opened")
    counting(monkeypatch, counts, Settings, "defaults", "settings loaded")
    counting(monkeypatch, counts, conversation, "parse_conversation", "conversation parsed")

    r = cli(
        "agent",
        "flush-session",
        "--event",
        "session-end",
        "--due",
        "--session-id",
        "s-own",
        "--transcript",
        str(own),
        "--json",
    )

    assert r.exit_code == 0, r.stderr
    done = {row["session_id"]: row for row in json.loads(r.stdout)}
    assert set(done) == {"s-own", "s-left"}  # its own session, then the one left unflushed
    assert all(row["flush"]["written"] for row in done.values())
    assert counts == {
        "workspace opened": 1,  # one Memory for the session and the session due
        "settings loaded": 1,
        "conversation parsed": 2,  # each transcript once: its turns go on as messages
    }


def test_a_session_start_hook_reads_the_settings_once(
    cli: Cli, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session-start hook checks whether a catch-up flush can run and makes the briefing
    from one reading of the settings (no LLM here: no flush starts, no process)."""
    from memcli.agent.hook_runner import run_hook

    assert cli("add", "--type", "decision", "Deploys go out on Tuesdays.").exit_code == 0
    counts: Counter[str] = Counter()
    counting(monkeypatch, counts, MemoryCore, "open", "workspace opened")
    counting(monkeypatch, counts, Settings, "defaults", "settings loaded")
    payload = {"session_id": "s-start", "cwd": str(workspace), "source": "startup"}

    answer = run_hook("session-start", json.dumps(payload), str(workspace))

    assert "Deploys go out on Tuesdays." in answer
    assert counts == {"workspace opened": 1, "settings loaded": 1}
