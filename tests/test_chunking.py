"""Chunking invariants (Hypothesis) and Markdown structure."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcli.index.chunking import chunk_markdown, front_matter_date
from memcli.notes.lines import split_lines

LINE = st.one_of(
    st.just(""),
    st.just("# Title"),
    st.just("## Sub section"),
    st.just("```"),
    st.just("- 10:00 [decision] use valkey #infra"),
    st.just("  continued detail"),
    st.just("1. first"),
    st.just("| a | b |"),
    st.just("---"),
    st.text(
        alphabet=st.characters(
            blacklist_categories=("Cs",),  # type: ignore[arg-type]
            blacklist_characters="\n\r",
        ),
        max_size=80,
    ),
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(LINE, max_size=60), st.integers(min_value=1, max_value=600))
def test_every_nonblank_line_is_in_exactly_one_chunk(lines: list[str], target: int) -> None:
    text = "\n".join(lines)
    chunks = chunk_markdown(text, target)
    numbered = split_lines(text)
    covered: list[int] = []
    prev_end = 0
    for c in chunks:
        assert 1 <= c.start_line <= c.end_line <= len(numbered)
        assert c.start_line > prev_end  # ordered, no overlap
        prev_end = c.end_line
        assert c.text == "\n".join(numbered[c.start_line - 1 : c.end_line])
        covered.extend(range(c.start_line, c.end_line + 1))
    nonblank = {i + 1 for i, ln in enumerate(numbered) if ln.strip()}
    assert nonblank <= set(covered)


@given(st.text(alphabet=" \n\t", max_size=40))
def test_blank_file_has_no_chunks(text: str) -> None:
    assert chunk_markdown(text) == []


def test_headings_make_breadcrumbs_and_open_their_section() -> None:
    text = "# Project\n\nIntro.\n\n## Cache\n\n- uses valkey\n- ttl 30m\n\n## DB\n\nPostgres 16.\n"
    chunks = chunk_markdown(text, 320)
    by_heading = {c.heading: c for c in chunks}
    assert by_heading["Project > Cache"].text.startswith("## Cache")
    assert "ttl 30m" in by_heading["Project > Cache"].text
    assert by_heading["Project > DB"].start_line == 10


def test_list_items_are_not_split_and_pack_to_target() -> None:
    items = [f"- item {i} " + "word " * 10 for i in range(20)]
    chunks = chunk_markdown("\n".join(items), 200)
    assert len(chunks) > 1
    for c in chunks:
        assert all(line.startswith("- item") for line in c.text.splitlines())


def test_code_fence_is_one_block() -> None:
    text = "```python\n# not a heading\nx = 1\n```\nafter"
    chunks = chunk_markdown(text, 10_000)
    assert chunks[0].heading == ""
    assert "# not a heading" in chunks[0].text


def test_front_matter_date() -> None:
    assert front_matter_date("---\ntitle: x\ndate: 2024-03-05\n---\nbody") == "2024-03-05"
    assert front_matter_date("no front matter\ndate: 2024-03-05") is None


def test_crlf_lines_numbered_like_lf() -> None:
    chunks = chunk_markdown("a\r\n\r\nb\r\n", 1)
    assert [(c.start_line, c.text) for c in chunks] == [(1, "a"), (3, "b")]
