"""A whole Claude Code session, end to end: install into a project, then run the hook
commands exactly as .claude/settings.json names them, with the payloads the agent sends."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.agent_helpers import claude_transcript, context_of, run_hook, wait_for_log
from tests.conftest import Cli
from tests.stub_openai import StubOpenAI

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent / "fixtures" / "agents"
SESSION = "5a0ddcd0-5487-4794-99ac-143f6bb9e248"


def installed_commands(project: Path) -> dict[str, str]:
    """Event name -> the command line of memcli's hook, read from the agent's settings."""
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    out = {}
    for event, groups in settings["hooks"].items():
        for group in groups:
            for hook in group["hooks"]:
                if "agent hook" in hook["command"]:
                    out[event] = hook["command"]
                    if event == "SessionStart":
                        assert "compact" in group["matcher"].split("|")
    return out


def chat_requests(stub: StubOpenAI) -> list[str]:
    """The extraction requests (not flush's decision requests about known facts)."""
    bodies = [json.dumps(r["body"]) for r in stub.requests if r["path"].endswith("/completions")]
    return [b for b in bodies if "You extract durable facts" in b]


def test_a_whole_session(
    cli: Cli, workspace: Path, openai_stub: StubOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_LLM_MODEL", "openai/stub-chat")
    monkeypatch.setenv("MEMCLI_LLM_API_BASE", openai_stub.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    project = workspace  # memcli init ran in the project's root
    assert (
        cli("add", "--type", "decision", "Payments go through Stripe, never PayPal.").exit_code == 0
    )
    assert cli("add", "Staging lives at staging.shop.test.").exit_code == 0
    assert cli("agent", "install", "claude-code").exit_code == 0
    hooks = installed_commands(project)
    assert set(hooks) == {
        "SessionStart",
        "UserPromptSubmit",
        "PreCompact",
        "SessionEnd",
        "PostToolUse",
    }

    transcript = claude_transcript("transcript.jsonl")  # where Claude Code keeps them
    lines = (FIXTURES / "claude_session.jsonl").read_text().splitlines(keepends=True)
    transcript.write_text("".join(lines[:8]))  # the session so far: the first two turns
    base = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(project)}

    # 1. the session starts: the briefing holds what is known
    start = run_hook(
        hooks["SessionStart"],
        {**base, "hook_event_name": "SessionStart", "source": "startup"},
        project,
    )
    briefing = context_of(start, "SessionStart")
    assert "Payments go through Stripe, never PayPal." in briefing
    assert "Staging lives at staging.shop.test." in briefing

    # 2. a prompt about payments gets the decision; the recalled block is what the agent
    #    records in its transcript (and a later flush must not save it again)
    prompt = run_hook(
        hooks["UserPromptSubmit"],
        {
            **base,
            "hook_event_name": "UserPromptSubmit",
            "prompt": "Should payments go through PayPal or Stripe?",
        },
        project,
    )
    recalled = context_of(prompt, "UserPromptSubmit")
    assert "Payments go through Stripe, never PayPal." in recalled
    with transcript.open("a") as f:
        f.write(
            json.dumps(
                {
                    "type": "user",
                    "sessionId": SESSION,
                    "uuid": "r1",
                    "message": {"role": "user", "content": recalled},
                }
            )
            + "\n"
        )

    # 3. the context fills up: pre-compact flushes in the background
    openai_stub.chat_replies = [
        json.dumps(
            {
                "facts": [
                    {
                        "text": "The session cache moved from Redis to Valkey.",
                        "type": "decision",
                        "tags": ["infra"],
                    }
                ]
            }
        )
    ]
    pre = run_hook(
        hooks["PreCompact"], {**base, "hook_event_name": "PreCompact", "trigger": "auto"}, project
    )
    assert pre.returncode == 0 and pre.stdout == ""
    wait_for_log(project, f"flushed session {SESSION}: 2 new of 2 turns, 1 fact(s) written")
    first = chat_requests(openai_stub)
    assert len(first) == 1
    assert "moving the session cache from Redis to Valkey" in first[0]
    assert "never PayPal" not in first[0]  # recalled memory is not sent back as news

    # 4. after compaction the session starts again: the new fact is in the briefing
    again = run_hook(
        hooks["SessionStart"],
        {**base, "hook_event_name": "SessionStart", "source": "compact"},
        project,
    )
    assert "The session cache moved from Redis to Valkey." in context_of(again, "SessionStart")

    # 5. the session goes on, then ends: only the turns after the compaction are sent
    transcript.write_text(transcript.read_text() + "".join(lines[8:]))
    openai_stub.chat_replies = [
        json.dumps(
            {
                "facts": [
                    {
                        "text": "Staging deploys need VALKEY_URL, not REDIS_URL.",
                        "type": "constraint",
                    }
                ]
            }
        )
    ]
    end = run_hook(
        hooks["SessionEnd"],
        {**base, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"},
        project,
    )
    assert end.returncode == 0 and end.stdout == ""
    wait_for_log(project, "2 new of 4 turns, 1 fact(s) written")
    second = chat_requests(openai_stub)[1]
    assert "VALKEY_URL variable" in second
    assert "moving the session cache" not in second  # sent at compaction already

    # 6. a third flush of the same transcript sends nothing
    assert (
        run_hook(hooks["SessionEnd"], {**base, "hook_event_name": "SessionEnd"}, project).returncode
        == 0
    )
    wait_for_log(project, "0 new of 4 turns, 0 fact(s) written")
    assert len(chat_requests(openai_stub)) == 2

    # the next session knows both facts
    nxt = run_hook(
        hooks["SessionStart"],
        {"session_id": "next", "cwd": str(project), "source": "startup"},
        project,
    )
    text = context_of(nxt, "SessionStart")
    assert "Staging deploys need VALKEY_URL, not REDIS_URL." in text
    assert "The session cache moved from Redis to Valkey." in text
    shutil.rmtree(project / ".claude")
