"""index.freshness: "recent" checks the folders and the files changed last, not every file;
"auto" (the default) compares every file in a small workspace and, past
index.full_check_files, runs the quick check with a full one at most index.full_check_secs
apart. What each sees, and the trade-off it makes."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

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


def old_notes(workspace: Path, n: int) -> Path:
    """``n`` notes written long ago (note-00 the oldest), indexed and settled; the oldest."""
    for i in range(n):
        (workspace / "memory" / f"note-{i:02d}.md").write_text(f"- Note {i} about nothing.\n")
    for i in range(n):
        age(workspace / "memory" / f"note-{i:02d}.md", 7200 - i * 10)
    age(workspace / "memory" / "MEMORY.md", 7300)
    age(workspace / "memory", 3600)
    return workspace / "memory" / "note-00.md"


def large_and_auto(cli: Cli, workspace: Path, full_check_secs: int) -> Path:
    """70 old notes, indexed, in a workspace "auto" counts as large (index.full_check_files
    10); the oldest note."""
    assert cli("config", "set", "index.full_check_files", "10").exit_code == 0
    assert cli("config", "set", "index.full_check_secs", str(full_check_secs)).exit_code == 0
    oldest = old_notes(workspace, 70)
    assert cli("index").exit_code == 0  # a whole sync: a full comparison, just now
    return oldest


def rewrite_in_place(path: Path, line: str) -> None:
    """Append to an old file without touching its folder, its time set back to the past."""
    with path.open("a") as f:
        f.write(line)
    age(path, 7500)  # older than the 64 files the quick check stats


@pytest.mark.slow
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


@pytest.mark.slow
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


def test_auto_is_the_default_and_compares_every_file_in_a_small_workspace(
    cli: Cli, workspace: Path
) -> None:
    assert cli("config", "get", "index.freshness").stdout.strip() == "auto"
    oldest = old_notes(workspace, 70)
    assert cli("index").exit_code == 0
    cli("search", "anything", "--json")
    rewrite_in_place(oldest, "- Herons fish here.\n")
    assert "Herons" in found(cli, "herons")  # 71 files: under index.full_check_files


@pytest.mark.slow
def test_auto_past_the_threshold_finds_an_in_place_rewrite_by_the_next_full_check(
    cli: Cli, workspace: Path
) -> None:
    oldest = large_and_auto(cli, workspace, full_check_secs=2)
    rewrite_in_place(oldest, "- Cormorants dry their wings.\n")
    assert "Cormorants" not in found(cli, "cormorants")  # the quick check: not seen yet
    time.sleep(2.1)  # index.full_check_secs later, a search compares every file again
    assert "Cormorants" in found(cli, "cormorants")
    rewrite_in_place(oldest, "- Grebes dive.\n")
    assert "Grebes" not in found(cli, "grebes")  # that full check was recorded: quick again
    (workspace / "memory" / "new.md").write_text("- A new file about avocets.\n")
    assert "avocets" in found(cli, "avocets")  # a new file changes its folder: seen at once


def test_auto_with_no_interval_compares_every_file_each_time(cli: Cli, workspace: Path) -> None:
    oldest = large_and_auto(cli, workspace, full_check_secs=0)
    rewrite_in_place(oldest, "- Ibises probe the mud.\n")
    assert "Ibises" in found(cli, "ibises")


def test_indexing_one_file_does_not_vouch_for_the_others(cli: Cli, workspace: Path) -> None:
    """A sync of some files must not record the folders' times: a file written into the same
    folder since the last search would then be missed by the quick check."""
    assert cli("config", "set", "index.freshness", "recent").exit_code == 0
    old_notes(workspace, 3)
    settle(cli, workspace)
    stray = workspace / "memory" / "stray.md"
    stray.write_text("- Written by hand: sandpipers.\n")
    age(stray, 1800)
    age(workspace / "memory", 1800)  # past the racy window, not the recorded time
    rewrite_in_place(workspace / "memory" / "note-01.md", "- Plovers run.\n")
    assert cli("index", "memory/note-01.md").exit_code == 0
    assert "Plovers" in found(cli, "plovers")
    assert "sandpipers" in found(cli, "sandpipers")


def test_quick_check_sees_a_new_file_in_a_folder_that_holds_only_folders(
    cli: Cli, workspace: Path
) -> None:
    """memory/2026 holds no file, only memory/2026/05: a new month's folder and file change
    memory/2026 alone, which the quick check must watch too."""
    assert cli("config", "set", "index.freshness", "recent").exit_code == 0
    month = workspace / "memory" / "2026" / "05"
    month.mkdir(parents=True)
    (month / "01.md").write_text("- Alpha fact.\n")
    for p in (workspace / "memory").rglob("*"):
        age(p, 3600)
    settle(cli, workspace)
    new = workspace / "memory" / "2026" / "06" / "01.md"
    new.parent.mkdir()
    new.write_text("- Kingfishers nest here.\n")
    for p in (new, new.parent, new.parent.parent):
        age(p, 1800)  # past the racy window, not the recorded times
    assert "Kingfishers" in found(cli, "kingfishers")


@pytest.mark.slow
def test_auto_records_a_clean_full_check_and_runs_the_quick_one_until_the_next(
    cli: Cli, workspace: Path
) -> None:
    oldest = large_and_auto(cli, workspace, full_check_secs=2)
    time.sleep(2.1)
    assert "Spoonbills" not in found(cli, "spoonbills")  # due: every file compared, none changed
    rewrite_in_place(oldest, "- Spoonbills sweep the shallows.\n")
    assert "Spoonbills" not in found(cli, "spoonbills")  # that clean check was recorded


def test_auto_treats_a_full_check_recorded_in_the_future_as_due(cli: Cli, workspace: Path) -> None:
    """A clock set back must not postpone the next full check until it catches up."""
    from memcli.index.changes import FULL_CHECK_KEY
    from memcli.memory import Memory

    assert cli("config", "set", "index.full_check_files", "10").exit_code == 0
    oldest = old_notes(workspace, 70)
    assert cli("index").exit_code == 0
    mem = Memory.open(workspace)
    with mem.store.transaction():
        mem.store.set_meta(FULL_CHECK_KEY, str(time.time() + 86400))
    mem.close()
    rewrite_in_place(oldest, "- Avocets sweep too.\n")
    assert "Avocets" in found(cli, "avocets")


@pytest.mark.slow
def test_a_search_syncs_only_what_it_found_changed_yet_a_rebuild_takes_every_file(
    cli: Cli, workspace: Path
) -> None:
    for n in range(5):
        (workspace / "memory" / f"n{n}.md").write_text(f"- Wader number {n} on the mudflat.\n")
    settle(cli, workspace)
    (workspace / "memory" / "n0.md").write_text("- Wader number 0 is a curlew now.\n")
    assert "curlew" in found(cli, "curlew")  # the changed file alone, synced by the search
    assert found(cli, "wader").count("Wader number") == 5
    assert cli("config", "set", "index.chunk_chars", "200").exit_code == 0
    (workspace / "memory" / "n1.md").write_text("- Wader number 1 is a godwit now.\n")
    assert found(cli, "wader").count("Wader number") == 5  # a rebuild: every file at once
    assert "godwit" in found(cli, "godwit")
