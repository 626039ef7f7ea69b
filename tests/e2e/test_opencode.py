"""memcli and the real OpenCode CLI (``opencode run``), offline: a session against a loopback
Anthropic Messages API (a provider of its own in ``opencode.json``, whose SDK,
``@ai-sdk/anthropic``, OpenCode carries inside its binary: nothing is installed from npm),
the config install writes is one OpenCode reads (its own ``opencode mcp list`` connects to
memcli's server), and uninstall gives the files back byte for byte."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.e2e.conftest import TIMEOUT, agent, memcli, memory_text, project, quiet_env
from tests.e2e.model_api import ModelAPI
from tests.stub_openai import StubOpenAI

CLOSED = "http://127.0.0.1:9/"
USER_CONFIG = b'{\n  "$schema": "https://opencode.ai/config.json",\n  "autoupdate": false\n}'


FACT = "Use Valkey for the session cache."


def opencode(root: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    home = Path(os.environ["HOME"])
    return subprocess.run(
        [agent("opencode"), *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
        env=quiet_env(
            XDG_CONFIG_HOME=str(home / ".config"),
            OPENCODE_DISABLE_MODELS_FETCH="1",
            OPENCODE_DISABLE_AUTOUPDATE="1",
            # OpenCode installs its plugin SDK into a config folder with plugins: from a
            # registry that answers nothing here, so that no test reaches the network
            NPM_CONFIG_REGISTRY=CLOSED,
            BUN_CONFIG_REGISTRY=CLOSED,
            # and at once: npm's retries of a refused fetch held each start a minute
            NPM_CONFIG_FETCH_RETRIES="0",
            NPM_CONFIG_FETCH_RETRY_MINTIMEOUT="100",
            NPM_CONFIG_FETCH_RETRY_MAXTIMEOUT="200",
            PWD=str(root),  # OpenCode runs in $PWD, not in the folder it was started in
            **extra,
        ),
    )


def with_model(root: Path, model: ModelAPI) -> None:
    """The project's ``opencode.json``: a provider ``stub`` on the loopback Anthropic API (a
    dummy key) as the model, updates and sharing off."""
    config = {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "model": "stub/stub-model",
        "provider": {
            "stub": {
                "npm": "@ai-sdk/anthropic",
                "name": "Loopback",
                "options": {"baseURL": f"{model.base_url}/v1", "apiKey": "sk-e2e"},
                "models": {"stub-model": {"name": "Stub", "tool_call": True}},
            }
        },
    }
    (root / "opencode.json").write_text(json.dumps(config, indent=2) + "\n")


def ask(root: Path, prompt: str, **env: str) -> subprocess.CompletedProcess[str]:
    # the words one by one: 'opencode run' quotes an argument holding spaces
    run = opencode(root, "run", *prompt.split(), **env)
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    return run


def turns(model: ModelAPI) -> list[dict[str, Any]]:
    """The session's model requests (those offering tools: not its title request)."""
    return [b for b in model.bodies("messages") if b.get("tools")]


def wait_for(check: Callable[[], bool], seconds: float = 90) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not check():
        time.sleep(0.2)
    return check()


def test_briefing_recall_and_a_tool_round_trip(tmp_path: Path, model: ModelAPI) -> None:
    root = project(tmp_path, "app", FACT)
    with_model(root, model)
    run = memcli(root, "agent", "install", "opencode")
    assert run.returncode == 0, run.stderr
    model.tool_query = "session cache"
    run = ask(root, "Which cache do we use for sessions?")
    assert model.final_text in run.stdout, run.stdout + run.stderr[-2000:]
    first, *rest = turns(model)
    system = json.dumps(first["system"])
    # the plugin's briefing and recall in the system prompt of the turn's first request
    assert system.count("BEGIN MEMORY") == 2 and "Valkey" in system, system[-3000:]
    assert "Memory for" in system and "Memory briefing" in system
    # not in the user's message: OpenCode's own
    assert "BEGIN MEMORY" not in json.dumps(first["messages"])
    names = {t["name"] for t in first["tools"]}
    assert {"memcli_search", "memcli_context", "memcli_add"} <= names
    # the search ran through memcli's MCP server and its framed answer went back
    answers = json.dumps([m for b in rest for m in b["messages"]])
    assert "tool_result" in answers and "BEGIN MEMORY" in answers, answers[-2000:]
    assert "Valkey" in answers and "Fact ids" in answers


