"""One date grammar for every --since, --until and --expires (memcli.notes.dates)."""

from __future__ import annotations

import subprocess
import time
from datetime import date, timedelta
from pathlib import Path

import pytest

from memcli.notes.dates import GRAMMAR, parse_day
from tests.conftest import Cli
from tests.devtools import ROOT

TODAY = date(2026, 12, 1)
FORMS = ["2026-11-20", "today", "yesterday", "7d", "2w", "1m", "2 days ago", "a week ago",
         "last week", "in 3 weeks", "tomorrow", "1y"]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "back", "ahead"),
    [
        ("2026-11-20", "2026-11-20", "2026-11-20"),
        ("yesterday", "2026-11-30", "2026-11-30"),
        ("7d", "2026-11-24", "2026-12-08"),
        ("2 days ago", "2026-11-29", "2026-11-29"),
        ("Two  Weeks ago", "2026-11-17", "2026-11-17"),
        ("in 3 weeks", "2026-12-22", "2026-12-22"),
        ("last week", "2026-11-24", "2026-11-24"),
        ("a month ago", "2026-11-01", "2026-11-01"),
        ("30d", "2026-11-01", "2026-12-31"),
    ],
)
def test_the_grammar(text: str, back: str, ahead: str) -> None:
    assert str(parse_day(text, TODAY)) == back
    assert str(parse_day(text, TODAY, ahead=True)) == ahead


@pytest.mark.parametrize("text", ["", "soon", "last tuesday", "7 dayz", "d", "99999999d", "2 2 d"])
def test_anything_else_is_refused(text: str) -> None:
    assert parse_day(text, TODAY) is None


def test_linear_in_the_text() -> None:
    start = time.perf_counter()
    for text in ("1" * 200_000 + "x", "a " * 100_000 + "ago", "in " + "9" * 100_000):
        assert parse_day(text, TODAY) is None
    assert time.perf_counter() - start < 1.0


def _dated(workspace: Path, cli: Cli) -> None:
    today = date.today()
    for back in (1, 20):
        day = (today - timedelta(days=back)).isoformat()
        (workspace / "memory" / f"{day}.md").write_text(f"# {day}\n\n- rollout note {back}\n")
    assert cli("index").exit_code == 0


@pytest.mark.parametrize("since", ["7d", "yesterday", "2 days ago", "1w", "last week"])
def test_search_since_takes_the_grammar(cli: Cli, workspace: Path, since: str) -> None:
    _dated(workspace, cli)
    r = cli("search", "--json", "--since", since, "rollout note")
    assert r.exit_code == 0, r.stderr
    assert [h["snippet"] for h in r.json()["results"]] == ["- rollout note 1"]
    until = parse_day(since, date.today())
    assert until is not None
    r = cli("search", "--json", "--until", since, "rollout note")
    wanted = {f"- rollout note {b}" for b in (1, 20) if date.today() - timedelta(days=b) <= until}
    assert {h["snippet"] for h in r.json()["results"]} == wanted


@pytest.mark.parametrize("form", FORMS)
def test_every_date_flag_takes_every_form(cli: Cli, workspace: Path, form: str) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    assert cli("add", "--expires", form, "a fact").exit_code == 0
    subprocess.run(["git", "-C", str(workspace), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(workspace), "commit", "-qm", "m"], check=True)
    for args in (
        ("search", "--since", form, "fact"),
        ("search", "--until", form, "fact"),
        ("diff", "--since", form),
        ("log", "--since", form),
    ):
        r = cli(*args)
        assert r.exit_code in (0, 1), (args, r.stderr)  # 1: nothing in that window


def test_expires_counts_ahead(cli: Cli, workspace: Path) -> None:
    added = cli("add", "--json", "--expires", "in 2 weeks", "The staging cluster is frozen.")
    assert added.exit_code == 0, added.stderr
    text = (workspace / added.json()["path"]).read_text()
    assert f"expires {(date.today() + timedelta(days=14)).isoformat()}" in text


def test_one_error_names_the_grammar(cli: Cli, workspace: Path) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    subprocess.run(["git", "-C", str(workspace), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(workspace), "commit", "-qm", "m"], check=True)
    for args in (("search", "--since", "soon", "x"), ("diff", "--since", "soon"),
                 ("add", "--expires", "soon", "x")):  # fmt: skip
        r = cli(*args)
        assert r.exit_code == 2 and GRAMMAR in " ".join(r.stderr.split()), (args, r.stderr)


def test_documented_once() -> None:
    page = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    section = page[page.index("## Dates") :]
    for form in ("2026-11-20", "yesterday", "7d", "2 days ago", "in 3 weeks", "last week"):
        assert f"`{form}" in section, form
