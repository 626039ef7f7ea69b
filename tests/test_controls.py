"""Terminal escapes, control characters and bidi overrides never reach the Markdown."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from memcli.notes.controls import strip_controls
from memcli.notes.entries import format_entry
from tests.conftest import Cli

HOSTILE = [
    "\x1b[31mred\x1b[0m text",  # colours
    "\x1b]52;c;ZWNobyBwd25lZA==\x07copied",  # OSC 52: write the clipboard
    "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\",  # OSC 8 hyperlink
    "\x1b]0;new title\x07title",
    "\x1bPdevice control\x1b\\dcs",
    "access \u202eexe.txt\u202c granted",  # right-to-left override
    "bell\x07 and backspace\x08 and null\x00",
    "C1 \x9b31m controls \x85",
]


def test_hostile_text_is_cleaned_and_the_words_kept() -> None:
    cleaned = [strip_controls(t) for t in HOSTILE]
    assert cleaned == [
        "red text",
        "copied",
        "link",
        "title",
        "dcs",
        "access exe.txt granted",
        "bell and backspace and null",
        "C1  controls ",
    ]


@given(st.text())
def test_nothing_that_acts_on_a_terminal_survives(text: str) -> None:
    out = strip_controls(text)
    assert "\x1b" not in out and "\x9b" not in out
    assert all(ch in "\t\n" or ch.isprintable() or ch == "\r" for ch in out if ord(ch) < 0xA0)
    assert not any(ch in out for ch in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
    assert strip_controls(out) == out


def test_plain_text_is_untouched() -> None:
    text = "Use Valkey (not Redis) for the session cache: 30 min TTL, café, 缓存, ключ."
    assert strip_controls(text) == text
    assert strip_controls("a\tb\nc") == "a\tb\nc"


def test_format_entry_strips_before_writing() -> None:
    entry = format_entry("\x1b]52;c;aGk=\x07Rotate the \x1b[1mS3\x1b[0m token", "incident")
    assert entry == "- [incident] Rotate the S3 token\n"


def test_add_and_the_file_hold_no_escape(cli: Cli, workspace: Path) -> None:
    run = cli("add", "--json", "Deploys \x1b[31mfreeze\x1b[0m on \u202eFriday\u202c")
    assert run.exit_code == 0
    written = "".join(p.read_text() for p in (workspace / "memory").rglob("*.md"))
    assert "\x1b" not in written and "\u202e" not in written
    assert "Deploys freeze on Friday" in written
    assert "Deploys freeze on Friday" in run.json()["entry"]
