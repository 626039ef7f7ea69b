"""What commands report: status without Python reprs, log counting each fact once across a
merge, watch events carrying every field of ``index --json``, and an add that takes vectors
from the embedding cache when the embedding server is down."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memcli.index import vectors
from memcli.index.indexer import IndexReport
from memcli.index.store import Store
from memcli.index.watching.events import sync_event
from tests.conftest import Cli
from tests.stub_openai import StubOpenAI
from tests.test_git import append, git, repo_workspace
from tests.test_hybrid import model_env


# -- status ---------------------------------------------------------------------------------
def test_status_piped_has_no_python_reprs(tmp_path: Path) -> None:
    root = repo_workspace(tmp_path / "r")
    append(root / "memory" / "MEMORY.md", "- an uncommitted fact\n")
    out = Cli(root)("status").stdout
    assert "git: branch main, 1 uncommitted memory file (memory/MEMORY.md), no upstream" in out
    for repr_mark in ("['", "None", "{", "=["):
        assert repr_mark not in out, out


# -- log ------------------------------------------------------------------------------------
def test_log_counts_the_facts_of_a_merged_branch_once(tmp_path: Path) -> None:
    root = repo_workspace(tmp_path / "r")
    cli = Cli(root)
    git(root, "checkout", "-q", "-b", "side")
    assert cli("add", "--to", "memory/MEMORY.md", "Side fact one.").exit_code == 0
    assert cli("add", "--to", "memory/MEMORY.md", "Side fact two.").exit_code == 0
    git(root, "commit", "-qam", "side facts")
    git(root, "checkout", "-q", "main")
    assert cli("add", "--to", "memory/notes.md", "Main fact.").exit_code == 0
    git(root, "add", "-A")
    git(root, "commit", "-qm", "main fact")
    git(root, "merge", "-q", "--no-ff", "--no-edit", "side")
    commits = cli("log", "--json").json()["commits"]
    by_subject = {c["subject"]: c for c in commits}
    merge = next(c for c in commits if c["subject"].startswith("Merge"))
    assert by_subject["side facts"]["added"] == 2
    assert by_subject["main fact"]["added"] == 1
    # the merge itself learned nothing: its facts were counted in the commits it joined
    assert (merge["added"], merge["removed"], merge["files"]) == (0, 0, 0)
    assert sum(c["added"] for c in commits) == 3


def test_log_counts_a_fact_written_while_resolving_a_merge(tmp_path: Path) -> None:
    root = repo_workspace(tmp_path / "r")
    git(root, "checkout", "-q", "-b", "side")
    append(root / "memory" / "MEMORY.md", "- Side fact.\n")
    git(root, "commit", "-qam", "side")
    git(root, "checkout", "-q", "main")
    append(root / "memory" / "MEMORY.md", "- Main fact.\n")
    git(root, "commit", "-qam", "main")
    git(root, "merge", "-q", "--no-commit", "side", check=False)
    text = (root / "memory" / "MEMORY.md").read_text()
    kept = [ln for ln in text.splitlines() if not ln.startswith(("<<<", "===", ">>>"))]
    (root / "memory" / "MEMORY.md").write_text("\n".join(kept) + "\n- Resolution fact.\n")
    git(root, "commit", "-qam", "merged by hand")
    merge = Cli(root)("log", "--json", "-n", "1").json()["commits"][0]
    assert (merge["added"], merge["removed"]) == (1, 0)


# -- watch events ---------------------------------------------------------------------------
@pytest.mark.parametrize("embeds", [True, False])
def test_watch_sync_event_has_every_index_json_field(embeds: bool) -> None:
    report = IndexReport()
    report.added, report.unchanged, report.files, report.chunks = 1, 4, 5, 9
    report.changed = ["memory/a.md"]
    event = sync_event(report, embeds=embeds, embedded=0, missing=0, initial=False)
    index_json = report.as_dict()
    assert set(index_json) <= set(event), set(index_json) - set(event)
    for key, value in index_json.items():
        assert event[key] == value, key


# -- add with the embedding server down -----------------------------------------------------
def _missing_vectors(root: Path) -> int:
    store = Store.open(root / ".memcli" / "index.db")
    try:
        assert store.ensure_vec(), store.vec_error
        return vectors.pending_count(store)
    finally:
        store.close()


def test_add_with_the_server_down_takes_vectors_from_the_cache(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, openai_stub: StubOpenAI
) -> None:
    for key, value in model_env(openai_stub).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("MEMCLI_EMBEDDING_TIMEOUT", "2")
    from memcli.providers import remote

    monkeypatch.setattr(remote, "_sleep", lambda _s: None)
    for day in range(10, 16):
        (workspace / "memory" / f"2026-11-{day}.md").write_text(
            f"# 2026-11-{day}\n\n- 10:00 Fact number {day} about the deploy pipeline.\n"
        )
    cli = Cli(workspace)
    first = cli("index", "--json").json()
    assert first["missing_vectors"] == 0 and first["embedded"] >= 6
    (workspace / ".memcli" / "index.db").unlink()  # the index is derived: rebuilt from the files
    openai_stub.stop()  # the embedding server is down; the cache holds every old chunk's vector
    run = cli("add", "--json", "A new fact while the server is down.")
    assert run.exit_code == 0, run.stderr
    added = json.loads(run.stdout)
    assert added["added"] is True
    assert _missing_vectors(workspace) == 1  # only the new fact's chunk waits for the server
    assert "7 taken from the embedding cache" in run.stderr
    status = cli("status").stdout
    assert "embedding: openai/stub-embed, 64 dims, 7 of 8 chunks have vectors" in status
    assert re.search(r"^cache: \d+ vectors, [\d.]+ (KB|MB|bytes) in /", status, re.MULTILINE)
    assert "{" not in status and "=" not in status


# -- add after a flush ----------------------------------------------------------------------
def test_add_after_a_flush_does_not_land_under_its_provenance_heading(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, openai_stub: StubOpenAI
) -> None:
    from memcli.notes.entries import parse_entries
    from memcli.providers import remote
    from tests.test_flush import CONV, reply

    monkeypatch.setenv("MEMCLI_LLM_MODEL", "openai/stub-chat")
    monkeypatch.setenv("MEMCLI_LLM_API_BASE", openai_stub.base_url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setattr(remote, "_sleep", lambda _s: None)
    openai_stub.chat_replies = [reply("Use Valkey instead of Redis for the cache.")]
    cli = Cli(workspace)
    assert cli("add", "A fact from before the flush.").exit_code == 0
    flushed = cli("flush", "--json", "-", input=CONV)
    assert flushed.exit_code == 0, flushed.stderr
    day = next(p for p in (workspace / "memory").glob("2*.md"))
    assert cli("add", "A fact typed by hand after the flush.").exit_code == 0
    assert cli("add", "Another fact by hand.").exit_code == 0
    text = day.read_text()
    lines = text.splitlines()
    headings = [(n, ln) for n, ln in enumerate(lines, 1) if ln.startswith("## ")]
    assert len(headings) == 2, text
    assert " flush · conversation " in headings[0][1]
    assert re.fullmatch(r"## \d\d:\d\d add", headings[1][1]), text
    facts = {e.text: e.line for e in parse_entries(text)}
    flush_line, add_line = headings[0][0], headings[1][0]
    assert flush_line < facts["Use Valkey instead of Redis for the cache."] < add_line
    assert add_line < facts["A fact typed by hand after the flush."]
    assert facts["A fact from before the flush."] < flush_line
    assert lines[add_line - 2] == ""  # a blank line before the heading, as Markdown reads it
    # the added fact is cited where it really is
    found = cli("search", "--json", "typed by hand").json()["results"][0]
    assert found["heading"].endswith("add") and "flush" not in found["heading"]
