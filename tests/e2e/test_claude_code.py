"""memcli inside the real Claude Code CLI (``claude -p``), against a loopback model API."""

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
from tests.e2e.model_api import MEMCLI_SEARCH, ModelAPI
from tests.stub_openai import StubOpenAI

FACT = "Use Valkey for the session cache."


def trust(root: Path) -> None:
    """What opening the project in Claude Code once and accepting its trust dialog leaves
    (a headless run ignores a project's permission rules until then)."""
    path = Path(os.environ["HOME"]) / ".claude.json"
    data: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    data.setdefault("projects", {}).setdefault(str(root), {})["hasTrustDialogAccepted"] = True
    path.write_text(json.dumps(data))


def claude(
    root: Path, model: ModelAPI, prompt: str, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    run = subprocess.run(
        [agent("claude"), "-p", prompt, *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=quiet_env(ANTHROPIC_BASE_URL=model.base_url, ANTHROPIC_API_KEY="sk-ant-e2e", **env),
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return run


def main_requests(model: ModelAPI) -> list[dict[str, Any]]:
    """The requests of the conversation itself (they offer tools), in order."""
    return [b for b in model.bodies("messages") if b.get("tools")]


def test_briefing_recall_and_a_tool_round_trip(tmp_path: Path, model: ModelAPI) -> None:
    root = project(tmp_path, "app", FACT)
    assert memcli(root, "agent", "install", "claude-code").returncode == 0
    trust(root)
    model.tool_query = "session cache"
    run = claude(root, model, "Which cache do we use for sessions?")
    assert run.stdout.strip() == model.final_text
    first, *rest = main_requests(model)
    text = dumps(first["messages"])
    # the SessionStart briefing and the prompt's recall, framed, in the first request
    assert text.count("<<<BEGIN MEMORY") == 2 and "Valkey" in text
    # memcli's tools are there from the first request (deferred behind ToolSearch: their
    # names are listed, and a ToolSearch call loads them)
    assert MEMCLI_SEARCH in dumps(first)
    # the round trip: ToolSearch loads the tool, the call is allowed without asking, and the
    # model reads the framed text (no JSON of scores)
    results = [
        block
        for body in rest
        for message in body["messages"]
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    memory = [r for r in results if "BEGIN MEMORY" in dumps(r.get("content"))]
    assert memory, dumps(results)[-2000:]
    said = dumps(memory[-1]["content"])
    assert "Valkey" in said and "Fact ids" in said and '"scores"' not in said
    assert not memory[-1].get("is_error")


def test_a_file_the_agent_reads_brings_the_facts_that_name_it(
    tmp_path: Path, model: ModelAPI
) -> None:
    """Claude Code reads jobs/export.py: memcli's PostToolUse hook adds the fact that names
    it, once, framed as memory about that file, to what the model reads next; the file
    changed in a commit after the fact, so the fact comes marked "may be stale"."""
    root = project(tmp_path, "app", FACT)
    later = stale_linked_file(root)
    assert memcli(root, "agent", "install", "claude-code").returncode == 0
    trust(root)
    model.read_path = str(root / "jobs" / "export.py")
    run = claude(root, model, "Have a look, please.")  # no recall: nothing matches it
    assert run.stdout.strip() == model.final_text
    first, *rest = main_requests(model)
    assert "Memory about" not in dumps(first["messages"])
    after = dumps(rest[-1]["messages"])  # after the Read: the file, then memcli's context
    assert after.count("Memory about `jobs/export.py`") == 1, after[-3000:]
    memory = after.split("Memory about `jobs/export.py`")[1]
    assert "writes the CSV with a BOM" in memory
    assert f"may be stale: `jobs/export.py` changed on {later[:10]}" in memory


def wait_for(check: Any, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.2)
    return check()


def flushes(llm: StubOpenAI) -> list[str]:
    """The conversations memcli sent to its LLM to flush, in order."""
    return [
        dumps(r["body"]["messages"])
        for r in llm.requests
        if r["path"].endswith("/chat/completions")
    ]


def test_sessions_are_flushed_once_and_a_failed_flush_is_retried(
    tmp_path: Path, model: ModelAPI, openai_stub: StubOpenAI
) -> None:
    root = project(tmp_path, "app", FACT)
    llm = {
        "MEMCLI_LLM_MODEL": "openai/stub-chat",
        "MEMCLI_LLM_API_BASE": openai_stub.base_url,
        "OPENAI_API_KEY": "sk-e2e",
    }
    assert memcli(root, "agent", "install", "claude-code").returncode == 0
    trust(root)
    openai_stub.fail_status, openai_stub.fail_times = 503, 1000  # the provider is down
    claude(root, model, "Remember: the staging database is db-stage-7.", **llm)
    log = root / ".memcli" / "agent.log"
    # the flush gave up (after its own retries) and said so
    assert wait_for(lambda: log.exists() and "error: flush of session" in log.read_text())
    # the provider is back: the next session's start retries the failed flush, and its own
    # end flushes only its own turns
    openai_stub.fail_status, openai_stub.fail_times = None, 0
    failed = openai_stub.count("/chat/completions")
    fact = "The staging database is db-stage-7."
    openai_stub.chat_replies = [json.dumps({"facts": [{"text": fact, "type": "fact"}]})]
    claude(root, model, "Thanks, that is all.", **llm)
    done = wait_for(lambda: len(flushes(openai_stub)) >= failed + 2)
    sent = flushes(openai_stub)[failed:]
    assert done and sum("db-stage-7" in s for s in sent) == 1, sent
    assert sum("that is all" in s for s in sent) == 1, sent
    memory = "".join(p.read_text() for p in (root / "memory").rglob("*.md"))
    assert wait_for(
        lambda: fact in "".join(p.read_text() for p in (root / "memory").rglob("*.md"))
    ), memory
    # resuming the session and ending it again sends the new turns only
    before = len(flushes(openai_stub))
    claude(root, model, "One more thing: deploys go out on Tuesdays.", "--continue", **llm)
    assert wait_for(lambda: len(flushes(openai_stub)) > before)
    time.sleep(2)  # a second flush of the same turns would have come by now
    again = flushes(openai_stub)[before:]
    assert len(again) == 1 and "Tuesdays" in again[0] and "that is all" not in again[0], again
    # compacting it (PreCompact, then the end of the run) sends nothing already sent
    claude(root, model, "/compact", "--continue", **llm)
    time.sleep(3)
    sent = flushes(openai_stub)[failed:]  # after the provider came back
    assert sum("Tuesdays" in s for s in sent) == 1 and sum("db-stage-7" in s for s in sent) == 1


def test_user_scope_serves_each_project_its_own_memory(tmp_path: Path, model: ModelAPI) -> None:
    first = project(tmp_path, "first", FACT)
    second = project(tmp_path, "second", "Payments use Stripe webhooks.")
    bare = project(tmp_path, "bare")  # no workspace: no memory at all
    assert memcli(first, "agent", "install", "claude-code", "--scope", "user").returncode == 0
    for root in (first, second, bare):
        trust(root)
    claude(second, model, "How do payments reach us?")
    text = dumps(main_requests(model)[0]["messages"])
    assert "Stripe" in text and "Valkey" not in text
    model.requests.clear()
    claude(bare, model, "Hello there.")
    assert "BEGIN MEMORY" not in dumps(main_requests(model)[0]["messages"])


def test_uninstall_gives_back_the_files_byte_for_byte(tmp_path: Path, model: ModelAPI) -> None:
    root = project(tmp_path, "app", FACT)
    (root / ".claude").mkdir()
    settings = json.dumps({"permissions": {"allow": ["Bash(ls:*)"]}}, indent=4)  # no newline
    (root / ".claude" / "settings.json").write_text(settings)
    (root / "CLAUDE.md").write_text("# House rules\n\nTabs, never spaces.")  # no newline
    before = {p: p.read_bytes() for p in (root / ".claude" / "settings.json", root / "CLAUDE.md")}
    assert memcli(root, "agent", "install", "claude-code").returncode == 0
    trust(root)
    claude(root, model, "Which cache do we use?")
    assert "Valkey" in dumps(main_requests(model)[0]["messages"])
    assert memcli(root, "agent", "uninstall", "claude-code").returncode == 0
    assert {p: p.read_bytes() for p in before} == before
    assert not (root / ".mcp.json").exists()


def test_a_session_is_saved_by_claude_code_itself_with_no_key_for_memcli(
    tmp_path: Path, model: ModelAPI
) -> None:
    """memcli has no llm.model and no key: the session is saved by ``claude -p`` with Claude
    Code's own login (here its key for the loopback API). That child asks one bare question:
    no tools, no hook of any kind runs in it (a user hook counts every hook run) and it leaves
    no session behind."""
    root = project(tmp_path, "app", FACT)
    path = f"{Path(agent('claude')).parent}{os.pathsep}{os.environ['PATH']}"
    runs = tmp_path / "hook-runs.jsonl"
    settings = Path(os.environ["HOME"]) / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    events = ("SessionStart", "UserPromptSubmit", "SessionEnd")
    settings.write_text(json.dumps(counting_hooks(runs, events)))
    installed = memcli(root, "agent", "install", "claude-code", env=quiet_env(PATH=path))
    assert installed.returncode == 0, installed.stderr
    assert "sessions are not saved" not in installed.stderr
    assert "by the agent's own model and login: claude-code (claude)" in installed.stderr
    trust(root)
    fact = "The staging database is db-stage-7."
    model.facts_reply = json.dumps({"facts": [{"text": fact, "type": "fact"}]})
    claude(root, model, "Remember: the staging database is db-stage-7.", PATH=path)

    assert wait_for(lambda: fact in memory_text(root)), (root / ".memcli" / "agent.log").read_text()
    (question,) = model.memcli_questions()
    assert not question.get("tools") and "db-stage-7" in dumps(question["messages"])
    assert question["model"].startswith("claude-haiku") or "haiku" in question["model"]
    log = root / ".memcli" / "agent.log"
    said = "1 fact(s) written (claude-code: 1 request(s) in"
    assert wait_for(lambda: log.exists() and said in log.read_text()), log.read_text()
    time.sleep(2)  # a hook of the child, or a second flush, would have come by now
    payloads = hook_runs(runs)
    assert {p["hook_event_name"] for p in payloads} == set(events)
    assert {p["cwd"] for p in payloads} == {str(root)}  # none in the child's own folder
    assert len({p["session_id"] for p in payloads}) == 1
    folders = [p.name for p in (Path(os.environ["HOME"]) / ".claude" / "projects").iterdir()]
    assert len(folders) == 1 and "memcli-llm" not in folders[0], folders
    assert len(model.memcli_questions()) == 1


def test_import_saves_three_earlier_sessions_once(tmp_path: Path, model: ModelAPI) -> None:
    """Three sessions run before memcli was installed; ``agent import`` saves their facts
    through ``claude -p`` (no key for memcli), and a second import sends and saves nothing."""
    root = project(tmp_path, "app", FACT)
    path = f"{Path(agent('claude')).parent}{os.pathsep}{os.environ['PATH']}"
    trust(root)
    facts = ["Deploys go out on Tuesdays.", "The API runs on port 8081.", "Reviews need two."]
    for fact in facts:
        claude(root, model, f"Remember: {fact}")

    def answer(body: dict[str, Any]) -> str:
        said = [f for f in facts if f in dumps(body)]
        return json.dumps({"facts": [{"text": f, "type": "fact"} for f in said]})

    model.facts_reply = answer
    env = quiet_env(PATH=path, ANTHROPIC_BASE_URL=model.base_url, ANTHROPIC_API_KEY="sk-ant-e2e")
    first = memcli(root, "agent", "import", "--agent", "claude-code", "--json", env=env)
    assert first.returncode == 0, first.stderr
    rows = json.loads(first.stdout)["sessions"]
    assert len(rows) == 3 and sum(r["written"] for r in rows) == 3, rows
    assert all(f in memory_text(root) for f in facts)
    assert len(model.memcli_questions()) == 3
    again = memcli(root, "agent", "import", "--agent", "claude-code", "--json", env=env)
    assert again.returncode == 0, again.stderr
    assert sum(r["written"] for r in json.loads(again.stdout)["sessions"]) == 0
    assert len(model.memcli_questions()) == 3  # nothing asked twice
    folders = list((Path(os.environ["HOME"]) / ".claude" / "projects").iterdir())
    assert len(folders) == 1  # the children kept no session
