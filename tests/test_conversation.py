"""Tests for memcli.flush.conversation: formats, errors, hashing, rendering and splitting."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcli.errors import BadInput, ExitCode
from memcli.flush import conversation
from memcli.flush.conversation import (
    MIN_PART_CHARS,
    Message,
    conversation_hash,
    parse,
    parse_conversation,
    render_transcript,
    split_for_context,
)

U, A, S = "user", "assistant", "system"
CONV = [
    {"role": "system", "content": "You are helpful."},
    {"role": "user", "content": "Which cache should we use, Redis or Valkey?"},
    {"role": "assistant", "content": "Valkey: same protocol,\n\nbetter licence."},
]
EXPECTED = [
    Message(S, "You are helpful."),
    Message(U, "Which cache should we use, Redis or Valkey?"),
    Message(A, "Valkey: same protocol,\n\nbetter licence."),
]


# --- formats ------------------------------------------------------------------------------


def test_json_array() -> None:
    assert parse_conversation(json.dumps(CONV)) == EXPECTED
    assert parse_conversation(json.dumps(CONV, indent=4)) == EXPECTED


def test_object_with_messages() -> None:
    body = json.dumps({"model": "gpt-4o-mini", "temperature": 0, "messages": CONV})
    assert parse_conversation(body) == EXPECTED


def test_json_lines_with_blank_lines_and_crlf() -> None:
    jsonl = "\r\n".join(json.dumps(m) for m in CONV[:2]) + "\r\n\r\n" + json.dumps(CONV[2]) + "\n"
    assert parse_conversation(jsonl) == EXPECTED


def test_single_message_object_is_one_line_of_json_lines() -> None:
    assert parse_conversation('{"role": "user", "content": "hi"}') == [Message(U, "hi")]


def test_content_parts() -> None:
    conv = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "The staging DB is pg-stage-2."},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                "Also pg 16.",
                {"type": "input_text", "text": "And WAL on."},
            ],
        },
        {"role": "assistant", "content": [{"type": "image", "source": {}}]},  # nothing left
    ]
    assert parse_conversation(json.dumps(conv)) == [
        Message(U, "The staging DB is pg-stage-2.\nAlso pg 16.\nAnd WAL on.")
    ]


def test_null_and_blank_content_are_dropped() -> None:
    conv = [
        {"role": "user", "content": "  keep me  "},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "1"}]},
        {"role": "assistant", "content": " \n\t "},
        {"role": "tool", "content": "result 42"},
    ]
    assert parse_conversation(json.dumps(conv)) == [
        Message(U, "keep me"),
        Message("tool", "result 42"),
    ]


def test_roles_are_normalised() -> None:
    conv = [
        {"role": " USER ", "content": "a"},
        {"role": "Human", "content": "b"},
        {"role": "AI", "content": "c"},
        {"role": "Assistant", "content": "d"},
    ]
    assert [m.role for m in parse_conversation(json.dumps(conv))] == [U, U, A, A]


def test_plain_transcript() -> None:
    text = (
        "User: the nightly job failed again\n"
        "it ran out of disk\n"
        "\n"
        "ASSISTANT: I moved the cache to /data.\n"
        "system: be brief\n"
        "Human: thanks\n"
        "ai:you're welcome\n"
    )
    assert parse_conversation(text) == [
        Message(U, "the nightly job failed again\nit ran out of disk"),
        Message(A, "I moved the cache to /data."),
        Message(S, "be brief"),
        Message(U, "thanks"),
        Message(A, "you're welcome"),
    ]


def test_transcript_preamble_and_markdown_roles() -> None:
    text = "Chat from Monday\n**User:** hi\n**Assistant:** hello\nuser:\n"
    assert parse_conversation(text) == [
        Message("transcript", "Chat from Monday"),
        Message(U, "hi"),
        Message(A, "hello"),
    ]


def test_free_text_is_one_transcript_message() -> None:
    text = "  We decided that releases ship on Tuesdays.\nUse: uv for builds.\n\n"
    assert parse_conversation(text) == [
        Message("transcript", "We decided that releases ship on Tuesdays.\nUse: uv for builds.")
    ]
    # Text that merely starts with a bracket is free text, not broken JSON.
    assert parse_conversation("[draft] notes on the deploy") == [
        Message("transcript", "[draft] notes on the deploy")
    ]
    assert parse_conversation("{placeholder} text") == [Message("transcript", "{placeholder} text")]


def test_parse_reports_free_text_as_user() -> None:
    # parse() is what flush sends to the model: free text becomes a user turn.
    assert parse("just some text") == [Message(U, "just some text")]
    assert parse("intro\nassistant: ok") == [Message(U, "intro"), Message(A, "ok")]
    assert parse(json.dumps(CONV)) == EXPECTED


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "   \n\t\n",
        "\ufeff",
        "[]",
        " [ ] ",
        '{"messages": []}',
        '[{"role": "user", "content": "  "}]',
        '{"role": "assistant", "content": null}',
    ],
)
def test_empty_input_gives_no_messages(raw: str) -> None:
    assert parse_conversation(raw) == []


def test_bom_is_ignored() -> None:
    assert parse_conversation("\ufeff" + json.dumps(CONV)) == EXPECTED


# --- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("42", "is JSON a number, not a list of messages"),
        ("null", "is JSON null"),
        ('"hello"', "is JSON a string"),
        ('{"foo": 1}', 'has no "messages" array'),
        ('{"messages": 3}', '"messages" in the conversation JSON is not an array'),
        ("[1, 2]", "conversation item 1 is not a message object"),
        ('["just", "strings"]', "conversation item 1 is not a message object"),
        ('[{"role": "user", "content": "a"}, {"content": "no role"}]', "item 2 has no role"),
        ('[{"role": "user"}]', "item 1 has no content"),
        ('[{"role": 1, "content": "x"}]', "item 1 has a role that is not a string"),
        ('{"messages": [{"role": ["user"], "content": "x"}]}', "message 1 has a role that is"),
        ('[{"role": "user", "content": 42}]', "neither text nor a list of parts"),
        ('[{"role": "user", "content": [{"type": "text"}]}]', "a text part without text"),
        ('[{"role": "user", "content": [7]}]', "a content part of the wrong type"),
        ("binary\x00data", "binary data"),
        ('[{"role": "user", "content": "unterminated"', "not valid JSON"),
        ('{"role": "user", "content": "x",}', "not valid JSON"),
    ],
)
def test_bad_input(raw: str, message: str) -> None:
    with pytest.raises(BadInput) as info:
        parse_conversation(raw)
    err = info.value
    assert message in err.message
    assert "\n" not in err.message  # one line
    assert err.exit_code == ExitCode.USAGE


def test_invalid_json_names_line_and_column() -> None:
    with pytest.raises(BadInput) as info:
        parse_conversation('[\n  {"role": "user",\n   "content": "x" oops}\n]')
    assert "not valid JSON" in info.value.message
    assert "line 3 column" in info.value.message


def test_json_lines_error_names_the_line() -> None:
    jsonl = '{"role": "user", "content": "a"}\n\n{"role": "assistant", "content": "b"}\nnot json\n'
    with pytest.raises(BadInput) as info:
        parse_conversation(jsonl)
    assert "line 4 of the conversation is not valid JSON" in info.value.message
    # Item errors use real line numbers too (blank lines count).
    jsonl = '{"role": "user", "content": "a"}\n\n{"content": "b"}\n'
    with pytest.raises(BadInput, match="line 3 has no role"):
        parse_conversation(jsonl)


# --- hashing and rendering ----------------------------------------------------------------


def test_hash_is_stable_across_formats_and_spacing() -> None:
    h = conversation_hash(parse_conversation(json.dumps(CONV)))
    assert len(h) == 64 and int(h, 16) >= 0
    jsonl = "\n".join(json.dumps(m) for m in CONV)
    spaced = [
        {"role": m["role"], "content": "  " + m["content"].replace(" ", "   ") + "\n"} for m in CONV
    ]
    same = [
        json.dumps(CONV, indent=2),
        jsonl,
        json.dumps({"messages": CONV}),
        json.dumps(spaced),
        "system: You are helpful.\nuser: Which cache should we use, Redis or Valkey?\n"
        "assistant: Valkey: same protocol,\nbetter licence.",
    ]
    for raw in same:
        assert conversation_hash(parse_conversation(raw)) == h, raw


def test_hash_canonical_form_and_sensitivity() -> None:
    msgs = [Message(U, "a  b\n c"), Message(A, "ü")]
    canon = json.dumps(
        [["user", "a b c"], ["assistant", "ü"]], ensure_ascii=False, separators=(",", ":")
    )
    assert conversation_hash(msgs) == hashlib.sha256(canon.encode()).hexdigest()
    assert conversation_hash(msgs) != conversation_hash([Message(A, "a b c"), Message(A, "ü")])
    assert conversation_hash(msgs) != conversation_hash(msgs[:1])
    assert conversation_hash(msgs) != conversation_hash(list(reversed(msgs)))
    # Messages are not merged: the boundary between turns matters.
    assert conversation_hash([Message(U, "a"), Message(U, "b")]) != conversation_hash(
        [Message(U, "a b")]
    )


def test_render_transcript() -> None:
    assert render_transcript([]) == ""
    assert render_transcript(EXPECTED) == (
        "system: You are helpful.\n\n"
        "user: Which cache should we use, Redis or Valkey?\n\n"
        "assistant: Valkey: same protocol,\n\nbetter licence."
    )
    # A rendered transcript parses back (paragraphs inside a message stay in it).
    assert parse_conversation(render_transcript(EXPECTED)) == EXPECTED


# --- splitting ----------------------------------------------------------------------------


def test_split_small_conversation_is_one_part() -> None:
    assert split_for_context([], 1000) == []
    assert split_for_context(EXPECTED, 10_000) == [EXPECTED]


def test_split_packs_in_order() -> None:
    msgs = [Message(U if i % 2 else A, f"turn {i} " + "x" * 60) for i in range(10)]
    parts = split_for_context(msgs, 250)
    assert len(parts) > 1
    assert [m for p in parts for m in p] == msgs  # nothing needed cutting
    for p in parts:
        assert len(render_transcript(p)) <= 250


def test_split_cuts_a_long_message_at_paragraphs() -> None:
    paras = [f"Paragraph {i}. " + "word " * 20 for i in range(6)]
    msg = Message(U, "\n\n".join(p.strip() for p in paras))
    parts = split_for_context([msg], 300)
    pieces = [m.content for p in parts for m in p]
    assert len(pieces) > 1
    assert all(m.role == U for p in parts for m in p)
    assert all(piece.startswith("Paragraph") for piece in pieces)  # cut between paragraphs
    assert "\n\n".join(pieces) == msg.content


def test_split_hard_cuts_a_single_huge_word() -> None:
    msg = Message(A, "z" * 1000)
    parts = split_for_context([msg], 200)
    assert "".join(m.content for p in parts for m in p) == msg.content
    assert all(sum(conversation.message_cost(m) for m in p) <= 200 for p in parts)


def test_split_refuses_impossible_budget() -> None:
    # Below MIN_PART_CHARS a part could not hold a message's overhead plus text.
    with pytest.raises(ValueError, match="max_chars must be at least"):
        split_for_context(EXPECTED, MIN_PART_CHARS - 1)


ROLES = st.sampled_from([U, A, S, "tool", "transcript"])
TEXT = (
    st.lists(
        st.one_of(
            st.sampled_from([" ", "\n", "\n\n", "\t", "word", "é", "ß.", "-"]),
            st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=40),
            st.text("abc", min_size=50, max_size=300),  # long words force hard cuts
        ),
        min_size=1,
        max_size=40,
    )
    .map(lambda parts: "".join(parts).strip())
    .filter(bool)
)
MESSAGES = st.lists(st.builds(Message, ROLES, TEXT), max_size=10)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(MESSAGES, st.integers(min_value=MIN_PART_CHARS, max_value=900))
def test_split_invariants(messages: list[Message], max_chars: int) -> None:
    parts = split_for_context(messages, max_chars)
    assert all(parts)  # no empty group
    for part in parts:
        # Roles here are short, so the documented impossible case cannot occur.
        assert len(render_transcript(part)) <= max_chars
        assert sum(conversation.message_cost(m) for m in part) <= max_chars
    flat = [m for p in parts for m in p]
    # Order kept and nothing lost: each message is its consecutive pieces, which are its
    # text in order with only the whitespace at the cuts left out.
    i = 0
    for message in messages:
        rest, count = message.content, 0
        while rest.strip():
            piece = flat[i]
            assert piece.role == message.role
            assert piece.content and piece.content == piece.content.strip()
            rest = rest.lstrip()
            assert rest.startswith(piece.content)
            rest = rest[len(piece.content) :]
            i, count = i + 1, count + 1
        if conversation.message_cost(message) <= max_chars:
            assert count == 1  # a message that fits is never cut
    assert i == len(flat)


JSON_ROLES = st.sampled_from([U, A, S, "tool"])


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(st.lists(st.builds(Message, JSON_ROLES, TEXT), max_size=6), st.sampled_from([None, 1, 4]))
def test_json_formats_round_trip_with_the_same_hash(
    messages: list[Message], indent: int | None
) -> None:
    objs = [{"role": m.role, "content": m.content} for m in messages]
    as_array = parse_conversation(json.dumps(objs, indent=indent))
    as_object = parse_conversation(json.dumps({"messages": objs}, indent=indent))
    as_lines = parse_conversation("\n".join(json.dumps(o) for o in objs))
    assert as_array == as_object == as_lines == messages
    assert conversation_hash(as_array) == conversation_hash(as_lines)
