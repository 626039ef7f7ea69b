"""Every citation memcli prints is a location `get` reads back, in the CLI and over MCP."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli

FACTS = [
    "Use Valkey instead of Redis for the session cache.",
    "Postgres major upgrades need a maintenance window on Sunday.",
    "The session cache is flushed at every deploy.",
    "Alice owns the billing service.",
]
NOTES = "# Notes\n\nPlain prose about the session cache, line three.\n\nLine five.\nLine six.\n"


@pytest.fixture
def cited(cli: Cli, workspace: Path) -> Path:
    for fact in FACTS:
        assert cli("add", "--to", "facts.md", fact).exit_code == 0
    (workspace / "memory" / "notes.md").write_text(NOTES)
    assert cli("index").exit_code == 0
    return workspace


def lines_of(root: Path, citation: str) -> list[str]:
    """The lines a citation names, read from the file directly."""
    m = re.fullmatch(r"(.+?):(\d+)(?:-(\d+)|:(\d+))?", citation)
    assert m, citation
    lines = (root / m.group(1)).read_text().splitlines()
    start = int(m.group(2))
    end = int(m.group(3)) if m.group(3) else start + int(m.group(4) or 1) - 1
    return lines[start - 1 : end]


def cli_citations(cli: Cli) -> set[str]:
    """What search (text, JSON, context block) and add print as citations."""
    out: set[str] = set()
    text = cli("search", "--plain", "session cache").stdout
    out |= set(re.findall(r"^(\S+:\d+-\d+)\s", text, re.M))
    for hit in cli("search", "--json", "session cache").json()["results"]:
        out.add(f"{hit['path']}:{hit['start_line']}-{hit['end_line']}")
    block = cli("search", "--format", "context", "session cache").stdout
    quoted = re.findall(r"^`([^`]+)`", block, re.M)
    assert quoted, block
    out |= {f"`{q}`" for q in quoted}  # pasted as the block prints them, backticks and all
    added = cli("add", "--to", "facts.md", "The CDN is Fastly.").stdout
    out |= set(re.findall(r"Added to (\S+:\d+)", added))
    return out


def test_every_cli_citation_reads_back_with_get(cited: Path, cli: Cli) -> None:
    citations = cli_citations(cli)
    assert any(re.search(r":\d+-\d+`?$", c) for c in citations)
    assert any(re.search(r"\.md:\d+$", c) for c in citations)
    for citation in sorted(citations):
        got = cli("get", citation)
        assert got.exit_code == 0, (citation, got.stderr)
        assert got.stdout.splitlines() == lines_of(cited, citation.strip("`")), citation
        data = cli("get", "--json", citation).json()
        assert data["text"].splitlines() == lines_of(cited, citation.strip("`"))


def test_get_forms(cited: Path, cli: Cli) -> None:
    notes = NOTES.splitlines()
    assert cli("get", "memory/notes.md:3").stdout.splitlines() == [notes[2]]  # one line
    assert cli("get", "memory/notes.md:3-5").stdout.splitlines() == notes[2:5]
    assert cli("get", "memory/notes.md:3:2").stdout.splitlines() == notes[2:4]
    assert cli("get", "memory/notes.md").stdout.splitlines() == notes
    assert cli("get", "memory/notes.md:5-99").stdout.splitlines() == notes[4:]  # cut at the end
    got = cli("get", "--json", "memory/notes.md:6-6").json()
    assert (got["start_line"], got["end_line"], got["text"]) == (6, 6, "Line six.")
    for missing in ("memory/nowhere.md:3-4", "memory/nowhere.md:3-x"):  # still no such file
        got = cli("get", missing)
        assert got.exit_code == 2 and "no such file: memory/nowhere.md" in got.stderr


@pytest.mark.parametrize(
    "location",
    ["memory/notes.md:3-x", "memory/notes.md:x", "memory/notes.md:5-3", "memory/notes.md:3-"],
)
def test_a_bad_location_has_its_own_error(cited: Path, cli: Cli, location: str) -> None:
    got = cli("get", location)
    assert got.exit_code == 2
    assert "invalid location" in got.stderr and "no such file" not in got.stderr, got.stderr


@pytest.mark.slow
def test_every_mcp_citation_reads_back_with_get(cited: Path, cli: Cli) -> None:
    pytest.importorskip("mcp")
    from tests.test_mcp import session, text_of

    async def body(s: Any) -> dict[str, Any]:
        texts = {
            "search": text_of(await s.call_tool("search", {"query": "session cache"})),
            "context": text_of(await s.call_tool("context", {"query": "session cache"})),
            "add": text_of(await s.call_tool("add", {"text": "Deploys freeze on Fridays."})),
        }
        found = set()
        for text in texts.values():
            found |= set(re.findall(r"`(memory/[^`\s]+:\d+(?:-\d+)?)`", text))
            found |= set(re.findall(r" at (memory/\S+:\d+)$", text, re.M))
        assert any("-" in c.rsplit(":", 1)[1] for c in found), texts
        assert any("-" not in c.rsplit(":", 1)[1] for c in found), texts
        got = {c: await s.call_tool("get", {"citation": c}) for c in found}
        bad = await s.call_tool("get", {"citation": "memory/notes.md:4-2"})
        return {"got": got, "bad": bad}

    res = session(cited, body)
    for citation, result in res["got"].items():
        assert not result.is_error, (citation, text_of(result))
        text = text_of(result)
        wanted = lines_of(cited, citation)
        for line in wanted:
            if line.strip():
                assert line.strip() in text, (citation, line, text)
        shown = re.search(r"`(memory/\S+:\d+-\d+)`", text)
        assert shown, text
        assert lines_of(cited, shown.group(1)) == wanted  # exactly the lines cited
        assert cli("get", citation).stdout.splitlines() == wanted
    assert res["bad"].is_error
    assert "invalid location" in text_of(res["bad"])
