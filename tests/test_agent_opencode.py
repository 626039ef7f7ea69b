"""OpenCode: ``agent install opencode`` (its MCP server in ``opencode.json``, memcli's plugin,
the policy in ``AGENTS.md``) undone byte for byte, and the plugin run by Node as OpenCode
loads it: the briefing and the recall in the system prompt, from the real memcli, and a session
saved when it goes idle; OpenCode's sessions read by flush and import, from files and database
rows a real OpenCode run wrote (tests/fixtures/agents/opencode_session.*)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.stub_openai import StubOpenAI

USER_CONFIG = b'{\n  "$schema": "https://opencode.ai/config.json",\n  "mcp": {"db": {"type": "local", "command": ["pgmcp"]}}\n}'  # noqa: E501
#: What OpenCode does with a plugin: load it, call chat.message with the user's message,
#: then experimental.chat.system.transform before each model request of the turn.
RUN_PLUGIN = """
const mod = await import(process.argv[1]);
const hooks = await mod.MemcliPlugin({ directory: process.argv[2] });
const output = { message: { id: "msg_1" }, parts: [{ type: "text", text: process.argv[3] }] };
await hooks["chat.message"]({ sessionID: "ses_1" }, output);
const sys = { system: ["You are OpenCode."] };
await hooks["experimental.chat.system.transform"]({ sessionID: "ses_1" }, sys);
console.log(JSON.stringify(sys.system));
"""


def test_install_merges_and_uninstall_gives_the_bytes_back(cli: Cli, workspace: Path) -> None:
    config = workspace / "opencode.json"
    config.write_bytes(USER_CONFIG)
    r = cli("agent", "install", "opencode", "--json")
    assert r.exit_code == 0, r.stderr
    assert [f["action"] for f in r.json()["files"]] == ["update", "create", "create"]
    data = json.loads(config.read_text())
    assert data["$schema"] == "https://opencode.ai/config.json"
    assert data["mcp"]["db"] == {"type": "local", "command": ["pgmcp"]}
    ours = data["mcp"]["memcli"]
    assert ours["type"] == "local" and ours["enabled"] and ours["command"][-1] == "mcp"
    plugin = workspace / ".opencode" / "plugins" / "memcli.js"
    assert plugin.read_text().startswith("// memcli for OpenCode:")
    assert "memcli:begin" in (workspace / "AGENTS.md").read_text()
    assert {f["action"] for f in cli("agent", "install", "opencode", "--json").json()["files"]} == {
        "unchanged"
    }
    row = next(
        r
        for r in cli("agent", "status", "--json").json()["installed"]
        if (r["agent"], r["scope"]) == ("opencode", "project")
    )
    assert row["hooks"] == ["session-start", "prompt", "session-end"]
    assert row["mcp"] and row["policy"]

    assert cli("agent", "uninstall", "opencode").exit_code == 0
    assert config.read_bytes() == USER_CONFIG
    assert not (workspace / ".opencode").exists() and not (workspace / "AGENTS.md").exists()


def test_a_config_with_comments_is_refused_untouched(cli: Cli, workspace: Path) -> None:
    config = workspace / "opencode.json"
    config.write_text('{\n  // mine\n  "mcp": {}\n}\n')
    r = cli("agent", "install", "opencode")
    assert r.exit_code == 2 and "opencode.json" in r.stderr
    assert config.read_text() == '{\n  // mine\n  "mcp": {}\n}\n'
    assert not (workspace / ".opencode").exists()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("node") is None, reason="the plugin runs in Node")
def test_the_plugin_puts_the_briefing_and_the_recall_in_the_system_prompt(
    cli: Cli, workspace: Path, tmp_path: Path
) -> None:
    assert cli("add", "--type", "decision", "Use Valkey for the session cache.").exit_code == 0
    assert cli("agent", "install", "opencode").exit_code == 0
    plugin = workspace / ".opencode" / "plugins" / "memcli.js"
    # as OpenCode loads it (an ES module), from a copy that says so
    module = tmp_path / "memcli.mjs"
    shutil.copy(plugin, module)

    def run(prompt: str, **env: str) -> list[str]:
        done = subprocess.run(
            ["node", "--input-type=module", "-e", RUN_PLUGIN, str(module), str(workspace), prompt],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, **env},
        )
        assert done.returncode == 0, done.stderr
        return list(json.loads(done.stdout))

    system = run("Which cache do we use for sessions?")
    assert system[0] == "You are OpenCode." and len(system) == 3
    assert "Memory briefing" in system[1] and "Valkey" in system[1]
    assert 'Memory for "Which cache do we use for sessions?"' in system[2]
    # in an agent CLI that memcli runs as its model, nothing
    assert run("Which cache do we use for sessions?", MEMCLI_AGENT_CHILD="1") == [
        "You are OpenCode."
    ]


FIXTURES = Path(__file__).parent / "fixtures" / "agents"


def test_a_session_the_plugin_wrote_reads_as_its_turns() -> None:
    from memcli.flush.conversation import agent_of, parse

    # written by memcli's plugin in a real 'opencode run' (its API's {info, parts}): the
    # tool call, its result and the step records are not turns
    text = (FIXTURES / "opencode_session.jsonl").read_text()
    assert agent_of(text) == "opencode"
    assert [(m.role, m.content) for m in parse(text)] == [
        ("user", "Which host is the staging database on?"),
        ("assistant", "Done."),
    ]


def opencode_db(folder: Path, workspace: Path) -> str:
    """OpenCode's database in the user's data folder, holding the real session of the
    fixture as run in ``workspace`` and changed now; its id."""
    data = Path(os.environ["XDG_DATA_HOME"]) / "opencode"
    data.mkdir(parents=True)
    with sqlite3.connect(data / "opencode.db") as db:
        db.executescript((FIXTURES / "opencode_session.sql").read_text())
        now = int(time.time() * 1000)
        db.execute("UPDATE session SET directory = ?, time_updated = ?", (str(folder), now))
        (session,) = db.execute("SELECT id FROM session").fetchone()
    return str(session)


def test_import_reads_opencode_s_database(
    cli: Cli, workspace: Path, openai_stub: StubOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "api").mkdir()
    session = opencode_db(workspace / "api", workspace)
    r = cli("agent", "import", "--agent", "opencode", "--dry-run", "--json")
    assert r.exit_code == 0, r.stderr
    [found] = r.json()["sessions"]
    assert (found["agent"], found["session_id"]) == ("opencode", session)
    assert found["cwd"] == str(workspace / "api")

    openai_stub.chat_replies = [json.dumps({"facts": [{"text": "Staging: db-7", "type": "fact"}]})]
    cli("config", "set", "llm.model", "openai/stub-chat")
    monkeypatch.setenv("MEMCLI_LLM_API_BASE", openai_stub.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    r = cli("agent", "import", "--agent", "opencode", "--json")
    assert r.exit_code == 0, r.stderr
    assert [(s["session_id"], s["new_turns"]) for s in r.json()["sessions"]] == [(session, 2)]
    [sent] = [json.dumps(q["body"]["messages"]) for q in openai_stub.requests]
    assert "Which host is the staging database on?" in sent and "Done." in sent
    again = cli("agent", "import", "--agent", "opencode", "--json").json()["sessions"]
    assert [s["new_turns"] for s in again] == [0]  # never sent twice


def test_a_session_elsewhere_is_not_imported(cli: Cli, workspace: Path, tmp_path: Path) -> None:
    opencode_db(tmp_path / "elsewhere", workspace)
    r = cli("agent", "import", "--agent", "opencode", "--dry-run", "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["sessions"] == []


#: What OpenCode does when a turn is over: the ``session.idle`` event, its API client
#: answering the session's messages (the fixture's records, as a real run's API gave them).
RUN_IDLE = """
import { readFileSync } from "node:fs";
const records = readFileSync(process.argv[3], "utf-8").trim().split("\\n").map(JSON.parse);
const parentID = process.argv[4] || undefined; // a sub-agent's session has a parent
const session = {
  get: async ({ path }) => ({ data: { id: path.id, parentID } }),
  messages: async ({ path }) => ({ data: records, id: path.id }),
};
const client = { session };
const mod = await import(process.argv[1]);
const hooks = await mod.MemcliPlugin({ client, directory: process.argv[2] });
await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_e2e1" } } });
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="the plugin runs in Node")
def test_the_plugin_saves_a_session_when_it_goes_idle(
    cli: Cli,
    workspace: Path,
    tmp_path: Path,
    openai_stub: StubOpenAI,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert cli("agent", "install", "opencode").exit_code == 0
    module = tmp_path / "memcli.mjs"
    shutil.copy(workspace / ".opencode" / "plugins" / "memcli.js", module)
    fact = "The staging database is db-stage-7."
    openai_stub.chat_replies = [json.dumps({"facts": [{"text": fact, "type": "fact"}]})]
    env = {
        **os.environ,
        "MEMCLI_LLM_MODEL": "openai/stub-chat",
        "MEMCLI_LLM_API_BASE": openai_stub.base_url,
        "OPENAI_API_KEY": "sk-test",
    }

    def idle(parent: str = "", **extra: str) -> None:
        done = subprocess.run(
            ["node", "--input-type=module", "-e", RUN_IDLE, str(module), str(workspace),
             str(FIXTURES / "opencode_session.jsonl"), parent],
            capture_output=True, text=True, timeout=120, env={**env, **extra},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr

    # in an agent CLI that memcli runs as its model: nothing written, nothing saved
    idle(MEMCLI_AGENT_CHILD="1")
    written = Path(os.environ["XDG_DATA_HOME"]) / "opencode" / "memcli-sessions" / "ses_e2e1.jsonl"
    assert not written.exists()
    idle("ses_parent")  # a sub-agent's session: its parent's work, not saved alone
    assert not written.exists()
    idle()
    records = [
        json.loads(x) for x in (FIXTURES / "opencode_session.jsonl").read_text().splitlines()
    ]
    texts = [[p for p in r["parts"] if p["type"] == "text"] for r in records]
    assert [r["parts"] for r in map(json.loads, written.read_text().splitlines())] == texts
    assert any(p["type"] == "tool" for r in records for p in r["parts"])  # not written
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not openai_stub.requests:
        time.sleep(0.2)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and fact not in "".join(
        p.read_text() for p in (workspace / "memory").rglob("*.md")
    ):
        time.sleep(0.2)
    [sent] = [json.dumps(r["body"]["messages"]) for r in openai_stub.requests]
    assert "Which host is the staging database on?" in sent and "Done." in sent
    assert fact in "".join(p.read_text() for p in (workspace / "memory").rglob("*.md"))
