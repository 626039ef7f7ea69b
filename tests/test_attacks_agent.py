"""What a coding agent names is untrusted too: attacks run end to end with the real ``memcli``
process, a real ``git clone`` of a hostile repository and the loopback OpenAI-compatible server
that records every request.

3. Files the agent names: a hook payload's ``transcript_path`` and the MCP ``flush`` tool's
   ``path`` are read only inside the workspace or the agents' own transcript folders (Claude
   Code's ``$CLAUDE_CONFIG_DIR/projects``, Codex's ``$CODEX_HOME/sessions``), regular files
   only, with a size cap; ``.netrc`` and ``.pgpass`` passwords are redacted besides.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agent_helpers import MEMCLI, run_hook, wait_for_log
from tests.stub_openai import StubOpenAI
from tests.test_attacks import CONV, TOKEN, hostile_clone, memcli

# Built at run time so that no scanner mistakes this file for a leak.
NETRC_SECRET = "nEtRc" + "Pw7731xq"
PG_SECRET = "pGpAsS" + "9914zz"
NETRC = f"machine api.github.com login alice password {NETRC_SECRET}\n"
PGPASS = f"db.internal:5432:app:alice:{PG_SECRET}\n"
AGENTS = Path(__file__).parent / "fixtures" / "agents"


@pytest.fixture
def server() -> Iterator[StubOpenAI]:
    with StubOpenAI() as stub:
        yield stub


@pytest.fixture
def home() -> Path:
    """The user's (temporary) home, with the credentials files an agent could name."""
    home = Path(os.environ["HOME"])  # conftest's isolated_env: never the real one
    for name, text in ((".netrc", NETRC), (".pgpass", PGPASS)):
        (home / name).write_text(text)
        (home / name).chmod(0o600)
    return home


