"""``memcli doctor``: real SQLite files, real git repositories, the loopback stub over HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli
from tests.stub_openai import StubOpenAI


def checks(cli: Cli, *args: str) -> tuple[int, dict[str, dict[str, Any]]]:
    r = cli("doctor", "--json", *args)
    assert r.exit_code in (0, 1), r.stderr
    d = r.json()
    assert d["ok"] is (r.exit_code == 0) and d["problems"] == sum(
        c["status"] == "problem" for c in d["checks"]
    )
    return r.exit_code, {c["name"]: c for c in d["checks"]}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.fixture
def indexed(cli: Cli, workspace: Path) -> Path:
    assert cli("add", "Use Valkey for the cache.").exit_code == 0
    assert cli("index").exit_code == 0
    return workspace


@pytest.fixture
def embed_stub(openai_stub: StubOpenAI, monkeypatch: pytest.MonkeyPatch) -> StubOpenAI:
    monkeypatch.setenv("MEMCLI_EMBEDDING_MODEL", "openai/stub-embed")
    monkeypatch.setenv("MEMCLI_EMBEDDING_API_BASE", openai_stub.base_url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    return openai_stub


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_healthy_workspace(cli: Cli, indexed: Path) -> None:
    code, c = checks(cli)
    assert code == 0
    assert c["python"]["status"] == "ok" and c["python"]["details"]["version"]
    assert c["sqlite"]["details"]["driver"] in ("sqlite3", "sqlean")
    assert c["fts5"]["status"] == "ok" and c["fts5"]["details"]["available"] is True
    assert c["workspace"]["details"]["root"] == str(indexed)
    index = c["index"]
    assert index["status"] == "ok" and index["details"]["integrity"] == "ok"
    assert index["details"]["files"] == index["details"]["files_on_disk"] == 2
    assert index["details"]["chunks"] == index["details"]["fts_rows"] > 0
    assert c["embedding"]["status"] == "ok" and "keyword" in c["embedding"]["summary"]
    assert c["llm"]["status"] == "note" and c["llm"]["hint"]
    assert c["cache"]["details"]["path"].endswith("embeddings.db")
    assert c["sqlite_vec"]["status"] in ("ok", "note")  # only needed with a model


@pytest.mark.slow
def test_index_check_says_how_searches_check_freshness(cli: Cli, indexed: Path) -> None:
    _, c = checks(cli)
    details = c["index"]["details"]
    assert (details["freshness"], details["quick_check"]) == ("auto", False)  # 2 files
    assert c["index"]["summary"].endswith("searches compare every file with it")
    assert cli("config", "set", "index.full_check_files", "2").exit_code == 0
    _, c = checks(cli)
    assert c["index"]["details"]["quick_check"] is True
    assert "quick check and compare every file every 60 s" in c["index"]["summary"]
    assert cli("config", "set", "index.sync_on_search", "false").exit_code == 0
    _, c = checks(cli)
    assert c["index"]["summary"].endswith("searches trust the index (index.sync_on_search is off)")


def test_human_output_lists_checks_and_hints(cli: Cli, workspace: Path) -> None:
    r = cli("doctor", "--offline")
    lines = r.stdout.splitlines()
    assert lines[0] == "check\tstatus\tsummary"
    assert any(line.startswith("index\t") for line in lines)
    assert "llm: memcli config set llm.model" in r.stdout


@pytest.mark.slow
def test_changed_files_are_a_problem_only_without_sync_on_search(
    cli: Cli, indexed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (indexed / "memory" / "new.md").write_text("- a fact added by hand\n")
    code, c = checks(cli)
    assert code == 0 and c["index"]["status"] == "note"
    assert c["index"]["details"]["dirty"] == ["memory/new.md"]
    monkeypatch.setenv("MEMCLI_INDEX_SYNC_ON_SEARCH", "false")
    code, c = checks(cli)
    assert code == 1 and c["index"]["status"] == "problem"
    assert c["index"]["hint"] == "run 'memcli index'"
    assert cli("index").exit_code == 0
    assert checks(cli)[0] == 0


def test_never_built_index(cli: Cli, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCLI_INDEX_SYNC_ON_SEARCH", "0")
    code, c = checks(cli)
    assert code == 1 and c["index"]["summary"] == "not built yet"
    assert not (workspace / ".memcli" / "index.db").exists()  # doctor creates nothing


def test_corrupt_index_is_reported_and_left_alone(cli: Cli, indexed: Path) -> None:
    db = indexed / ".memcli" / "index.db"
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    data = bytearray(db.read_bytes())
    data[100:4096] = b"\xde\xad\xbe\xef" * ((4096 - 100) // 4)  # wreck the schema page
    db.write_bytes(bytes(data))
    before = db.read_bytes()
    code, c = checks(cli)
    assert code == 1 and c["index"]["status"] == "problem"
    assert "memcli index --force" in c["index"]["hint"]
    assert db.read_bytes() == before  # read-only: the next memcli command repairs it


@pytest.mark.slow
def test_an_index_built_for_another_user_is_reported_not_read(
    cli: Cli, indexed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = indexed / ".memcli" / "index.db"
    before = db.read_bytes()
    monkeypatch.setenv("MEMCLI_CACHE_DIR", str(tmp_path / "another-cache"))  # another key
    _code, c = checks(cli)
    assert c["index"]["status"] == "note" and "files" not in c["index"]["details"]
    assert "not built by memcli for this user" in c["index"]["summary"]
    assert db.read_bytes() == before  # read-only: the next memcli command rebuilds it


def test_no_workspace(tmp_path: Path) -> None:
    code, c = checks(Cli(tmp_path / "nowhere"))
    assert code == 1 and c["workspace"]["status"] == "problem"
    assert c["index"]["status"] == "note" and c["hooks"]["status"] == "note"
    assert c["python"]["status"] == c["fts5"]["status"] == "ok"  # the rest still ran


def test_broken_config_is_a_problem_not_a_crash(cli: Cli, workspace: Path) -> None:
    (workspace / "memcli.toml").write_text("[search]\nlimit = 'many'\n")
    code, c = checks(cli)
    assert code == 1 and c["config"]["status"] == "problem"
    assert "search.limit" in c["config"]["summary"]
    assert c["index"]["status"] in ("ok", "note")


def test_provider_reachable(cli: Cli, indexed: Path, embed_stub: StubOpenAI) -> None:
    _code, c = checks(cli)
    emb = c["embedding"]
    assert emb["status"] == "ok", emb
    assert emb["details"]["reachable"] is True and emb["details"]["status"] == 200
    assert emb["details"]["models"] == ["stub-embed", "stub-chat"]
    assert embed_stub.count("/v1/models") == 1
    assert embed_stub.count("/v1/embeddings") == 0  # a GET of /models only, no paid call
    assert emb["details"]["search"]["mode"] in ("keyword", "hybrid")


def test_model_the_server_does_not_list(
    cli: Cli, workspace: Path, embed_stub: StubOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_EMBEDDING_MODEL", "openai/nomic-embed-text")
    _code, c = checks(cli)
    assert c["embedding"]["status"] == "note" and "stub-embed" in c["embedding"]["hint"]


def test_unreachable_provider(cli: Cli, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCLI_LLM_MODEL", "openai/chat")
    monkeypatch.setenv("MEMCLI_LLM_API_BASE", f"http://127.0.0.1:{free_port()}/v1")
    code, c = checks(cli)
    assert code == 1 and c["llm"]["status"] == "problem"
    assert "unreachable" in c["llm"]["summary"] and "llm.api_base" in c["llm"]["hint"]


def test_hanging_provider_times_out(cli: Cli, workspace: Path, embed_stub: StubOpenAI) -> None:
    embed_stub.hang_seconds = 30
    code, c = checks(cli, "--timeout", "0.5")
    assert code == 1 and "no answer within 0.5s" in c["embedding"]["summary"]


def test_rejected_credentials(
    cli: Cli, workspace: Path, embed_stub: StubOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_EMBEDDING_API_KEY_ENV", "STUB_KEY")
    monkeypatch.setenv("STUB_KEY", "sk-test-1234")
    embed_stub.fail_status, embed_stub.fail_times = 401, 1
    code, c = checks(cli)
    assert code == 1 and "HTTP 401" in c["embedding"]["summary"]
    assert embed_stub.requests[-1]["headers"].get("authorization") == "Bearer sk-test-1234"
    assert "sk-test-1234" not in str(c)


def test_missing_key_variable(cli: Cli, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCLI_EMBEDDING_MODEL", "openai/text-embedding-3-small")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, c = checks(cli)
    assert code == 1 and "OPENAI_API_KEY" in c["embedding"]["summary"]
    monkeypatch.setenv("MEMCLI_EMBEDDING_API_KEY_ENV", "MY_EMBED_KEY")
    code, c = checks(cli)
    assert code == 1 and "$MY_EMBED_KEY" in c["embedding"]["summary"]
    monkeypatch.setenv("MY_EMBED_KEY", "x")
    code, c = checks(cli)
    assert c["embedding"]["status"] == "note"  # hosted, no api_base: not probed
    assert "not checked" in c["embedding"]["summary"]


def test_offline_contacts_nobody(cli: Cli, workspace: Path, embed_stub: StubOpenAI) -> None:
    _code, c = checks(cli, "--offline")
    assert c["embedding"]["status"] == "note" and "--offline" in c["embedding"]["summary"]
    assert embed_stub.requests == []


def test_bad_timeout_is_usage_error(cli: Cli) -> None:
    assert cli("doctor", "--timeout", "0").exit_code == 2


def test_hooks(cli: Cli, workspace: Path) -> None:
    _, c = checks(cli)
    assert c["hooks"]["status"] == "note" and "not a git repository" in c["hooks"]["summary"]
    git(workspace, "init", "-q")
    _, c = checks(cli)
    assert c["hooks"]["status"] == "note" and c["hooks"]["hint"] == "memcli hooks install"
    assert cli("hooks", "install").exit_code == 0
    _, c = checks(cli)
    assert c["hooks"]["status"] == "ok"
    hook = workspace / ".git" / "hooks" / "post-commit"
    hook.write_text(hook.read_text().replace("index", "index --force", 1))
    code, c = checks(cli)
    assert code == 1 and c["hooks"]["status"] == "problem"
    assert "post-commit" in c["hooks"]["summary"]


def test_cache_size(cli: Cli, workspace: Path) -> None:
    _, c = checks(cli)
    assert c["cache"]["status"] == "ok" and c["cache"]["details"]["max_mb"] == 512.0
    assert c["cache"]["details"]["entries"] == 0


def test_doctor_does_not_import_litellm(workspace: Path, openai_stub: StubOpenAI) -> None:
    env_cmd = [
        sys.executable,
        "-X",
        "importtime",
        "-m",
        "memcli",
        "-w",
        str(workspace),
        "doctor",
        "--json",
    ]
    env = dict(
        os.environ,
        MEMCLI_EMBEDDING_MODEL="openai/stub-embed",
        MEMCLI_EMBEDDING_API_BASE=openai_stub.base_url,
        NO_PROXY="127.0.0.1",
    )
    r = subprocess.run(env_cmd, capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode in (0, 1), r.stderr[-400:]
    imported = {
        line.rsplit("|", 1)[1].strip().split(".")[0]
        for line in r.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "memcli" in imported and "urllib" in imported
    assert "litellm" not in imported and "openai" not in imported
    assert openai_stub.count("/v1/models") == 1
