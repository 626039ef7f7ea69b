"""Entry format round-trip (Hypothesis) and locked appends."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcli.errors import BadInput
from memcli.notes.entries import append_text, fact_key, format_entry, locked_append, parse_entries

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFXYZ0123456789", min_size=1, max_size=8)
TEXT_LINE = st.lists(
    st.one_of(WORD, st.sampled_from([",", ".", "(x)", "CX-7742-B", "a:b", "é", "50%"])),
    min_size=1,
    max_size=12,
).map(" ".join)


@given(
    st.lists(TEXT_LINE, min_size=1, max_size=3),
    st.one_of(st.none(), WORD),
    st.lists(WORD, max_size=3),
)
def test_entry_round_trip(lines: list[str], kind: str | None, tags: list[str]) -> None:
    text = "\n".join(lines)
    md = format_entry(text, kind, tags, "09:05")
    parsed = parse_entries("# 2026-01-01\n\n" + md)
    assert len(parsed) == 1
    e = parsed[0]
    assert e.text == "\n".join(ln.strip() for ln in lines)
    assert e.type == kind
    assert list(e.tags) == tags
    assert e.time == "09:05"
    assert e.line == 3


def test_format_matches_design() -> None:
    md = format_entry("Use Valkey instead of Redis for the cache.", "decision", ["infra"], "14:32")
    assert md == "- 14:32 [decision] Use Valkey instead of Redis for the cache. #infra\n"


def test_bad_type_and_tag_and_empty() -> None:
    with pytest.raises(BadInput):
        format_entry("x", "two words")
    with pytest.raises(BadInput):
        format_entry("x", None, ["has space"])
    with pytest.raises(BadInput):
        format_entry("  \n ")


def test_fact_key_ignores_case_and_spacing() -> None:
    assert fact_key("Use  Valkey.") == fact_key("use valkey")
    assert fact_key("use valkey") != fact_key("use redis")


def test_append_adds_missing_newline(tmp_path: Path) -> None:
    target = tmp_path / "m" / "f.md"
    target.parent.mkdir()
    target.write_text("hand written without newline")
    with locked_append(target, within=(tmp_path,)) as fd:
        append_text(fd, target, "- 10:00 fact\n")
    assert target.read_text() == "hand written without newline\n- 10:00 fact\n"


@pytest.mark.parametrize(
    ("passage", "plain"),
    [
        ("- 10:00 [decision] Use Valkey. #cache #infra", "decision: Use Valkey."),
        ("- 09:12 Standup moves to 10. #team", "Standup moves to 10."),
        (
            "* [gotcha] Retries double-charge\n  unless keyed.",
            "gotcha: Retries double-charge\n  unless keyed.",
        ),
        ("- 11:00 Issue #42 is fixed", "Issue #42 is fixed"),
        ("Not an entry: a paragraph.", "Not an entry: a paragraph."),
    ],
)
def test_plain_entry_keeps_kind_and_words(passage: str, plain: str) -> None:
    """What an entry is embedded as on its own (recall, entry-level quotes)."""
    from memcli.notes.entryparse import plain_entry

    assert plain_entry(passage) == plain
