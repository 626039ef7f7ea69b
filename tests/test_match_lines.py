"""A hit points at the line that answers: results never share a line, and the JSON says
which lines of a snippet matched (``match_line``, ``match_lines``); `get` reads that line."""

from __future__ import annotations

from pathlib import Path

from memcli.memory import Memory
from memcli.search.snippets import FileText, assemble
from tests.conftest import Cli

ITEMS = [f"- fact number {n} about topic {n % 7}" for n in range(30)]


def _items_file(workspace: Path, cli: Cli) -> str:
    (workspace / "memory" / "items.md").write_text("# Items\n\n" + "\n".join(ITEMS) + "\n")
    assert cli("index").exit_code == 0
    return "memory/items.md"


def test_results_never_share_a_line(cli: Cli, workspace: Path) -> None:
    """The real passages of a real index, in a rank order where a later match grows the
    first result into the second one's lines (12-23 and 19-22 in a real search)."""
    path = _items_file(workspace, cli)
    with Memory.open(workspace) as mem:
        ft = FileText(mem.store)
        ps = ft.passages(path)
        order = [18, 14, 16, 20, 22, 6, 24, 12, 3]
        spans = assemble(ft, ((ps[i], i) for i in order), 8, 1, 600, 500)
        taken = [(ps[s.lo].start, ps[s.hi].end) for s in spans]
    lines = [n for a, b in taken for n in range(a, b + 1)]
    assert len(lines) == len(set(lines)), taken
    shown = {n for a, b in taken for n in range(a, b + 1)}
    for i in order:  # every match is still shown, by one result or another
        assert ps[i].start in shown


def test_json_says_which_line_matched_and_get_reads_it(cli: Cli, workspace: Path) -> None:
    notes = [
        "- The deploy pipeline runs on GitHub Actions.",
        "- Alice reviews database migrations.",
        "- The session cache lives in Valkey since March.",
        "- Logs are shipped to Loki.",
        "- On-call rotates every Monday.",
    ]
    (workspace / "memory" / "notes.md").write_text("# Notes\n\n" + "\n".join(notes) + "\n")
    hit = cli("search", "--json", "session cache valkey").json()["results"][0]
    assert hit["start_line"] < 5 < hit["end_line"]  # context on both sides
    assert hit["match_line"] == 5 and hit["match_lines"] == [5]
    got = cli("get", f"{hit['path']}:{hit['match_line']}").stdout
    assert got == notes[2] + "\n"
    for line in cli("search", "--jsonl", "session cache valkey").jsonl():
        assert line["match_line"] in line["match_lines"]
        assert line["start_line"] <= line["match_line"] <= line["end_line"]


def test_a_merged_result_lists_every_matched_line(cli: Cli, workspace: Path) -> None:
    notes = [
        "- Backups run nightly at 02:00.",
        "- The backups are kept for 30 days.",
        "- Nobody owns the coffee machine.",
    ]
    (workspace / "memory" / "ops.md").write_text("# Ops\n\n" + "\n".join(notes) + "\n")
    [hit] = cli("search", "--json", "backups").json()["results"]
    assert hit["match_lines"] == [3, 4] and hit["match_line"] in (3, 4)
    assert hit["end_line"] == 5  # the line after, as context, not a match


def test_a_result_stays_near_its_matches(cli: Cli, workspace: Path) -> None:
    """Thirty neighbouring matches used to make one result of all thirty lines: a result
    now grows to at most ``MAX_LINES`` lines, and the matches past it open results of their
    own, next to it, sharing no line."""
    from memcli.search.snippets import MAX_LINES

    path = _items_file(workspace, cli)
    hits = cli("search", "--json", "-n", "4", "fact number").json()["results"]
    assert [h["path"] for h in hits] == [path] * 4
    spans = [(h["start_line"], h["end_line"]) for h in hits]
    assert all(b - a + 1 <= MAX_LINES for a, b in spans), spans
    lines = [n for a, b in spans for n in range(a, b + 1)]
    assert len(lines) == len(set(lines)), spans
    for h in hits:
        assert h["start_line"] <= h["match_line"] <= h["end_line"]
        assert all(h["start_line"] <= n <= h["end_line"] for n in h["match_lines"])
