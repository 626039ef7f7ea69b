"""memcli inside the real Codex CLI (``codex exec``), against a loopback model API."""

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
    dumps,
    hook_runs,
    memcli,
    memory_text,
    project,
    quiet_env,
    stale_linked_file,
)
from tests.e2e.model_api import ModelAPI
from tests.stub_openai import StubOpenAI

FACT = "Use Valkey for the session cache."


def codex_home() -> Path:
    return Path(os.environ["HOME"]) / ".codex"


def configure(model: ModelAPI, *trusted: Path) -> None:
    """The user's Codex config: the loopback model as provider, ``trusted`` projects (Codex
    reads a project's .codex/ only in a trusted project), no update checks or analytics."""
    home = codex_home()
    home.mkdir(parents=True, exist_ok=True)
    lines = [
        'model = "gpt-5.1-codex"',
        'model_provider = "loopback"',
        "check_for_update_on_startup = false",
        "[analytics]",
        "enabled = false",
        "[model_providers.loopback]",
        'name = "loopback"',
        f'base_url = "{model.base_url}/v1"',
        'wire_api = "responses"',
        'env_key = "LOOPBACK_API_KEY"',
        *(f'[projects."{root}"]\ntrust_level = "trusted"' for root in trusted),
    ]
    (home / "config.toml").write_text("\n".join(lines) + "\n")


def trust_hooks(root: Path) -> list[str]:
    """What reviewing and trusting the project's hooks in Codex (``/hooks``) does, through
    the API its own interface uses (``codex app-server``); the trust states after it."""
    proc = subprocess.Popen(
        [agent("codex"), "app-server"],
        cwd=root,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=quiet_env(CODEX_HOME=str(codex_home())),
    )
    assert proc.stdin is not None and proc.stdout is not None

    def call(n: int, method: str, params: dict[str, Any]) -> Any:
        message = {"jsonrpc": "2.0", "id": n, "method": method, "params": params}
        proc.stdin.write(json.dumps(message) + "\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        while True:
            got = json.loads(proc.stdout.readline())  # type: ignore[union-attr]
            if got.get("id") == n:
                assert "error" not in got, got
                return got["result"]

    try:
        call(0, "initialize", {"clientInfo": {"name": "memcli-e2e", "version": "1"}})
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "initialized"}) + "\n")
        hooks = [
            h for d in call(1, "hooks/list", {"cwds": [str(root)]})["data"] for h in d["hooks"]
        ]
        state = {h["key"]: {"trusted_hash": h["currentHash"]} for h in hooks}
        edit = {"keyPath": "hooks.state", "value": state, "mergeStrategy": "upsert"}
        call(2, "config/batchWrite", {"edits": [edit]})
        after = call(3, "hooks/list", {"cwds": [str(root)]})["data"]
        return [h["trustStatus"] for d in after for h in d["hooks"]]
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


