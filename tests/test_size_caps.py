"""Size caps: add refuses a fact over ``add.max_kb``; a file over ``index.max_file_mb`` is
indexed up to the cap with a warning, never dropped whole (one huge add must not hide a day)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Cli


def _daily(root: Path) -> Path:
    (daily,) = (root / "memory").glob("2*.md")
    return daily


def test_add_over_the_documented_size_is_refused(cli: Cli, workspace: Path) -> None:
    assert cli("add", "the pager rotation is weekly").exit_code == 0
    before = _daily(workspace).read_bytes()
    huge = "word " * (70 * 1024 // 5)
    r = cli("add", "-", input=huge)
    assert r.exit_code == 2, r.stderr
    assert "over add.max_kb (64 KiB)" in r.stderr and "nothing was written" in r.stderr
    assert _daily(workspace).read_bytes() == before
    assert cli("config", "set", "add.max_kb", "128").exit_code == 0
    assert cli("add", "-", input=huge).exit_code == 0


def test_one_huge_add_does_not_hide_the_day(cli: Cli, workspace: Path) -> None:
    assert cli("config", "set", "index.max_file_mb", "0.05").exit_code == 0  # 51 KiB
    assert cli("config", "set", "add.max_kb", "200").exit_code == 0
    assert cli("add", "the pager rotation is weekly").exit_code == 0
    r = cli("add", "--json", "-", input="a pasted log line\n" * 4000)  # 70 KiB
    assert r.exit_code == 0, r.stderr
    warned = r.stderr + "\n".join(r.json().get("warnings", []))
    assert "over index.max_file_mb" in warned and "not searchable" in warned, warned
    r = cli("search", "--json", "pager rotation")
    assert r.exit_code == 0, r.stderr
    assert r.json()["results"][0]["path"] == _daily(workspace).relative_to(workspace).as_posix()
    files = {f["path"]: f for f in cli("files", "--json").json()["files"]}
    assert _daily(workspace).relative_to(workspace).as_posix() in files
    # a fact written past the cap is saved, and the add says it is not searchable
    r = cli("add", "the otter fact comes last")
    assert r.exit_code == 0 and "not searchable" in r.stderr, r.stderr
    assert "otter fact comes last" in _daily(workspace).read_text()


def test_a_file_over_the_cap_is_indexed_up_to_it(cli: Cli, workspace: Path) -> None:
    """The same cut, whether a file is read by a sync or by the bulk parse of a new index."""
    assert cli("config", "set", "index.max_file_mb", "0.01").exit_code == 0  # 10 KiB
    lines = [f"- note {i} about the kafka queue" for i in range(600)]  # about 19 KiB
    lines[3] = "- the alpha fact near the top"
    lines[-1] = "- the zebra crossing at the very end"
    (workspace / "memory" / "big.md").write_text("\n".join(lines) + "\n")
    r = cli("index", "--json")
    assert r.exit_code == 0, r.stderr
    assert "memory/big.md: 19 KiB is over index.max_file_mb (10 KiB)" in r.stderr, r.stderr
    assert cli("search", "--json", "alpha fact").json()["results"][0]["path"] == "memory/big.md"
    assert cli("search", "--json", "zebra crossing").exit_code == 1
    r = cli("index", "--force", "--json")
    assert r.exit_code == 0 and "over index.max_file_mb" in r.stderr
    assert cli("search", "--json", "alpha fact").exit_code == 0
