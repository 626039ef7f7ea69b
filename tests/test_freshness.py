"""index.freshness = "recent": a search checks the folders and the files changed last, not
every file; what it sees, and the trade-off it makes."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.conftest import Cli


def found(cli: Cli, query: str) -> str:
    r = cli("search", query, "--json")
    return "\n".join(h["snippet"] for h in r.json()["results"]) if r.exit_code == 0 else ""


def age(path: Path, seconds: float) -> None:
    """Set a file's (and so what the index records of it) times ``seconds`` in the past."""
    t = time.time() - seconds
    os.utime(path, (t, t))


def settle(cli: Cli, workspace: Path) -> None:
    """Index, with every file and folder older than the racy window, and stamp the folders."""
    for p in sorted((workspace / "memory").rglob("*")):
        age(p, 3600)
    age(workspace / "memory", 3600)
    assert cli("index").exit_code == 0
    assert cli("search", "anything at all", "--json").exit_code in (0, 1)  # stamps the folders


def test_recent_mode_sees_appends_new_files_and_removals(cli: Cli, workspace: Path) -> None:
    assert cli("config", "set", "index.freshness", "recent").exit_code == 0
    for n in range(5):
        (workspace / "memory" / f"2026-01-0{n + 1}.md").write_text(f"- Fact number {n}.\n")
    settle(cli, workspace)
    latest = workspace / "memory" / "2026-01-05.md"
    with latest.open("a") as f:
        f.write("- Appended to the newest file: kestrel.\n")
    assert "kestrel" in found(cli, "kestrel")
    (workspace / "memory" / "fresh.md").write_text("- A new file about ospreys.\n")
    assert "ospreys" in found(cli, "ospreys")
    (workspace / "memory" / "2026-01-01.md").unlink()
    assert "Fact number 0" not in found(cli, "fact number")


def test_recent_mode_misses_an_old_file_rewritten_in_place_until_index(
    cli: Cli, workspace: Path
) -> None:
    assert cli("config", "set", "index.freshness", "recent").exit_code == 0
    for n in range(70):  # more than the 64 files checked by their stat
        (workspace / "memory" / f"note-{n:02d}.md").write_text(f"- Note {n} about nothing.\n")
    for n in range(70):
        age(workspace / "memory" / f"note-{n:02d}.md", 7200 - n * 10)  # note-00 the oldest
    age(workspace / "memory" / "MEMORY.md", 7300)
    settle_folders = workspace / "memory"
    age(settle_folders, 3600)
    assert cli("index").exit_code == 0
    cli("search", "anything", "--json")
    oldest = workspace / "memory" / "note-00.md"
    with oldest.open("a") as f:  # in place: the folder's time does not change
        f.write("- Pelicans nest here.\n")
    age(oldest, 7000)
    assert "Pelicans" not in found(cli, "pelicans")  # the trade-off
    assert cli("config", "set", "index.freshness", "full").exit_code == 0
    assert "Pelicans" in found(cli, "pelicans")  # a full check finds it
