"""memcli inside the real Gemini CLI (``gemini -p``), against a loopback Gemini API."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.e2e.conftest import (
    TIMEOUT,
    agent,
    counting_hooks,
    hook_runs,
    memcli,
    memory_text,
    project,
    quiet_env,
)
from tests.e2e.model_api import ModelAPI
from tests.stub_openai import StubOpenAI

FACT = "Use Valkey for the session cache."


def gemini_home() -> Path:
    return Path(os.environ["HOME"]) / ".gemini"


def configure(*trusted: Path) -> None:
    """The user's Gemini CLI settings: an API key login (the key is a dummy, the API the
    loopback one), no telemetry, usage statistics or update checks; ``trusted`` folders (Gemini
    CLI reads a project's .gemini/ only in a trusted folder)."""
    home = gemini_home()
    home.mkdir(parents=True, exist_ok=True)
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "telemetry": {"enabled": False},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }
    (home / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")
    folders = {str(root): "TRUST_FOLDER" for root in trusted}
    (home / "trustedFolders.json").write_text(json.dumps(folders))


def gemini(root: Path, model: ModelAPI, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    run = subprocess.run(
        [agent("gemini"), *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
        env=quiet_env(
            GEMINI_API_KEY="e2e-dummy-key",
            GOOGLE_GEMINI_BASE_URL=model.base_url,
            GEMINI_CLI_NO_RELAUNCH="true",
            **env,
        ),
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return run


def ask(root: Path, model: ModelAPI, prompt: str, **env: str) -> subprocess.CompletedProcess[str]:
    # a model named: no routing requests to a classifier model before the turn
    return gemini(root, model, "-p", prompt, "-m", "gemini-2.5-flash", **env)


def bodies(model: ModelAPI) -> list[dict[str, Any]]:
    with model._lock:
        return [r["body"] for r in model.requests if "GenerateContent" in r["path"]]


def tool_names(body: dict[str, Any]) -> list[str]:
    return [
        str(f.get("name"))
        for t in body.get("tools") or []
        for f in t.get("functionDeclarations") or []
    ]


def wait_for(check: Any, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not check():
        time.sleep(0.2)
    return check()


def test_briefing_recall_and_a_tool_round_trip(tmp_path: Path, model: ModelAPI) -> None:
    root = project(tmp_path, "app", FACT)
    configure(root)
    run = memcli(root, "agent", "install", "gemini")
    assert run.returncode == 0, run.stderr
    assert "trusted folder" in run.stderr
    model.tool_query = "session cache"
    run = ask(root, model, "Which cache do we use for sessions?")
    assert model.final_text in run.stdout
    first, *rest = bodies(model)
    said = json.dumps(first["contents"])
    # the SessionStart briefing and the BeforeAgent recall reach the model in the first
    # request (Gemini CLI escapes a hook's < and > in its <hook_context>)
    assert said.count("BEGIN MEMORY") == 2 and "Valkey" in said, said[-3000:]
    # memcli's read-only tools are offered to a headless run, and the search runs unasked
    assert {"mcp_memcli_search", "mcp_memcli_context"} <= set(tool_names(first))
    assert "mcp_memcli_add" not in tool_names(first)  # a writing tool asks: not headless
    answers = json.dumps([c for b in rest for c in b["contents"]])
    assert "functionResponse" in answers and "BEGIN MEMORY" in answers, answers[-2000:]
    assert "Valkey" in answers and "Fact ids" in answers


def test_a_session_end_saves_its_facts_once(
    tmp_path: Path, model: ModelAPI, openai_stub: StubOpenAI
) -> None:
    root = project(tmp_path, "app", FACT)
    configure(root)
    assert memcli(root, "agent", "install", "gemini").returncode == 0
    fact = "The staging database is db-stage-7."
    openai_stub.chat_replies = [json.dumps({"facts": [{"text": fact, "type": "fact"}]})]
    llm = {
        "MEMCLI_LLM_MODEL": "openai/stub-chat",
        "MEMCLI_LLM_API_BASE": openai_stub.base_url,
        "OPENAI_API_KEY": "sk-e2e",
    }
    ask(root, model, "Remember: the staging database is db-stage-7.", **llm)
    log = root / ".memcli" / "agent.log"
    assert wait_for(lambda: fact in memory_text(root)), log.read_text() if log.exists() else ""
    time.sleep(2)  # a second flush of the same turns would have come by now
    sent = [
        json.dumps(r["body"]["messages"])
        for r in openai_stub.requests
        if r["path"].endswith("/chat/completions")
    ]
    assert len(sent) == 1 and "db-stage-7" in sent[0], sent
    # the session's own turns only: no briefing, recall or Gemini CLI's session context
    assert "BEGIN MEMORY" not in sent[0] and "session_context" not in sent[0], sent[0]
    assert "flushed session" in log.read_text()


def test_uninstall_gives_the_files_back_byte_for_byte(tmp_path: Path, model: ModelAPI) -> None:
    root = project(tmp_path, "app", FACT)
    configure(root)
    folder = root / ".gemini"
    folder.mkdir()
    settings = (
        b'{\n    "ui": {"theme": "Dracula"},\n    "mcpServers": {"other": {"command": "true"}}\n}'
    )
    (folder / "settings.json").write_bytes(settings)
    (root / "GEMINI.md").write_bytes(b"# App\r\n\r\nRun make test.\r\n")
    assert memcli(root, "agent", "install", "gemini").returncode == 0
    # Gemini CLI itself reads the settings: memcli's server next to the user's
    listed = gemini(root, model, "mcp", "list")
    said = listed.stdout + listed.stderr
    assert "memcli" in said and "other" in said and "Connected" in said, said
    status = json.loads(memcli(root, "agent", "status", "--json").stdout)
    row = next(r for r in status["installed"] if (r["agent"], r["scope"]) == ("gemini", "project"))
    assert row["hooks"] == ["session-start", "prompt", "pre-compact", "session-end"]
    assert row["mcp"] and row["policy"] and not row["mcp_problem"]
    again = memcli(root, "agent", "install", "gemini", "--json")
    assert {f["action"] for f in json.loads(again.stdout)["files"]} == {"unchanged"}
    assert memcli(root, "agent", "uninstall", "gemini").returncode == 0
    assert (folder / "settings.json").read_bytes() == settings
    assert (root / "GEMINI.md").read_bytes() == b"# App\r\n\r\nRun make test.\r\n"


def test_user_scope_serves_each_project_its_own_memory(tmp_path: Path, model: ModelAPI) -> None:
    app = project(tmp_path, "app", FACT)
    bare = project(tmp_path, "bare")  # no workspace: gets nothing
    configure(app, bare)
    run = memcli(app, "agent", "install", "gemini", "--scope", "user")
    assert run.returncode == 0, run.stderr
    assert "mcp_memcli_search" in (gemini_home() / "settings.json").read_text()
    ask(app, model, "Which cache do we use for sessions?")
    assert "Valkey" in json.dumps(bodies(model)[0]["contents"])
    model.requests.clear()
    ask(bare, model, "Which cache do we use for sessions?")
    assert "BEGIN MEMORY" not in json.dumps(bodies(model)[0]["contents"])
    assert memcli(app, "agent", "uninstall", "gemini", "--scope", "user").returncode == 0
    assert "memcli" not in (gemini_home() / "settings.json").read_text()


def test_a_session_is_saved_by_gemini_cli_itself_with_no_key_for_memcli(
    tmp_path: Path, model: ModelAPI
) -> None:
    """memcli has no llm.model and no key: the session is saved by ``gemini -p`` with Gemini
    CLI's own login (here its API key, the API the loopback one). That child asks one question
    with no tool, runs no hook (a user hook counts every run) and keeps no chat file."""
    root = project(tmp_path, "app", FACT)
    path = f"{Path(agent('gemini')).parent}{os.pathsep}{os.environ['PATH']}"
    configure(root)
    runs = tmp_path / "hook-runs.jsonl"
    events = ("SessionStart", "BeforeAgent", "SessionEnd")
    settings = json.loads((gemini_home() / "settings.json").read_text())
    settings.update(counting_hooks(runs, events))
    (gemini_home() / "settings.json").write_text(json.dumps(settings, indent=2))
    run = memcli(root, "agent", "install", "gemini", env=quiet_env(PATH=path))
    assert run.returncode == 0, run.stderr
    assert "by the agent's own model and login: gemini (gemini)" in run.stderr
    fact = "The staging database is db-stage-7."
    model.facts_reply = json.dumps({"facts": [{"text": fact, "type": "fact"}]})
    ask(root, model, "Remember: the staging database is db-stage-7.", PATH=path)

    log = root / ".memcli" / "agent.log"
    assert wait_for(lambda: fact in memory_text(root)), (
        log.read_text() if log.exists() else "",
        [json.dumps(r)[-1500:] for r in model.requests[-2:]],
    )
    (question,) = model.memcli_questions()
    assert not tool_names(question), tool_names(question)
    # memcli's system text in place of Gemini CLI's own (GEMINI_SYSTEM_MD)
    system = json.dumps(question.get("systemInstruction"))
    assert "facts" in system and "Gemini CLI" not in system, system[:2000]
    assert "db-stage-7" in json.dumps(question["contents"])
    said = "1 fact(s) written (gemini: 1 request(s) in"
    assert wait_for(lambda: said in log.read_text()), log.read_text()
    time.sleep(2)  # a hook of the child, or a second flush, would have come by now
    payloads = hook_runs(runs)
    assert {p["hook_event_name"] for p in payloads} == set(events)
    assert {p["cwd"] for p in payloads} == {str(root)}  # none in the child's own folder
    assert len({p["session_id"] for p in payloads}) == 1
    chats = list((gemini_home() / "tmp").rglob("session-*.json*"))
    assert len(chats) == 1, chats  # the agent's own chat only
    assert len(model.memcli_questions()) == 1
