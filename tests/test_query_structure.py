"""Queries that carry structure: time expressions become a boosting date window, quoted
phrases match as phrases, proper names can weigh more."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from memcli.search.query import parse_query
from memcli.search.timewords import find_window, may_hold_time
from tests.conftest import Cli

ANCHOR = date(2023, 10, 20)


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("what did Maria do in December 2023", "2023-12-01", "2023-12-31"),
        ("When did Melanie go camping in June?", "2023-06-01", "2023-06-30"),
        ("in November", "2022-11-01", "2022-11-30"),  # the latest November before the anchor
        ("on October 13, 2023", "2023-10-10", "2023-10-16"),
        ("on 1 February, 2023", "2023-01-29", "2023-02-04"),
        ("the 2023-05-08 meeting", "2023-05-05", "2023-05-11"),
        ("last week", "2023-10-06", "2023-10-19"),
        ("last month", "2023-09-01", "2023-09-30"),
        ("last year", "2022-01-01", "2022-12-31"),
        ("two months ago", "2023-08-06", "2023-09-05"),
        ("3 days ago", "2023-10-16", "2023-10-18"),
        ("yesterday", "2023-10-18", "2023-10-20"),
        ("in 2022", "2022-01-01", "2022-12-31"),
        ("Feb 2024", "2024-02-01", "2024-02-29"),
    ],
)
def test_time_expressions_become_windows(query: str, start: str, end: str) -> None:
    assert may_hold_time(query)
    window = find_window(query, ANCHOR)
    assert window is not None
    assert (window.start.isoformat(), window.end.isoformat()) == (start, end)


@pytest.mark.parametrize("query", ["what cache do we use", "this is it", "February 30, 2023"])
def test_no_window_without_a_time_expression(query: str) -> None:
    assert find_window(query, ANCHOR) is None


def _dated(ws: Path, day: str, text: str) -> None:
    (ws / "memory" / f"{day}.md").write_text(f"# {day}\n\n- {text}\n")


@pytest.mark.slow
def test_a_time_expression_boosts_and_does_not_filter(cli: Cli, workspace: Path) -> None:
    _dated(workspace, "2023-05-10", "the cache cluster was restarted after the outage")
    _dated(workspace, "2023-08-10", "the cache cluster was restarted after the cache outage")
    _dated(workspace, "2023-09-01", "an unrelated note about lunch")
    plain = cli("search", "--json", "--no-decay", "cache outage").json()["results"]
    assert plain[0]["path"] == "memory/2023-08-10.md"  # more matches: first without a window
    r = cli("search", "--json", "--no-decay", "--explain", "cache outage in May 2023").json()
    paths = [h["path"] for h in r["results"]]
    assert paths[:2] == ["memory/2023-05-10.md", "memory/2023-08-10.md"]  # boosted, not filtered
    top = r["results"][0]
    assert top["scores"]["time"] == 0.5
    assert top["explain"]["time_window"] == {
        "from": "2023-05-01",
        "to": "2023-05-31",
        "words": "may 2023",
    }
    relative = cli("search", "--json", "--no-decay", "cache outage four months ago").json()
    assert relative["results"][0]["path"] == "memory/2023-05-10.md"  # counted from 2023-09-01
    assert cli("config", "set", "search.time_boost", "0").exit_code == 0
    off = cli("search", "--json", "--no-decay", "cache outage in May 2023").json()["results"]
    assert off[0]["path"] == "memory/2023-08-10.md"


def test_a_quoted_phrase_matches_as_a_phrase(cli: Cli, workspace: Path) -> None:
    (workspace / "memory" / "a.md").write_text("- the cache of the session is in Valkey\n")
    (workspace / "memory" / "b.md").write_text("- we moved the session cache to Valkey\n")
    assert cli("index").exit_code == 0
    loose = cli("search", "--json", "session cache").json()["results"]
    assert {h["path"] for h in loose} == {"memory/a.md", "memory/b.md"}
    quoted = cli("search", "--json", '"session cache"').json()["results"]
    assert [h["path"] for h in quoted] == ["memory/b.md"]
    mixed = cli("search", "--json", '"session cache" valkey').json()["results"]
    assert next(h["path"] for h in mixed) == "memory/b.md"  # the phrase ranks first


def test_capitalised_words_after_the_first_are_names() -> None:
    q = parse_query("What did Caroline say about the Valkey cluster")
    assert q.names == ("caroline", "valkey")
    assert parse_query("Valkey cluster").names == ()  # the first word: capital by grammar


@pytest.mark.slow
def test_name_weight_lifts_the_name(cli: Cli, workspace: Path) -> None:
    for i in range(6):  # the name is common here, 'hiking' rare
        (workspace / "memory" / f"n{i}.md").write_text(f"- Jolene called about note {i}\n")
    (workspace / "memory" / "h.md").write_text("- we went hiking\n")
    assert cli("index").exit_code == 0
    assert cli("config", "set", "search.name_weight", "1").exit_code == 0
    even = cli("search", "--json", "what about Jolene hiking").json()["results"]
    assert even[0]["path"] == "memory/h.md"  # the rarer word wins at equal weight
    assert cli("config", "set", "search.name_weight", "10").exit_code == 0
    named = cli("search", "--json", "what about Jolene hiking").json()["results"]
    assert named[0]["path"].startswith("memory/n")


def test_a_quoted_phrase_outranks_its_words_scattered_in_a_shorter_passage(
    cli: Cli, workspace: Path
) -> None:
    (workspace / "memory" / "notes.md").write_text(
        "- cache per session\n\n- we keep the session cache in the Valkey cluster for now\n"
    )
    assert cli("index").exit_code == 0
    r = cli("search", "--json", "--explain", "-n", "1", '"session cache"').json()["results"]
    ex = r[0]["explain"]
    assert ex["passage"] == [3, 3]  # the phrase's item, not the shorter scattered one
    assert ex["terms"]["matched"] == {'"session cache"': 1.0}
    loose = cli("search", "--json", "-n", "1", "--explain", "session cache").json()["results"]
    assert loose[0]["explain"]["terms"]["matched"] == {"session": 1.0, "cache": 1.0}


def test_an_identifier_counts_only_as_a_whole(cli: Cli, workspace: Path) -> None:
    (workspace / "memory" / "a.md").write_text("- ticket B 7742 and the CX team\n")
    (workspace / "memory" / "b.md").write_text(
        "- the incident ticket CX-7742-B was closed by ops\n"
    )
    assert cli("index").exit_code == 0
    r = cli("search", "--json", "--explain", "CX-7742-B").json()["results"]
    assert [h["path"] for h in r] == ["memory/b.md"]
    assert r[0]["explain"]["terms"]["matched"] == {'"cx 7742 b"': 1.0}


@pytest.mark.slow
def test_query_words_close_together_get_a_proximity_bonus(cli: Cli, workspace: Path) -> None:
    (workspace / "memory" / "a.md").write_text("- group members said they want support\n")
    (workspace / "memory" / "b.md").write_text("- she found a support group near her home\n")
    assert cli("index").exit_code == 0
    r = cli("search", "--json", "--explain", "which support group").json()["results"]
    assert r[0]["path"] == "memory/b.md"
    assert r[0]["explain"]["near"] == {"support group": 1}
    assert r[0]["scores"]["proximity"] > 0 and "proximity" not in r[1]["scores"]
    assert any("proximity" in step for step in r[0]["explain"]["steps"])
    text = cli("search", "--explain", "which support group")
    assert "near each other: support group x1" in text.stdout
    assert cli("config", "set", "search.proximity_weight", "0").exit_code == 0
    off = cli("search", "--json", "--explain", "which support group").json()["results"]
    assert all("proximity" not in h["scores"] for h in off)
    assert off[0]["path"] == "memory/a.md"  # without the bonus the shorter item wins


def test_question_framing_words_are_dropped() -> None:
    q = parse_query("What kind of books did Melanie mention, and how many?")
    assert q.terms == ("books", "melanie")
    assert parse_query("many things").terms == ("many", "things")  # nothing else: searched
