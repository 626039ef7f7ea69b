"""The folder walk: files come in the index's path order, and the changed-files check
that streams both sides finds every kind of change a full comparison finds."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from memcli.config import load_settings
from memcli.index import changes
from memcli.index.indexer import Indexer
from memcli.index.indexfile import open_store
from memcli.notes.scan import iter_files, scan, stat_files
from memcli.notes.workspace import Workspace, find_workspace

# Names whose path order differs from a per-folder name order: "a-b.md" < "a/" < "a0.md",
# upper case before lower, non-ASCII last; a folder and a file sharing a stem.
NAMES = [
    "a.md",
    "a-b.md",
    "a/x.md",
    "a/y/z.md",
    "a0.md",
    "Z.md",
    "é.md",
    "ns/b.md",
    "ns.md",
    "ns-2.md",
    "ns 3/c.md",
    "2025-01-02.md",
    "nested/deep/er/still/f.md",
]


def _write(root: Path, names: list[str], text: str = "- a fact about {}\n") -> None:
    """Write notes with an mtime a minute old: fresh ones are recorded as racy (smudged),
    which the streaming check rightly reports as not known to be unchanged."""
    for name in names:
        path = root / "memory" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.format(name).encode())
        _age(path, 60)


def _age(path: Path, seconds: int) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 1_000_000_000))


def _indexer(root: Path) -> Indexer:
    ws = find_workspace(root)
    settings = load_settings(ws.root)
    return Indexer(ws, open_store(ws), settings)


def test_files_come_in_sqlite_path_order(workspace: Path) -> None:
    _write(workspace, NAMES)
    ix = _indexer(workspace)
    rels = [f.rel for f in iter_files(ix.ws, ix.include, [])]
    expected = {f"memory/{n}" for n in NAMES} | {"memory/MEMORY.md"}
    assert set(rels) == expected and len(rels) == len(expected)
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (path TEXT PRIMARY KEY)")
    conn.executemany("INSERT INTO t VALUES (?)", [(r,) for r in rels])
    assert rels == [r for (r,) in conn.execute("SELECT path FROM t ORDER BY path")]
    assert rels == sorted(rels)


def test_nested_include_roots_list_each_file_once(workspace: Path) -> None:
    _write(workspace, NAMES)
    ws = find_workspace(workspace)
    include = ["memory/**/*.md", "memory/ns/**/*.md", "memory/a/**/*.md"]
    rels = [f.rel for f in iter_files(ws, include, [])]
    assert rels == sorted(set(rels))
    assert len(rels) == len(NAMES) + 1
    assert list(scan(ws, include).files) == rels


def test_unchanged_agrees_with_the_full_check(workspace: Path) -> None:
    _write(workspace, NAMES)
    _write(workspace, ["blob.md"], "\x00\x01binary")
    _age(workspace / "memory" / "MEMORY.md", 60)
    ix = _indexer(workspace)
    ix.sync()

    def unchanged() -> bool:
        return changes.unchanged(ix.ws, ix.store, ix.include)

    # a binary file is remembered as skipped: known, so not a change
    assert unchanged() and ix.check.dirty() == []

    def changed(step: str) -> None:
        assert not unchanged(), step
        assert ix.check.dirty() != [], step
        ix.sync()
        assert unchanged() and ix.check.dirty() == [], step

    _write(workspace, ["a/x.md"], "- a longer fact about {}, so the size changes\n")
    changed("size changed")
    _age(workspace / "memory" / "a" / "x.md", 5)
    changed("mtime changed")
    _write(workspace, ["a/y/new.md"])
    changed("file added in a nested folder")
    _write(workspace, ["ü-last.md"])
    changed("file added after every known one")
    (workspace / "memory" / "ns.md").unlink()
    changed("file deleted")
    (workspace / "memory" / "ü-last.md").unlink()
    changed("last file deleted")
    (workspace / "memory" / "blob.md").unlink()
    changed("skipped file deleted")


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_links_out_of_the_workspace_stay_out_of_the_walk(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("- secret\n", encoding="utf-8")
    _write(workspace, ["a.md"])
    (workspace / "memory" / "out").symlink_to(outside, target_is_directory=True)
    (workspace / "memory" / "loop").symlink_to(workspace / "memory", target_is_directory=True)
    warnings: list[str] = []
    ws = find_workspace(workspace)
    rels = [f.rel for f in iter_files(ws, ["memory/**/*.md"], warnings)]
    assert rels == ["memory/MEMORY.md", "memory/a.md"]
    assert any("memory/out: skipped: symlink leaves the workspace" in w for w in warnings)


def test_stat_files_finds_named_files_as_the_full_listing_does(workspace: Path) -> None:

    _write(workspace, ["a/x.md", "b.md"])
    (workspace / "memory" / "notes.txt").write_text("not indexed")
    (workspace / ".git").mkdir()
    (workspace / ".git" / "y.md").write_text("- never indexed\n")
    ws = Workspace(workspace)
    include = ["memory/**/*.md"]
    full = scan(ws, include).files
    named = ["memory/a/x.md", "memory/b.md", "memory/notes.txt", "memory/gone.md", ".git/y.md"]
    got = stat_files(ws, include, named)
    assert got is not None and got.files == {k: full[k] for k in ("memory/a/x.md", "memory/b.md")}
    assert stat_files(ws, include, ["memory/a"]) is None  # a folder: the full listing says


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_stat_files_leaves_links_to_the_full_listing(workspace: Path) -> None:

    _write(workspace, ["a/x.md"])
    (workspace / "memory" / "link.md").symlink_to(workspace / "memory" / "a" / "x.md")
    (workspace / "memory" / "via").symlink_to(workspace / "memory" / "a", target_is_directory=True)
    ws = Workspace(workspace)
    include = ["memory/**/*.md"]
    assert stat_files(ws, include, ["memory/link.md"]) is None
    assert stat_files(ws, include, ["memory/via/x.md"]) is None
