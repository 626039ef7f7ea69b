"""Scored results on a terminal: ``search`` as a Rich table with the matched words highlighted,
``status`` as a two-column table; piped output, ``--format text`` and ``--json`` keep the plain
forms byte for byte, and NO_COLOR keeps the tables without colour (no-color.org)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from memcli.cli import render, search_text
from memcli.cli.output import Output
from memcli.memory import Memory
from tests.test_conventions import SGR, _imported, memcli, on_terminal

LONG = (
    "Use Valkey instead of Redis for the session cache; sessions expire after thirty minutes"
    " and the cache is shared by every API node in the cluster behind the load balancer."
)


@pytest.fixture
def ws(workspace: Path) -> Path:
    for args in (
        ("add", "--type", "decision", LONG),
        ("add", "Deploys happen on Fridays after the review."),
        ("add", "--evergreen", "The cache warms up in two minutes."),
    ):
        assert memcli(workspace, *args).returncode == 0
    return workspace


def terminal(width: int) -> tuple[Output, io.StringIO]:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=width, color_system="truecolor")
    return Output(console=console), buf


def plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def search(root: Path, query: str) -> Any:
    with Memory.open(root) as mem:
        return mem.search(query, mem.search_options())


@pytest.mark.slow
@pytest.mark.parametrize("width", [80, 160])
def test_search_on_a_terminal_is_a_table_fitting_the_width(ws: Path, width: int) -> None:
    result = search(ws, "session cache")
    assert len(result.hits) >= 2
    out, buf = terminal(width)
    search_text.hits(out, result.view(), table=True)
    drawn = buf.getvalue()
    lines = plain(drawn).splitlines()
    assert lines[0].startswith("┏") and all(len(ln) <= width for ln in lines), lines
    header = lines[1]
    for column in ("#", "score", "citation · type · date", "snippet"):
        assert column in header
    first = result.hits[0]
    body = "\n".join(lines)
    assert f"{first.path}:{first.start_line}-{first.end_line}" in body
    assert "decision · " in body and f"{first.score:.3f}" in body
    assert re.search(r"│\s+1 │", body) and re.search(r"│\s+2 │", body)
    # the snippet wraps inside its column: every word of the long fact is there, and at 80
    # columns it takes several lines
    words = " ".join(re.findall(r"│ ([^│]*?)\s*│$", body, re.MULTILINE))
    assert "load balancer" in " ".join(words.split())
    if width == 80:
        assert sum(1 for ln in lines if "│" in ln) > 6
    # matched words are highlighted (bold yellow), others are not
    assert re.search(r"\x1b\[1;33mcache\x1b\[0m", drawn)
    assert re.search(r"\x1b\[1;33msessions?\x1b\[0m", drawn)
    assert not re.search(r"\x1b\[1;33mValkey", drawn)


def test_search_table_never_reads_memory_text_as_markup(workspace: Path) -> None:
    # written by hand, not by add (which strips control characters)
    (workspace / "memory" / "hand.md").write_text(
        "- Cache rule: [bold red]not markup[/] \x1b]0;title\x07 end\n"
    )
    out, buf = terminal(120)
    search_text.hits(out, search(workspace, "cache rule").view(), table=True)
    drawn = buf.getvalue()
    assert "[bold red]not markup[/]" in plain(drawn)
    assert "\x07" not in drawn and "\x1b]" not in drawn
    assert "\\x1b]0;title\\x07" in plain(drawn)


def _expected_plain(payload: dict[str, Any]) -> str:
    """Today's stable plain form, built from the JSON of the same search."""
    out = []
    for r in payload["results"]:
        meta = ", ".join(x for x in (r["source"], r["date"] or "evergreen", *r["flags"]) if x)
        out.append(f"{r['path']}:{r['start_line']}-{r['end_line']}  {r['score']:.3f}  ({meta})")
        out.extend(f"  {line}" for line in r["snippet"].splitlines())
        out.append("")
    return "\n".join(out) + "\n"


@pytest.mark.slow
def test_piped_search_keeps_the_plain_form_byte_for_byte(ws: Path) -> None:
    payload = json.loads(memcli(ws, "search", "--json", "session cache").stdout)
    piped = memcli(ws, "search", "session cache", env={"TERM": "xterm-256color"})
    assert piped.returncode == 0
    assert piped.stdout.decode() == _expected_plain(payload)
    as_text = memcli(ws, "search", "--format", "text", "session cache")
    assert as_text.stdout == piped.stdout


