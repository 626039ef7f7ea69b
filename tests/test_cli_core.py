"""End-to-end CLI behaviour of the core commands (init, add, index, search, status, files, get)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import Cli


def test_add_index_search_roundtrip(cli: Cli, workspace: Path) -> None:
    r = cli("add", "--type", "decision", "--tag", "infra", "Use Valkey instead of Redis.", "--json")
    assert r.exit_code == 0, r.stderr
    added = r.json()
    assert added["added"] is True
    assert added["entry"].endswith("[decision] Use Valkey instead of Redis. #infra")
    text = (workspace / added["path"]).read_text()
    assert "[decision] Use Valkey instead of Redis. #infra" in text

    r = cli("search", "--json", "which cache: valkey or redis?")
    assert r.exit_code == 0
    env = r.json()
    assert set(env) == {"query", "mode", "stale", "warnings", "results"}
    assert env["mode"] == "keyword"
    hit = env["results"][0]
    assert hit["path"] == added["path"]
    assert 0.0 <= hit["score"] <= 1.0
    assert "Valkey" in hit["snippet"]
    assert hit["start_line"] <= added["line"] <= hit["end_line"]


def test_duplicate_is_skipped(cli: Cli) -> None:
    assert cli("add", "The build uses uv.").exit_code == 0
    r = cli("add", "--json", "the build  uses uv")
    assert r.exit_code == 0
    assert r.json()["added"] is False
    assert r.json()["duplicate_of"]


def test_no_hit_exits_1_with_valid_json(cli: Cli) -> None:
    cli("add", "alpha")
    r = cli("search", "--json", "zzzunknown")
    assert r.exit_code == 1
    assert r.json()["results"] == []


def test_empty_query_is_usage_error(cli: Cli) -> None:
    r = cli("search", "   ")
    assert r.exit_code == 2
    assert "Error:" in r.stderr


def test_missing_workspace_exit_3(tmp_path: Path) -> None:
    r = Cli(tmp_path / "nowhere")("status")
    assert r.exit_code == 3
    assert "memcli init" in r.stderr


def test_get_and_confinement(cli: Cli, workspace: Path) -> None:
    (workspace / "memory" / "notes.md").write_text("one\ntwo\nthree\n")
    r = cli("get", "memory/notes.md:2:2", "--json")
    assert r.exit_code == 0
    assert r.json() == {
        "path": "memory/notes.md",
        "start_line": 2,
        "end_line": 3,
        "text": "two\nthree",
        "ids": [],  # prose, not entries
    }
    r = cli("get", "../outside.md")
    assert r.exit_code == 2


def test_add_to_outside_refused(cli: Cli, tmp_path: Path) -> None:
    r = cli("add", "--to", "../../evil.md", "x")
    assert r.exit_code == 2
    assert not (tmp_path / "evil.md").exists()


def test_batch_one_envelope_per_line(cli: Cli) -> None:
    cli("add", "Postgres runs on port 5433")
    r = cli("search", "--batch", input="postgres port\n\nnothingmatches\n")
    assert r.exit_code == 0
    lines = r.jsonl()  # one answer per line of input, the blank one included
    assert [x["query"] for x in lines] == ["postgres port", "", "nothingmatches"]
    assert lines[0]["results"] and lines[2]["results"] == []
    assert lines[1]["error"] == "empty query" and lines[1]["results"] == []


def test_status_and_files_json(cli: Cli, workspace: Path) -> None:
    cli("add", "fact one")  # the first write builds the whole index
    st = cli("status", "--json").json()
    assert st["files"] == 2 and st["dirty"] == []
    (workspace / "memory" / "notes.md").write_text("hand written\n")
    cli("add", "fact two")  # later adds index only their own file
    st = cli("status", "--json").json()
    assert st["files"] == 2 and st["dirty"] == ["memory/notes.md"]
    assert cli("index", "--json").json()["added"] == 1
    st = cli("status", "--json").json()
    assert st["files"] == 3 and st["chunks"] >= 3 and st["dirty"] == []
    files = cli("files", "--json").json()["files"]
    assert {f["path"] for f in files} >= {"memory/MEMORY.md", "memory/notes.md"}


def test_same_size_rewrite_in_the_same_tick_is_seen(cli: Cli, workspace: Path) -> None:
    """(mtime, size) cannot tell two same-size writes in one timestamp tick apart: the
    index records such recent files as racy and re-hashes them on the next check."""
    import os

    target = workspace / "memory" / "racy.md"
    target.write_text("alpha beta\n")
    cli("index")
    st = target.stat()
    target.write_text("gamma beta\n")  # same size
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the same mtime
    assert cli("status", "--json").json()["dirty"] == ["memory/racy.md"]
    r = cli("search", "--json", "gamma")
    assert r.exit_code == 0 and r.json()["results"][0]["path"] == "memory/racy.md"


def test_racy_entry_is_settled_once_old_enough(cli: Cli, workspace: Path) -> None:
    """A file indexed right after it was written is recorded as racy and re-hashed by each
    check; once its mtime is old enough, the next search records the real one."""
    import os

    from memcli.index.indexfile import open_store
    from memcli.notes.workspace import find_workspace

    target = workspace / "memory" / "fresh.md"
    target.write_text("- written just now: quokka\n")
    cli("index")

    def recorded() -> tuple[int, int]:
        store = open_store(find_workspace(workspace))
        try:
            return store.file_stats()["memory/fresh.md"]
        finally:
            store.close()

    assert recorded()[0] == 0  # racy: the stat is not trusted
    past = target.stat().st_mtime_ns - 10_000_000_000
    os.utime(target, ns=(past, past))  # same content, now old enough to trust
    assert cli("status", "--json").json()["dirty"] == []  # unchanged content is not dirty
    assert cli("search", "--json", "quokka").exit_code == 0
    assert recorded() == (past, target.stat().st_size)


def test_installed_entry_point_help() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "memcli", "--help"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0
    assert "search" in out.stdout and "Exit codes" in out.stdout


def test_tag_and_tags_are_both_accepted(cli: Cli, workspace: Path) -> None:
    """`--tag` and `--tags` alike, on add, search and supersede (as the MCP tools take both)."""
    r = cli("add", "--tags", "db", "--tag", "pg", "Postgres listens on port 5433.", "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["entry"].endswith("Postgres listens on port 5433. #db #pg")
    for flag in ("--tag", "--tags"):
        found = cli("search", "port", flag, "pg", "--json")
        assert found.exit_code == 0, (flag, found.stderr)
        assert "5433" in found.json()["results"][0]["snippet"]
        assert cli("search", "port", flag, "nosuchtag", "--json").exit_code == 1
    r = cli("supersede", r.json()["id"], "Postgres listens on port 5434.", "--tags", "db")
    assert r.exit_code == 0, r.stderr
    assert (
        "port 5434. #db\n"
        in (workspace / "memory")
        .joinpath(
            r.stdout.split("new fact ")[1].split(" at ")[1].split(":")[0].removeprefix("memory/")
        )
        .read_text()
    )
