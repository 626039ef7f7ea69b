"""Messages that said less than the truth or more than needed: diff before the first commit, a
huge query echoed whole, an empty table left by ``config unset``."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import Cli


def test_diff_before_the_first_commit_says_so(cli: Cli, workspace: Path) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    cli("add", "the first fact")
    r = cli("diff")
    assert r.exit_code == 0, r.stderr
    summary = r.stdout.strip().splitlines()[-1]
    assert "(nothing)" not in r.stdout
    assert summary.endswith("(worktree, no commit before it)"), summary


def test_a_huge_query_is_not_echoed_whole(cli: Cli) -> None:
    cli("add", "a fact about valkey")
    query = "zzqx" * 2_500  # 10 000 characters that match nothing
    r = cli("search", query)
    assert r.exit_code == 1
    assert len(r.stderr) < 300, len(r.stderr)
    assert "10000 characters" in r.stderr and "no results for 'zzqxzzqx" in r.stderr
    short = cli("search", "zzqx nothing")
    assert "no results for 'zzqx nothing' (keyword)" in short.stderr  # short ones as they were


def test_config_unset_leaves_no_empty_table(cli: Cli, workspace: Path) -> None:
    toml = workspace / "memcli.toml"
    assert cli("config", "set", "search.limit", "5").exit_code == 0
    assert cli("config", "set", "decay.half_life_days", "60").exit_code == 0
    assert cli("config", "unset", "search.limit").exit_code == 0
    assert "[search]" not in toml.read_text()
    assert "[decay]" in toml.read_text()  # a table that still holds a setting stays
    toml.write_text(toml.read_text() + "\n[search]\n# tuned by hand later\nlimit = 4\n")
    assert cli("config", "unset", "search.limit").exit_code == 0
    assert "# tuned by hand later" in toml.read_text()  # a table with a comment is kept