@pytest.mark.slow
def test_terminal_with_format_text_keeps_the_plain_form(ws: Path) -> None:
    piped = memcli(ws, "search", "session cache").stdout
    code, out, _ = on_terminal(ws, "search", "--format", "text", "session cache")
    assert code == 0
    shown = out.replace(b"\r\n", b"\n")
    assert plain(shown.decode()).encode() == piped  # styled header lines, the same text
    assert "┏".encode() not in shown


@pytest.mark.slow
@pytest.mark.parametrize("how", ["NO_COLOR", "--no-color"])
def test_no_color_takes_the_colour_away_not_the_table(ws: Path, how: str) -> None:
    """no-color.org: NO_COLOR means no colour; the layout stays what the terminal gets."""
    env = {"NO_COLOR": "1"} if how == "NO_COLOR" else {}
    flags = ["--no-color"] if how == "--no-color" else []
    for args in (["search", "session cache"], ["status"]):
        code, out, _ = on_terminal(ws, *flags, *args, env=env)
        assert code == 0 and not SGR.search(out), (args, out[:200])
        _, styled, _ = on_terminal(ws, *args)
        assert out.replace(b"\r\n", b"\n") == plain(styled.decode()).encode().replace(
            b"\r\n", b"\n"
        )


@pytest.mark.slow
def test_search_on_a_real_terminal_draws_the_table(ws: Path) -> None:
    code, out, _ = on_terminal(ws, "search", "session cache")
    assert code == 0 and SGR.search(out)
    text = plain(out.decode())
    assert "┏" in text and "citation · type · date" in text
    lines = [ln for ln in text.replace("\r\n", "\n").splitlines() if ln.strip()]
    assert all(len(ln) <= 120 for ln in lines)  # on_terminal's COLUMNS


@pytest.mark.slow
def test_piped_and_json_search_do_not_load_rich(ws: Path) -> None:
    assert "rich" not in _imported(ws, "search", "session cache")
    assert "rich" not in _imported(ws, "search", "--json", "session cache")


@pytest.mark.slow
def test_status_on_a_terminal_is_a_two_column_table_without_a_header_row(ws: Path) -> None:
    with Memory.open(ws) as mem:
        info = mem.status()
    out, buf = terminal(100)
    render.status(out, info)
    lines = plain(buf.getvalue()).splitlines()
    assert lines[0].strip() == "memcli status"
    assert lines[1].startswith("┏") or lines[1].startswith("┌")
    assert "workspace" in lines[2], lines[:4]  # the first row is data, not an empty header
    assert all(ln.count("│") in (0, 3) for ln in lines[2:] if "workspace" in ln or "files" in ln)
    assert not any(re.fullmatch(r"[┃│ ]+", ln) for ln in lines), "an empty row"
    body = "\n".join(lines)
    assert "off (keyword search only)" in body and "None" not in body and "{" not in body


@pytest.mark.slow
def test_status_piped_is_plain_and_a_table_on_a_terminal(ws: Path) -> None:
    piped = memcli(ws, "status")
    assert piped.returncode == 0 and piped.stdout.startswith(b"workspace: ")
    code, out, _ = on_terminal(ws, "status")
    assert code == 0 and "┌".encode() in out and b"workspace: " not in out


@pytest.mark.slow
def test_at_80_columns_the_snippet_gets_the_room(ws: Path) -> None:
    """A fact wraps every few words in a 27-column snippet: at 80 columns the citation goes
    above the snippet, which takes all the width the rank and score leave."""
    result = search(ws, "session cache")
    out, buf = terminal(80)
    search_text.hits(out, result.view(), table=True)
    lines = plain(buf.getvalue()).splitlines()
    cells = [ln.rsplit("│", 2)[1] for ln in lines if ln.count("│") >= 3]
    assert max(len(c) for c in cells) >= 60, "\n".join(lines)
    fact_lines = [c for c in cells if any(w in c for w in ("Valkey", "thirty", "balancer"))]
    assert len(fact_lines) <= 3, "\n".join(lines)
    first = result.hits[0]
    assert f"{first.path}:{first.start_line}-{first.end_line}" in "\n".join(lines)