def llm(monkeypatch: pytest.MonkeyPatch, server: StubOpenAI) -> None:
    monkeypatch.setenv("MEMCLI_LLM_MODEL", "openai/stub-chat")
    monkeypatch.setenv("MEMCLI_LLM_API_BASE", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


def sent(server: StubOpenAI) -> str:
    return json.dumps([q["body"] for q in server.requests])


# -- 3. files the agent names -------------------------------------------------------------------
def refused(line: str) -> bool:
    return any(
        why in line
        for why in ("is outside the workspace", "not a regular file", "not a conversation file")
    )


def test_3_a_hook_reads_no_file_outside_the_agents_folders(
    tmp_path: Path, home: Path, server: StubOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each payload names a file it must not read: the hook exits 0, logs one refusal and
    starts nothing (no flush process, nothing sent); a transcript where Claude Code keeps
    them ($CLAUDE_CONFIG_DIR honoured) is flushed."""
    llm(monkeypatch, server)
    clone = hostile_clone(
        tmp_path,
        {".env": f"GITHUB_TOKEN={TOKEN}\n"},
        links={"memory/t.jsonl": str(home / ".netrc")},  # a committed link to the user's file
    )
    config = home / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    projects = config / "projects" / "-work-clone"
    projects.mkdir(parents=True)
    (projects / "evil.jsonl").symlink_to(home / ".netrc")
    default = home / ".claude" / "projects" / "-work-clone" / "s.jsonl"
    default.parent.mkdir(parents=True)
    shutil.copy(AGENTS / "claude_session.jsonl", default)
    fifo = clone / "memory" / "fifo.jsonl"
    os.mkfifo(fifo)
    targets = [
        str(home / ".netrc"),
        "~/.pgpass",
        "/etc/passwd",
        str(projects / "evil.jsonl"),  # a link in the agent's folder, to a file outside
        str(projects / ".." / ".." / ".." / ".netrc"),
        str(default),  # in the default folder, not the one configured
        str(clone / "memory" / "t.jsonl"),
        str(clone / ".env"),
        str(clone / ".git" / "config"),
        str(fifo),  # in the workspace, but a pipe: the flush would wait forever
        "/proc/self/environ",
        "/dev/zero",  # read until memory ran out
    ]
    log = clone / ".memcli" / "agent.log"
    for i, target in enumerate(targets):
        payload = {"session_id": f"s{i}", "transcript_path": target, "cwd": str(clone)}
        proc = run_hook([*MEMCLI, "agent", "hook", "session-end"], payload, clone)
        assert proc.returncode == 0 and proc.stdout == "", proc.stderr
        last = (log.read_text() if log.exists() else "").splitlines()[-1:]
        assert last and "transcript_path" in last[0] and refused(last[0]), (target, last)
    # the transcript of a real session, where Claude Code keeps it, is read and flushed
    server.chat_replies = ['{"facts": []}']
    transcript = projects / "5a0ddcd0.jsonl"
    shutil.copy(AGENTS / "claude_session.jsonl", transcript)
    payload = {"session_id": "ok", "transcript_path": str(transcript), "cwd": str(clone)}
    assert run_hook([*MEMCLI, "agent", "hook", "session-end"], payload, clone).returncode == 0
    wait_for_log(clone, "flushed session ok")
    assert len(server.requests) == 1  # the one flush allowed, and nothing of the others
    body = sent(server)
    assert NETRC_SECRET not in body and PG_SECRET not in body and "root:x:0:0" not in body
    assert TOKEN not in body


def _mcp(root: Path, calls: list[dict[str, str]], refusals: int) -> list[Any]:
    """The results of ``flush`` tool calls to a real ``memcli mcp``; stops when one of the
    first ``refusals`` calls is not an error (a file read that should not have been)."""
    pytest.importorskip("mcp")
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memcli", "-w", str(root), "mcp"], env=dict(os.environ)
    )
    results: list[Any] = []

    async def main() -> None:
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    for i, args in enumerate(calls):
                        results.append(await s.call_tool("flush", args))
                        if i < refusals and not results[-1].is_error:
                            return

    anyio.run(main)
    return results


def _text(result: Any) -> str:
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def test_3_the_mcp_flush_tool_reads_no_file_outside_the_agents_folders(
    tmp_path: Path, home: Path, server: StubOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm(monkeypatch, server)
    clone = hostile_clone(tmp_path, {".env": f"GITHUB_TOKEN={TOKEN}\n"})
    codex = home / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(codex))
    rollout = codex / "sessions" / "2026" / "11" / "20" / "rollout-2026-11-20T09-00-00-x.jsonl"
    rollout.parent.mkdir(parents=True)
    shutil.copy(AGENTS / "codex_rollout.jsonl", rollout)
    (clone / "memory" / "conv.json").write_text(CONV)
    (tmp_path / "secrets.json").write_text(CONV.replace("Valkey", NETRC_SECRET))
    os.mkfifo(clone / "memory" / "fifo.json")
    bad = [
        str(home / ".netrc"),
        "~/.pgpass",
        "/etc/passwd",
        "../secrets.json",  # relative to the workspace: beside it
        ".env",
        str(clone / "memory" / "fifo.json"),
        "/dev/zero",
    ]
    server.chat_replies = ['{"facts": []}', '{"facts": []}']
    calls = [{"path": p} for p in bad] + [{"path": str(rollout)}, {"path": "memory/conv.json"}]
    results = _mcp(clone, calls, refusals=len(bad))
    for path, result in zip(bad, results, strict=False):
        text = _text(result)
        assert result.is_error and refused(text) and "\n" not in text.strip(), (path, text)
    assert len(results) == len(calls)
    assert not results[-2].is_error and not results[-1].is_error  # an agent's session, a file here
    body = sent(server)
    assert len(server.requests) == 2 and "Valkey" in body
    assert NETRC_SECRET not in body and PG_SECRET not in body and "root:x:0:0" not in body
    assert TOKEN not in body


def test_3_netrc_and_pgpass_lines_are_redacted(tmp_path: Path, server: StubOpenAI) -> None:
    """The second guard: a conversation quoting the files sends neither password, and a
    fact holding a .netrc line is stored redacted."""
    clone = hostile_clone(tmp_path, {})
    spread = f"machine ci.example\n  login bot\n  password {NETRC_SECRET}x\n"
    conv = json.dumps(
        [
            {"role": "user", "content": f"cat ~/.netrc ~/.pgpass\n{NETRC}{PGPASS}{spread}"},
            {"role": "assistant", "content": f"Your netrc says: {NETRC.strip()}. Valkey then."},
        ]
    )
    mine = {"MEMCLI_LLM_MODEL": "openai/stub-chat", "MEMCLI_LLM_API_BASE": server.base_url}
    server.chat_replies = ['{"facts": []}']
    r = memcli(clone, "flush", "--dry-run", "-", input=conv, OPENAI_API_KEY="sk-test", **mine)
    assert r.code == 0, r.err
    body = sent(server)
    assert "api.github.com" in body and "db.internal:5432:app:alice:" in body
    assert NETRC_SECRET not in body and PG_SECRET not in body
    assert "[REDACTED:netrc-password]" in body and "[REDACTED:pgpass-password]" in body
    r = memcli(clone, "add", "--json", NETRC.strip())
    assert r.code == 0 and r.json()["redactions"] == ["netrc-password"], r.out + r.err
    assert NETRC_SECRET not in "".join(p.read_text() for p in (clone / "memory").rglob("*.md"))
