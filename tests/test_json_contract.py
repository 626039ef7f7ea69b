"""The JSON contract: field names of every command's --json output, pinned.

Scripts and agents read these names; renaming, removing or adding a field must be a decision
(update this file, the docs' "Output and JSON" page, docs/json.md, and the CHANGELOG), never an
accident. Values are checked only for their kind where that is part of the contract.
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from memcli.notes.workspace import init_workspace
from memcli.providers import remote
from tests.conftest import Cli
from tests.stub_openai import StubOpenAI

INIT = {"workspace", "created"}
INIT_WITH_HOOKS = INIT | {"hooks"}
HOOK = {"name", "path", "state", "chained", "workspaces", "python", "python_exists", "action"}
HOOKS = {"hooks_dir", "workspace", "log", "hooks"}
ADD = {"id", "path", "line", "entry", "added", "duplicate_of", "redactions"}
ADD_COMMIT = ADD | {"commit"}
INDEX = {
    "added",
    "updated",
    "removed",
    "unchanged",
    "files",
    "chunks",
    "embedded",
    "missing_vectors",
    "embed_cached",
    "embed_requests",
    "seconds",
}
SEARCH = {"query", "mode", "stale", "warnings", "results"}
RESULT = {
    "path",
    "start_line",
    "end_line",
    "score",
    "snippet",
    "heading",
    "source",
    "date",
    "evergreen",
    "scores",
    "flags",
    "ids",
    "stale",
    "match_line",
    "match_lines",
}
BATCH_ERROR = {"query", "error", "results"}
STATUS = {
    "workspace",
    "index",
    "files",
    "chunks",
    "mode",
    "mode_reason",
    "embedding",
    "cache",
    "dirty",
    "git",
    "last_indexed",
    "engine",
    "sessions",
    "warnings",
}
STATUS_EMBEDDING_KEYWORD = {"model", "vectors", "coverage"}
STATUS_CACHE = {"path", "bytes", "entries"}
STATUS_GIT = {"branch", "dirty_memory_files", "ahead", "behind"}
FILES = {"files"}
FILE = {"path", "source", "date", "evergreen", "size", "indexed_at", "chunks"}
GET = {"path", "start_line", "end_line", "text", "ids"}
FLUSH = {
    "conversation",
    "path",
    "heading",
    "dry_run",
    "already_flushed",
    "written",
    "skipped",
    "rejected",
    "messages",
    "parts",
    "requests",
    "redactions",
    "commit",
    "message",
    "warnings",
    "decisions",
    "discarded",
}
DECISION = {"decision", "target", "by", "why"}
FLUSH_WRITTEN = {"text", "type", "tags", "line"} | DECISION
FLUSH_SKIPPED = {"text", "type", "tags", "reason", "duplicate_of"} | DECISION
DIFF = {"from", "to", "files", "totals"}
DIFF_FILE = {"path", "status", "old_path", "binary", "added", "removed"}
DIFF_LINE = {"line", "text", "type", "tags", "time", "kind", "event"}
DIFF_TOTALS = {"files", "added", "removed", "lines_added", "lines_removed", "changed"}
LOG = {"commits"}
COMMIT = {"sha", "short", "author", "date", "subject", "files", "added", "removed", "changed"}
SYNC = {
    "branch",
    "upstream",
    "strategy",
    "committed",
    "before",
    "after",
    "pulled",
    "pushed",
    "changed",
    "attempts",
    "index",
}
CONFIG = {"workspace", "files", "settings", "trust"}
CONFIG_FILE = {"path", "exists"}
CONFIG_SETTING = {"value", "origin", "default", "env", "ignored"}
TRUST = {"file", "state", "sha256", "trusted_sha256", "sets", "ignored", "changed", "covers"}
TRUST_LIST = {"trusted"}
TRUSTED_FILE = {"file", "sha256", "state"}
CONFIG_GET = {"key"} | CONFIG_SETTING
CONFIG_SET = {"key", "value", "changed", "file", "scope", "effective"}
CONFIG_UNSET = {"key", "changed", "file", "scope", "effective"}
CONFIG_EFFECTIVE = {"value", "origin"}
CONFIG_PATH = {"user", "workspace"}
DOCTOR = {"version", "ok", "problems", "checks"}
CHECK = {"name", "status", "summary", "hint", "details"}
DOCTOR_CHECKS = [
    "python",
    "sqlite",
    "fts5",
    "workspace",
    "config",
    "trust",
    "sqlite_vec",
    "index",
    "embedding",
    "llm",
    "hooks",
    "agent",
    "engine",
    "cache",
]
WATCH_READY = {"event", "workspace", "watching", "debounce_ms", "pid", "warnings", "time"}
WATCH_SYNC = {
    "event",
    "added",
    "updated",
    "removed",
    "paths",
    "seconds",
    "time",
    "files",
    "chunks",
    "warnings",
    "unchanged",  # every field of index --json
    "embedded",
    "missing_vectors",
    "embed_cached",
    "embed_requests",
}
WATCH_STOPPED = {"event", "reason", "syncs", "time"}
ERROR = {"error"}  # any command asked for JSON that fails (tests/test_json_errors.py)
ERROR_BODY = {"message", "hint", "exit_code"}


def keys(obj: Any) -> set[str]:
    assert isinstance(obj, dict), obj
    return set(obj)


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.fixture
def facts(cli: Cli, workspace: Path) -> Path:
    for text in ("Use Valkey instead of Redis for the cache.", "Deploys happen on Fridays."):
        assert cli("add", "--type", "decision", "--tag", "infra", text).exit_code == 0
    return workspace


def test_init(tmp_path: Path) -> None:
    root = tmp_path / "new"
    r = Cli(root)("init", "--json", str(root))
    assert r.exit_code == 0 and keys(r.json()) == INIT
    assert isinstance(r.json()["created"], list)
    r = Cli(root)("init", "--git", "--hooks", "--json", str(root))
    assert r.exit_code == 0 and keys(r.json()) == INIT_WITH_HOOKS
    assert all(keys(h) == HOOK for h in r.json()["hooks"])


@pytest.mark.slow
def test_add(cli: Cli, workspace: Path) -> None:
    r = cli("add", "--json", "--tag", "x", "A fact worth keeping.")
    assert r.exit_code == 0 and keys(r.json()) == ADD and r.json()["added"] is True
    again = cli("add", "--json", "--tag", "x", "A fact worth keeping.")
    assert keys(again.json()) == ADD and again.json()["added"] is False
    # the id is the fact's, as search shows it and lifecycle commands take it
    fid = r.json()["id"]
    assert again.json()["id"] == fid
    assert cli("search", "fact worth keeping", "--json").json()["results"][0]["ids"] == [fid]
    assert cli("supersede", fid, "A fact worth keeping, revised.").exit_code == 0
    git(workspace, "init", "-q")
    r = cli("add", "--json", "--commit", "Another fact.")
    assert r.exit_code == 0 and keys(r.json()) == ADD_COMMIT


def test_index(cli: Cli, facts: Path) -> None:
    r = cli("index", "--json", "--force")
    assert r.exit_code == 0 and keys(r.json()) == INDEX


def test_search_envelope_and_results(cli: Cli, facts: Path) -> None:
    r = cli("search", "--json", "valkey")
    assert r.exit_code == 0
    env = r.json()
    assert keys(env) == SEARCH and env["results"]
    for hit in env["results"]:
        assert keys(hit) == RESULT
        assert isinstance(hit["scores"], dict) and "keyword" in hit["scores"]
    explained = cli("search", "--json", "--explain", "valkey").json()["results"][0]
    assert keys(explained) == RESULT | {"explain"}
    none = cli("search", "--json", "zzzqqq")
    assert none.exit_code == 1 and keys(none.json()) == SEARCH and none.json()["results"] == []
    lines = cli("search", "--jsonl", "valkey").jsonl()
    assert lines and all(keys(x) == RESULT for x in lines)
    batch = cli("search", "--batch", input='valkey\n"unclosed\nfridays\n').jsonl()
    assert all(keys(x) in (SEARCH, BATCH_ERROR) for x in batch) and len(batch) >= 2


def test_status(cli: Cli, facts: Path) -> None:
    d = cli("status", "--json").json()
    assert keys(d) == STATUS
    assert keys(d["embedding"]) == STATUS_EMBEDDING_KEYWORD
    assert keys(d["cache"]) == STATUS_CACHE
    assert d["git"] is None
    git(facts, "init", "-q")
    d = cli("status", "--json").json()
    assert keys(d["git"]) == STATUS_GIT


def test_files_and_get(cli: Cli, facts: Path) -> None:
    d = cli("files", "--json").json()
    assert keys(d) == FILES and d["files"] and all(keys(f) == FILE for f in d["files"])
    path = d["files"][0]["path"]
    g = cli("get", "--json", f"{path}:1:2")
    assert g.exit_code == 0 and keys(g.json()) == GET


def test_flush_dry_run(
    cli: Cli, workspace: Path, openai_stub: StubOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_LLM_MODEL", "openai/stub-chat")
    monkeypatch.setenv("MEMCLI_LLM_API_BASE", openai_stub.base_url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setattr(remote, "_sleep", lambda _s: None)
    assert cli("add", "We deploy on Fridays.").exit_code == 0
    openai_stub.chat_replies = [
        json.dumps(
            {
                "facts": [
                    {"text": "The cache is Valkey.", "type": "decision", "tags": ["infra"]},
                    {"text": "We deploy on Fridays.", "type": None, "tags": []},
                ]
            }
        )
    ]
    r = cli(
        "flush",
        "--dry-run",
        "--json",
        "-",
        input="user: what did we decide?\nassistant: Valkey for the cache.\n",
    )
    assert r.exit_code == 0, r.stderr
    d = r.json()
    assert keys(d) == FLUSH and d["dry_run"] is True
    assert [keys(x) for x in d["written"]] == [FLUSH_WRITTEN]
    assert [keys(x) - {"similarity"} for x in d["skipped"]] == [FLUSH_SKIPPED]


def test_diff_and_log(cli: Cli, facts: Path) -> None:
    git(facts, "init", "-q")
    git(facts, "add", "-A")
    git(facts, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-qm", "facts")
    assert cli("add", "Backups run nightly.").exit_code == 0
    d = cli("diff", "--json").json()
    assert keys(d) == DIFF and keys(d["totals"]) == DIFF_TOTALS
    assert d["files"] and all(keys(f) == DIFF_FILE for f in d["files"])
    assert all(keys(x) == DIFF_LINE for f in d["files"] for x in f["added"] + f["removed"])
    nothing = cli("diff", "--json", "HEAD..HEAD")
    assert nothing.exit_code == 1 and keys(nothing.json()) == DIFF
    log = cli("log", "--json").json()
    assert keys(log) == LOG and log["commits"] and all(keys(c) == COMMIT for c in log["commits"])


def test_hooks(cli: Cli, workspace: Path) -> None:
    git(workspace, "init", "-q")
    for sub in ("status", "install", "uninstall"):
        r = cli("hooks", sub, "--json")
        assert r.exit_code == 0, r.stderr
        assert keys(r.json()) == HOOKS and all(keys(h) == HOOK for h in r.json()["hooks"])


def test_sync(tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    root = tmp_path / "ws"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    init_workspace(root)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    git(root, "remote", "add", "origin", str(remote))
    git(root, "push", "-q", "-u", "origin", "main")
    r = Cli(root)("sync", "--json")
    assert r.exit_code == 0, r.stderr
    assert keys(r.json()) == SYNC and keys(r.json()["index"]) == INDEX


def test_config(cli: Cli, workspace: Path) -> None:
    d = cli("config", "--json").json()
    assert keys(d) == CONFIG
    assert keys(d["files"]) == {"user", "workspace"}
    assert keys(d["files"]["user"]) == CONFIG_FILE == keys(d["files"]["workspace"])
    assert all(keys(s) == CONFIG_SETTING for s in d["settings"].values())
    assert keys(cli("config", "get", "--json", "search.limit").json()) == CONFIG_GET
    s = cli("config", "set", "--json", "search.limit", "3").json()
    assert keys(s) == CONFIG_SET and keys(s["effective"]) == CONFIG_EFFECTIVE
    u = cli("config", "unset", "--json", "search.limit").json()
    assert keys(u) == CONFIG_UNSET and keys(u["effective"]) == CONFIG_EFFECTIVE
    assert keys(cli("config", "path", "--json").json()) == CONFIG_PATH
    assert keys(d["trust"]) == TRUST


def test_trust(cli: Cli, workspace: Path) -> None:
    (workspace / "memcli.toml").write_text('[llm]\nmodel = "openai/x"\n')
    for args in (["--show"], [], ["--revoke"]):
        assert keys(cli("trust", "--json", *args).json()) == TRUST
    cli("trust")
    listed = cli("trust", "--list", "--json").json()
    assert keys(listed) == TRUST_LIST and all(keys(t) == TRUSTED_FILE for t in listed["trusted"])


def test_doctor(cli: Cli, facts: Path) -> None:
    r = cli("doctor", "--json", "--offline")
    d = r.json()
    assert keys(d) == DOCTOR
    assert [c["name"] for c in d["checks"]] == DOCTOR_CHECKS
    assert all(keys(c) == CHECK for c in d["checks"])
    assert all(c["status"] in ("ok", "note", "problem") for c in d["checks"])
    assert r.exit_code == (0 if d["ok"] else 1)


@pytest.mark.slow
def test_watch_events(workspace: Path) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memcli",
            "-w",
            str(workspace),
            "watch",
            "--json",
            "--debounce",
            "50",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    events: queue.Queue[dict[str, Any] | None] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            events.put(json.loads(line))
        events.put(None)

    threading.Thread(target=read, daemon=True).start()

    def until(kind: str, pred: Any = lambda e: True) -> dict[str, Any]:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                ev = events.get(timeout=1)
            except queue.Empty:
                continue
            assert ev is not None, f"watch exited: {proc.stderr.read() if proc.stderr else ''}"
            if ev["event"] == kind and pred(ev):
                return ev
        raise AssertionError(f"no {kind} event")

    try:
        ready = until("ready")
        assert keys(ready) == WATCH_READY
        (workspace / "memory" / "watched.md").write_text("- a fact seen by watch\n")
        sync = until("sync", lambda e: "memory/watched.md" in e["paths"])
        assert keys(sync) - {"initial"} == WATCH_SYNC
        proc.send_signal(signal.SIGINT)
        assert keys(until("stopped")) == WATCH_STOPPED
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
