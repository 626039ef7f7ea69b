"""Snippets are bounded and a context block always holds something when a search found it:
one very long line in a memory file used to give a megabyte snippet, and a block with nothing
in it (exit 1) for a real hit."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcli.search.context import estimate_tokens
from memcli.search.snippets import ELLIPSIS, HARD_CAP_FACTOR, MAX_CHARS, clip
from tests.conftest import Cli


def _long_line(workspace: Path, before: int, after: int) -> None:
    line = "lorem ipsum " * before + "zebra crossing " + "dolor sit " * after
    (workspace / "memory" / "long.md").write_text(f"# Long\n\n{line}\n")


def test_a_single_long_line_gives_a_bounded_snippet(cli: Cli, workspace: Path) -> None:
    _long_line(workspace, before=50_000, after=50_000)  # a 1 MB line, the match in the middle
    hit = cli("search", "--json", "zebra").json()["results"][0]
    cap = HARD_CAP_FACTOR * MAX_CHARS
    assert len(hit["snippet"]) <= cap + 2  # two ellipses at most
    assert hit["snippet"].startswith(ELLIPSIS) and hit["snippet"].endswith(ELLIPSIS)
    assert "zebra crossing" in hit["snippet"]  # cut around the match, not from the start
    assert (hit["start_line"], hit["end_line"]) == (3, 3)


def test_a_snippet_within_the_cap_is_untouched(cli: Cli, workspace: Path) -> None:
    _long_line(workspace, before=20, after=20)
    hit = cli("search", "--json", "zebra").json()["results"][0]
    line = (workspace / "memory" / "long.md").read_text().splitlines()[2]
    assert hit["snippet"] == line and ELLIPSIS not in hit["snippet"]


def test_clip_keeps_the_match_near_either_end() -> None:
    text = "zebra " + "x" * 10_000
    assert clip(text, "zebra", 100).startswith("zebra")
    end = "y" * 10_000 + " zebra"
    cut = clip(end, "zebra", 100)
    assert cut.endswith("zebra") and cut.startswith(ELLIPSIS) and len(cut) == 401
    assert clip("short", "zebra", 100) == "short"


def test_context_always_holds_the_hit_within_the_budget(cli: Cli, workspace: Path) -> None:
    _long_line(workspace, before=2_000, after=2_000)
    for budget in (60, 100, 400):
        r = cli("search", "--format", "context", "--max-tokens", str(budget), "zebra")
        assert r.exit_code == 0, (budget, r.stderr)
        assert "`memory/long.md:3-3`" in r.stdout
        assert r.stdout.rstrip("\n").endswith(">>>") and ELLIPSIS in r.stdout
        assert estimate_tokens(r.stdout) <= budget


def test_a_budget_too_small_for_the_frame_still_says_so(cli: Cli, workspace: Path) -> None:
    _long_line(workspace, before=2_000, after=2_000)
    r = cli("search", "--format", "context", "--max-tokens", "10", "zebra")
    assert r.exit_code == 1 and r.stdout == ""
    assert "no result fits in 10 tokens" in r.stderr


@pytest.mark.parametrize(
    "unit",
    [
        "e\u0301",  # e + combining acute
        "\U0001f469\u200d\U0001f4bb",  # woman technologist (ZWJ sequence)
        "\U0001f44d\U0001f3fd",  # thumbs up, medium skin tone
        "\U0001f1eb\U0001f1f7",  # a flag: two regional indicators
        "\u1100\u1161\u11a8",  # a Hangul syllable written as jamo
        "\u0915\u094d\u0937",  # Devanagari conjunct (virama)
    ],
)
def test_a_cut_snippet_never_splits_what_reads_as_one_character(unit: str) -> None:
    cap = HARD_CAP_FACTOR * 10
    for offset in range(0, 7):
        text = "x" * offset + unit * (cap // len(unit) + 20) + " needle " + unit * 50
        out = clip(text, "needle", 10)
        body = out.strip(ELLIPSIS).lstrip("x")
        assert body.startswith(unit) or not body.strip(unit[0]), (offset, out[:20])
        inner = out.removeprefix(ELLIPSIS).removesuffix(ELLIPSIS)
        tail = inner.rstrip(ELLIPSIS)
        # the text kept ends on a whole unit (or in the plain ASCII around them)
        assert tail.endswith((unit, " ", "e", "x", "needle")) or tail[-1].isascii(), (
            offset,
            tail[-5:],
        )
