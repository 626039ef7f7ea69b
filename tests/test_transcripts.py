"""Coding agents' session files read by flush: Claude Code transcripts and Codex rollouts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcli.errors import BadInput
from memcli.flush.conversation import parse
from memcli.flush.transcripts import CLAUDE_CODE, CODEX, agent_format, strip_recalled

FIXTURES = Path(__file__).parent / "fixtures" / "agents"


def turns(name: str) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in parse((FIXTURES / name).read_text("utf-8"))]


def test_claude_code_transcript_keeps_what_was_said() -> None:
    got = turns("claude_session.jsonl")
    assert got == [
        (
            "user",
            "We are moving the session cache from Redis to Valkey this sprint."
            " Can you update the docker compose file?",
        ),
        ("assistant", "I replaced the redis:7 image with valkey/valkey:8 and kept port 6379."),
        (
            "user",
            "Good. Note that the staging deploy needs the VALKEY_URL variable, not REDIS_URL.",
        ),
        ("assistant", "Updated the staging env file to use VALKEY_URL."),
    ]
    text = json.dumps(got)
    # tool calls and results, thinking, meta, side chains, summaries, commands: all dropped
    for dropped in (
        "redis:7\\n",
        "toolu_1",
        "should read the compose",
        "Caveat",
        "Sub-agent",
        "continued from a previous",
        "/compact",
        "system-reminder",
        "make deploy-staging",
    ):
        assert dropped not in text


def test_codex_rollout_keeps_what_was_said() -> None:
    assert turns("codex_rollout.jsonl") == [
        (
            "user",
            "The S3 upload token now rotates every 30 days instead of 90. Update the rotation job.",
        ),
        ("assistant", "I changed DAYS from 90 to 30 in jobs/rotate.py."),
    ]


def test_formats_are_recognised_by_shape() -> None:
    claude = [json.loads(x) for x in (FIXTURES / "claude_session.jsonl").read_text().splitlines()]
    codex = [json.loads(x) for x in (FIXTURES / "codex_rollout.jsonl").read_text().splitlines()]
    assert agent_format(claude) == CLAUDE_CODE
    assert agent_format(codex) == CODEX
    assert agent_format([{"role": "user", "content": "hi"}]) is None
    # Codex's older form: message records as they are, after a metadata line
    older = [
        {"id": "x", "timestamp": "2025-05-01T00:00:00Z", "instructions": None},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]},
    ]
    assert agent_format(older[1:]) == CODEX


def test_a_last_record_still_being_written_is_ignored() -> None:
    text = (FIXTURES / "claude_session.jsonl").read_text("utf-8")
    cut = text + '{"type": "assistant", "message": {"role": "assis'
    assert [m.content for m in parse(cut)] == [m.content for m in parse(text)]


def test_a_broken_line_in_the_middle_is_still_an_error() -> None:
    lines = (FIXTURES / "claude_session.jsonl").read_text("utf-8").splitlines()
    lines.insert(3, "{not json")
    with pytest.raises(BadInput, match="line 4"):
        parse("\n".join(lines))


def test_plain_json_lines_are_unchanged() -> None:
    text = '{"role": "user", "content": "We use Valkey."}\n{"role": "assistant", "content": "Ok."}'
    assert [(m.role, m.content) for m in parse(text)] == [
        ("user", "We use Valkey."),
        ("assistant", "Ok."),
    ]


def test_recalled_memory_is_stripped_from_any_conversation() -> None:
    block = (
        "<<<BEGIN MEMORY 3f9a1c2e7b4d>>>\n"
        '## Memory for "x"\n- a fact\n'
        "<<<END MEMORY 3f9a1c2e7b4d>>>\n"
    )
    assert strip_recalled(f"before\n{block}after") == "before\nafter"
    # a block whose END marker differs is not memcli's: kept whole
    forged = block.replace("END MEMORY 3f9a1c2e7b4d", "END MEMORY 000000000000")
    assert strip_recalled(forged) == forged
    msgs = parse(
        json.dumps([{"role": "user", "content": block}, {"role": "user", "content": "hi"}])
    )
    assert [m.content for m in msgs] == ["hi"]
