"""The quick freshness check lists the folders whose times moved instead of comparing every
file: what it finds there, when it hands over to the full comparison, and that a search
after a change leaves the folders' times recorded again for the next one."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from memcli.index import changes
from memcli.memory import Memory
from memcli.search.options import SearchRequest


def age(path: Path, seconds: float) -> None:
    t = time.time() - seconds
    os.utime(path, (t, t), follow_symlinks=False)


def settled(workspace: Path, folders: list[str]) -> Memory:
    """Files in ``folders``, every file and folder an hour old, indexed; quick check on."""
    for folder in folders:
        (workspace / "memory" / folder).mkdir(parents=True, exist_ok=True)
        (workspace / "memory" / folder / "a.md").write_text(f"- Heron seen in {folder}.\n")
    for p in [workspace / "memory", *(workspace / "memory").rglob("*")]:
        age(p, 3600)
    mem = Memory.open(workspace)
    mem.freshness = "recent"
    mem.index()
    return mem


def hits(mem: Memory, query: str) -> list[str]:
    opts = mem.search_options(SearchRequest(limit=50))
    return sorted(h.path for h in mem.search(query, opts).hits)


def check(mem: Memory) -> tuple[list[str], bool]:
    """(files found changed, whether every file was compared) as a search would check."""
    fresh = mem.indexer().check
    return fresh.dirty(), fresh.compared_all is not None


def test_a_moved_folder_is_listed_and_recorded_again(workspace: Path) -> None:
    mem = settled(workspace, ["p", "q"])
    new = workspace / "memory" / "p" / "b.md"
    new.write_text("- An egret too.\n")
    age(new, 1800)
    age(new.parent, 1800)  # past the racy window, not the recorded time
    assert check(mem) == (["memory/p/b.md"], False)  # listed p, nothing else compared
    assert hits(mem, "egret") == ["memory/p/b.md"]
    assert check(mem) == ([], False)  # p's time recorded again: nothing to list
    (workspace / "memory" / "q" / "a.md").unlink()
    age(workspace / "memory" / "q", 1700)
    assert check(mem) == (["memory/q/a.md"], False)
    assert hits(mem, "heron") == ["memory/p/a.md"]
    mem.close()


def test_a_file_that_came_and_went_costs_one_listing(workspace: Path) -> None:
    mem = settled(workspace, ["p"])
    tmp = workspace / "memory" / "p" / "draft.txt"
    tmp.write_text("not indexed")
    tmp.unlink()
    age(workspace / "memory" / "p", 1800)
    assert check(mem) == ([], False)
    assert hits(mem, "heron") == ["memory/p/a.md"]  # records p's new time
    raw = mem.store.get_meta(changes.FOLDERS_KEY)
    assert raw and str(os.stat(workspace / "memory" / "p").st_mtime_ns) in raw
    mem.close()


def test_new_folders_are_listed_too_and_recorded(workspace: Path) -> None:
    mem = settled(workspace, ["p"])
    new = workspace / "memory" / "p" / "deeper" / "still" / "c.md"
    new.parent.mkdir(parents=True)
    new.write_text("- A bittern, deeper down.\n")
    for p in (new, new.parent, new.parent.parent, new.parent.parent.parent):
        age(p, 1800)
    assert check(mem) == (["memory/p/deeper/still/c.md"], False)
    assert hits(mem, "bittern") == ["memory/p/deeper/still/c.md"]
    assert check(mem) == ([], False)  # the new folders' times recorded with the others
    raw = mem.store.get_meta(changes.FOLDERS_KEY) or ""
    assert '"memory/p/deeper/still"' in raw
    mem.close()


def test_a_folder_gone_hands_over_to_the_full_comparison(workspace: Path) -> None:
    mem = settled(workspace, ["p", "q"])
    (workspace / "memory" / "q").rename(workspace / "memory" / "p" / "q2")
    for p in (workspace / "memory", workspace / "memory" / "p"):
        age(p, 1800)
    assert check(mem) == (["memory/p/q2/a.md", "memory/q/a.md"], True)
    assert hits(mem, "heron") == ["memory/p/a.md", "memory/p/q2/a.md"]
    mem.close()


def test_many_moved_folders_hand_over_to_the_full_comparison(workspace: Path) -> None:
    names = [f"f{n:02d}" for n in range(changes.MOST_FOLDERS + 1)]
    mem = settled(workspace, names)
    for name in names:
        (workspace / "memory" / name / "b.md").write_text(f"- Stork in {name}.\n")
        age(workspace / "memory" / name / "b.md", 1800)
        age(workspace / "memory" / name, 1800)
    found, compared_all = check(mem)
    assert compared_all and len(found) == len(names)
    assert len(hits(mem, "stork")) == len(names)
    mem.close()


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_a_folder_holding_a_link_hands_over_to_the_full_comparison(workspace: Path) -> None:
    mem = settled(workspace, ["p", "q"])
    link = workspace / "memory" / "p" / "to-q"
    link.symlink_to(workspace / "memory" / "q", target_is_directory=True)
    age(link, 1800)
    age(link.parent, 1800)
    assert check(mem)[1] is True  # whether the full listing follows a link: its call
    mem.close()


def test_a_folder_changed_during_a_whole_sync_is_listed_next(workspace: Path) -> None:
    """Its time is recorded as unknown, not trusted: the next quick check lists it."""
    mem = settled(workspace, ["p"])
    with mem.store.transaction():
        changes.stamp_folders(mem.ws, mem.store, mem.indexer().include, time.time() - 7200)
    new = workspace / "memory" / "p" / "late.md"
    new.write_text("- A spoonbill, late.\n")
    age(new, 1800)
    assert check(mem) == (["memory/p/late.md"], False)
    mem.close()


def test_a_new_file_in_a_folder_that_held_none_is_seen(workspace: Path) -> None:
    mem = settled(workspace, ["p"])
    (workspace / "memory" / "empty").mkdir()
    age(workspace / "memory" / "empty", 1000)
    age(workspace / "memory", 1000)
    mem.index()  # the listing of every folder records the empty one too
    new = workspace / "memory" / "empty" / "x.md"
    new.write_text("- A kingfisher.\n")
    age(new, 900)
    age(new.parent, 900)
    assert hits(mem, "kingfisher") == ["memory/empty/x.md"]
    mem.close()


def test_a_recent_file_now_ignored_leaves_the_index(workspace: Path) -> None:
    mem = settled(workspace, ["p", "q"])
    (workspace / ".memignore").write_text("memory/q/\n")
    f = workspace / "memory" / "q" / "a.md"
    f.write_text("- Heron and a kingfisher.\n")  # one of the files changed last
    age(f, 1000)
    g = workspace / "memory" / "p" / "b.md"
    g.write_text("- An egret.\n")
    age(g, 1000)
    age(g.parent, 1000)
    assert hits(mem, "kingfisher") == []
    assert not mem.store.knows("memory/q/a.md")
    mem.close()


def test_a_folder_named_to_a_sync_and_gone_is_removed_whole(workspace: Path) -> None:
    """What a watcher's batch and 'memcli index DIR' pass after 'rm -rf DIR'."""
    import shutil

    mem = settled(workspace, ["p", "q"])
    shutil.rmtree(workspace / "memory" / "p")
    age(workspace / "memory", 1000)
    mem.indexer().sync(["memory/p"], watched=True)
    assert not mem.store.knows("memory/p")
    assert check(mem) == ([], False)
    assert hits(mem, "heron") == ["memory/q/a.md"]
    mem.close()


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_a_memory_folder_turned_into_a_link_is_left_to_the_full_listing(
    workspace: Path, tmp_path: Path
) -> None:
    from memcli.errors import ConfigError

    mem = settled(workspace, ["p"])
    outside = tmp_path / "outside"
    (outside / "p").mkdir(parents=True)
    (outside / "p" / "a.md").write_text("- A secret osprey.\n")
    (workspace / "memory").rename(tmp_path / "old")
    (workspace / "memory").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ConfigError):
        hits(mem, "osprey")  # the full listing refuses a folder leading outside
    mem.close()