def test_a_session_s_facts_are_saved_once_and_import_reads_opencode_s_database(
    tmp_path: Path, model: ModelAPI, openai_stub: StubOpenAI
) -> None:
    root = project(tmp_path, "app", FACT)
    with_model(root, model)
    assert memcli(root, "agent", "install", "opencode").returncode == 0
    fact = "The staging database is db-stage-7."
    openai_stub.chat_replies = [json.dumps({"facts": [{"text": fact, "type": "fact"}]})]
    llm = {
        "MEMCLI_LLM_MODEL": "openai/stub-chat",
        "MEMCLI_LLM_API_BASE": openai_stub.base_url,
        "OPENAI_API_KEY": "sk-e2e",
    }
    ask(root, "Remember: the staging database is db-stage-7.", **llm)
    log = root / ".memcli" / "agent.log"
    assert wait_for(lambda: fact in memory_text(root)), log.read_text() if log.exists() else ""
    time.sleep(2)  # a second flush of the same turns would have come by now
    sent = [
        json.dumps(r["body"]["messages"])
        for r in openai_stub.requests
        if r["path"].endswith("/chat/completions")
    ]
    assert len(sent) == 1 and "db-stage-7" in sent[0], sent
    # the session's own turns: the user's and the model's, no briefing or recall
    assert "BEGIN MEMORY" not in sent[0] and model.final_text in sent[0], sent[0]
    assert "flushed session" in log.read_text()
    # OpenCode's own database holds the session; import reads it and finds nothing new
    data = Path(os.environ["HOME"]) / ".local" / "share" / "opencode"
    with sqlite3.connect(data / "opencode.db") as db:
        query = "SELECT id FROM session WHERE directory = ?"
        (session,) = db.execute(query, (str(root),)).fetchone()
    env = {**os.environ, **llm}
    done = memcli(root, "agent", "import", "--agent", "opencode", "--json", env=env)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["sessions"]
    assert [(r["session_id"], r["new_turns"]) for r in rows] == [(session, 0)], rows
    assert len(openai_stub.requests) == len(sent)


def test_opencode_reads_the_server_and_uninstall_gives_the_bytes_back(tmp_path: Path) -> None:
    root = project(tmp_path, "app", "Use Valkey for the session cache.")
    (root / "opencode.json").write_bytes(USER_CONFIG)
    run = memcli(root, "agent", "install", "opencode")
    assert run.returncode == 0, run.stderr
    listed = opencode(root, "mcp", "list")
    said = listed.stdout + listed.stderr
    assert listed.returncode == 0 and "memcli" in said and "connected" in said, said
    status = json.loads(memcli(root, "agent", "status", "--json").stdout)
    row = next(
        r for r in status["installed"] if (r["agent"], r["scope"]) == ("opencode", "project")
    )
    assert row["mcp"] and row["policy"]
    assert row["hooks"] == ["session-start", "prompt", "session-end"]
    assert memcli(root, "agent", "uninstall", "opencode").returncode == 0
    assert (root / "opencode.json").read_bytes() == USER_CONFIG
    # memcli's files are gone (what OpenCode itself wrote in .opencode/ stays)
    assert not (root / ".opencode" / "plugins").exists() and not (root / "AGENTS.md").exists()
    assert "memcli" not in opencode(root, "mcp", "list").stdout


def test_user_scope_is_read_from_opencode_s_config_folder(tmp_path: Path) -> None:
    root = project(tmp_path, "app", "Use Valkey for the session cache.")
    run = memcli(root, "agent", "install", "opencode", "--scope", "user")
    assert run.returncode == 0, run.stderr
    folder = Path(os.environ["HOME"]) / ".config" / "opencode"
    assert (folder / "plugins" / "memcli.js").is_file()
    listed = opencode(root, "mcp", "list")
    assert "memcli" in listed.stdout + listed.stderr
    assert memcli(root, "agent", "uninstall", "opencode", "--scope", "user").returncode == 0
    assert not (folder / "plugins").exists() and not (folder / "AGENTS.md").exists()
    assert "memcli" not in (folder / "opencode.json").read_text()  # OpenCode's own file