def codex(root: Path, model: ModelAPI, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    run = subprocess.run(
        [agent("codex"), "exec", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
        env=quiet_env(CODEX_HOME=str(codex_home()), LOOPBACK_API_KEY="sk-e2e", **env),
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return run


def installed(root: Path, model: ModelAPI) -> None:
    configure(model, root)
    run = memcli(root, "agent", "install", "codex")
    assert run.returncode == 0, run.stderr
    assert set(trust_hooks(root)) == {"trusted"}


def test_briefing_recall_and_a_tool_round_trip(tmp_path: Path, model: ModelAPI) -> None:
    root = project(tmp_path, "app", FACT)
    installed(root, model)
    model.tool_query = "session cache"
    run = codex(root, model, "Which cache do we use for sessions?")
    assert model.final_text in run.stdout
    first, *rest = model.bodies("responses")
    # the SessionStart briefing and the prompt's recall reach the model in the first request
    assert dumps(first["input"]).count("<<<BEGIN MEMORY") == 2 and "Valkey" in dumps(first["input"])
    # memcli's tools are in it, and the read-only search runs under `codex exec` (approval
    # policy never) without asking
    spaces = {t.get("name"): t for t in first["tools"] if t.get("type") == "namespace"}
    assert "search" in {t["name"] for t in spaces["mcp__memcli"]["tools"]}
    outputs = [
        item
        for body in rest
        for item in body["input"]
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]
    said = dumps(outputs)
    assert "<<<BEGIN MEMORY" in said and "Valkey" in said and "Fact ids" in said, said[-2000:]
    assert '"scores"' not in said


def test_a_file_codex_prints_with_its_shell_brings_the_facts_that_name_it(
    tmp_path: Path, model: ModelAPI
) -> None:
    """Codex runs ``cat jobs/export.py`` with its shell tool (``exec_command``); its
    PostToolUse hook (matched as ``Bash``, ``tool_input.command`` the command line) gives
    the facts linked to the file, marked "may be stale" after a later commit of it, before
    the command's output in the next request."""
    root = project(tmp_path, "app", FACT)
    later = stale_linked_file(root)
    installed(root, model)
    model.read_path = "jobs/export.py"
    run = codex(root, model, "Have a look, please.")
    assert model.final_text in run.stdout
    first, *rest = model.bodies("responses")
    assert "Memory about" not in dumps(first["input"])
    items = rest[-1]["input"]  # after the command: memcli's context, then its output
    calls = [i for i in items if isinstance(i, dict) and i.get("type") == "function_call"]
    assert [c["name"] for c in calls] == ["exec_command"]
    after = dumps(items[items.index(calls[0]) :])
    assert after.count("Memory about `jobs/export.py`") == 1, after[-3000:]
    memory = after.split("Memory about `jobs/export.py`")[1]
    assert "writes the CSV with a BOM" in memory
    assert f"may be stale: `jobs/export.py` changed on {later[:10]}" in memory


def flushes(llm: StubOpenAI) -> list[str]:
    return [
        dumps(r["body"]["messages"])
        for r in llm.requests
        if r["path"].endswith("/chat/completions")
    ]


def wait_for(check: Any, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not check():
        time.sleep(0.2)
    return check()


def test_a_session_is_flushed_once_and_its_resumption_sends_only_new_turns(
    tmp_path: Path, model: ModelAPI, openai_stub: StubOpenAI
) -> None:
    root = project(tmp_path, "app", FACT)
    installed(root, model)
    llm = {
        "MEMCLI_LLM_MODEL": "openai/stub-chat",
        "MEMCLI_LLM_API_BASE": openai_stub.base_url,
        "OPENAI_API_KEY": "sk-e2e",
    }
    codex(root, model, "Remember: the staging database is db-stage-7.", **llm)
    assert wait_for(lambda: len(flushes(openai_stub)) >= 1)
    time.sleep(2)  # a second flush of the same turns would have come by now
    sent = flushes(openai_stub)
    assert len(sent) == 1 and "db-stage-7" in sent[0], sent
    codex(root, model, "resume", "--last", "Deploys go out on Tuesdays.", **llm)
    assert wait_for(lambda: len(flushes(openai_stub)) >= 2)
    time.sleep(2)
    again = flushes(openai_stub)[1:]
    assert len(again) == 1 and "Tuesdays" in again[0] and "db-stage-7" not in again[0], again


def test_a_session_is_saved_by_codex_itself_with_no_key_for_memcli(
    tmp_path: Path, model: ModelAPI
) -> None:
    """memcli has no llm.model and no key: the session is saved by ``codex exec`` with
    Codex's own login (here the loopback provider's key). That child asks one question, runs
    no hook (a user hook counts every run) and keeps no session file."""
    root = project(tmp_path, "app", FACT)
    path = f"{Path(agent('codex')).parent}{os.pathsep}{os.environ['PATH']}"
    configure(model, root)
    runs = tmp_path / "hook-runs.jsonl"
    events = ("SessionStart", "UserPromptSubmit", "Stop")
    home = codex_home()
    (home / "hooks.json").write_text(json.dumps(counting_hooks(runs, events)))
    with (home / "config.toml").open("a") as f:
        f.write("[features]\nhooks = true\n")
    run = memcli(root, "agent", "install", "codex", env=quiet_env(PATH=path))
    assert run.returncode == 0, run.stderr
    assert "by the agent's own model and login: codex (codex)" in run.stderr
    assert set(trust_hooks(root)) == {"trusted"}
    fact = "The staging database is db-stage-7."
    model.facts_reply = json.dumps({"facts": [{"text": fact, "type": "fact"}]})
    codex(root, model, "Remember: the staging database is db-stage-7.", PATH=path)

    assert wait_for(lambda: fact in memory_text(root)), (root / ".memcli" / "agent.log").read_text()
    (question,) = model.memcli_questions()
    assert not question.get("tools"), [t.get("name") or t.get("type") for t in question["tools"]]
    assert "db-stage-7" in dumps(question["input"])
    log = root / ".memcli" / "agent.log"
    said = "1 fact(s) written (codex: 1 request(s) in"
    assert wait_for(lambda: log.exists() and said in log.read_text()), log.read_text()
    time.sleep(2)  # a hook of the child, or a second flush, would have come by now
    payloads = hook_runs(runs)
    assert {p["hook_event_name"] for p in payloads} == set(events)
    assert {p["cwd"] for p in payloads} == {str(root)}  # none in the child's own folder
    assert len({p["session_id"] for p in payloads}) == 1
    sessions = [p for p in (home / "sessions").rglob("*.jsonl")]
    assert len(sessions) == 1, sessions  # the agent's own session only
    assert len(model.memcli_questions()) == 1
