"""memcli's Claude Code plugin, installed through the real CLI (``claude plugin marketplace
add`` from this repository's folder, ``claude plugin install memcli@memcli``), against a
loopback model API.

The plugin runs ``memcli`` from the PATH: here a logging stand-in that records each run (its
folder and arguments) and then runs the real memcli, so a test sees every hook and server
the plugin started, and where.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.e2e.conftest import (
    MEMCLI,
    TIMEOUT,
    agent,
    dumps,
    memcli,
    memory_text,
    project,
    quiet_env,
)
from tests.e2e.model_api import ModelAPI
from tests.e2e.test_claude_code import FACT, claude, main_requests, trust, wait_for
from tests.stub_openai import StubOpenAI

REPO = Path(__file__).resolve().parents[2]
PLUGIN_SEARCH = "mcp__plugin_memcli_memcli__search"
PLUGIN_ALLOW = [f"mcp__plugin_memcli_memcli__{t}" for t in ("search", "context", "get", "status")]
EVENTS = ["session-start", "prompt", "pre-compact", "session-end", "file"]


def on_path(tmp_path: Path) -> tuple[str, Path]:
    """A PATH whose ``memcli`` logs each run to the returned file, then runs memcli."""
    folder = tmp_path / "bin"
    folder.mkdir()
    runs = tmp_path / "memcli-runs.tsv"
    shim = folder / "memcli"
    shim.write_text(f'#!/bin/sh\nprintf "%s\\t%s\\n" "$PWD" "$*" >> {runs}\nexec {MEMCLI} "$@"\n')
    shim.chmod(0o755)
    claude_bin = str(Path(agent("claude")).parent)
    return os.pathsep.join([str(folder), claude_bin, os.environ["PATH"]]), runs


def memcli_runs(runs: Path) -> list[tuple[str, str]]:
    """(folder, arguments) of each run of the plugin's ``memcli``."""
    if not runs.exists():
        return []
    return [
        (line.partition("\t")[0], line.partition("\t")[2]) for line in runs.read_text().splitlines()
    ]


def plugin(*args: str, path: str) -> subprocess.CompletedProcess[str]:
    """``claude plugin ARGS`` (Claude Code's own plugin commands), which must succeed."""
    run = subprocess.run(
        [agent("claude"), "plugin", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=quiet_env(PATH=path),
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return run


def plugin_rows(root: Path, path: str) -> list[dict[str, Any]]:
    status = memcli(root, "agent", "status", "--json", env=quiet_env(PATH=path))
    assert status.returncode == 0, status.stderr
    return [r for r in json.loads(status.stdout)["installed"] if r["scope"] == "plugin"]


def install_plugin(path: str) -> None:
    plugin("marketplace", "add", str(REPO), path=path)
    plugin("install", "memcli@memcli", path=path)


def test_the_plugin_installs_through_claude_and_serves_memory(
    tmp_path: Path, model: ModelAPI, openai_stub: StubOpenAI
) -> None:
    root = project(tmp_path, "app", FACT)
    path, runs = on_path(tmp_path)
    install_plugin(path)

    # agent status and doctor see the plugin: its four hooks, its server and its policy skill
    (row,) = plugin_rows(root, path)
    assert row["plugin"] == {"id": "memcli@memcli", "scope": "user", "enabled": True}
    assert row["hooks"] == EVENTS and row["mcp"] and row["policy"], row
    assert row["mcp_problem"] is None
    doctor = memcli(root, "doctor", "--json", "--offline", env=quiet_env(PATH=path))
    (check,) = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "agent"]
    assert "claude-code (plugin)" in check["summary"], check
    assert check["details"]["plugins"] == [row["plugin"]]

    # agent install beside it: no second copy of the hooks, no second server; the policy,
    # and the plugin's read-only tools allowed
    installed = memcli(root, "agent", "install", "claude-code", env=quiet_env(PATH=path))
    assert installed.returncode == 0, installed.stderr
    said = [line for line in installed.stderr.splitlines() if "plugin" in line]
    assert len(said) == 1 and "memcli plugin (memcli@memcli, user scope)" in said[0], said
    settings = json.loads((root / ".claude" / "settings.json").read_text())
    assert "hooks" not in settings and "enabledMcpjsonServers" not in settings
    assert settings["permissions"]["allow"] == PLUGIN_ALLOW
    assert not (root / ".mcp.json").exists()
    assert "memcli:begin" in (root / "CLAUDE.md").read_text()
    assert not [
        w
        for w in json.loads(
            memcli(root, "agent", "status", "--json", env=quiet_env(PATH=path)).stdout
        )["warnings"]
        if "twice" in w
    ]
    trust(root)

    # a session: the briefing and the recall once each in the first request, a search
    # through the plugin's server, and its end saves a fact through memcli's LLM
    llm = {
        "MEMCLI_LLM_MODEL": "openai/stub-chat",
        "MEMCLI_LLM_API_BASE": openai_stub.base_url,
        "OPENAI_API_KEY": "sk-e2e",
    }
    fact = "Session cache keys expire after 30 minutes."
    openai_stub.chat_replies = [json.dumps({"facts": [{"text": fact, "type": "fact"}]})]
    model.tool_query, model.search_tool = "session cache", PLUGIN_SEARCH
    run = claude(root, model, "Which cache do we use for sessions?", PATH=path, **llm)
    assert run.stdout.strip() == model.final_text
    first, *rest = main_requests(model)
    text = dumps(first["messages"])
    assert text.count("<<<BEGIN MEMORY") == 2 and "Valkey" in text
    assert PLUGIN_SEARCH in dumps(first)
    results = [
        block
        for body in rest
        for message in body["messages"]
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    memory = [r for r in results if "BEGIN MEMORY" in dumps(r.get("content"))]
    assert memory and not memory[-1].get("is_error"), dumps(results)[-2000:]
    assert "Valkey" in dumps(memory[-1]["content"])
    assert wait_for(lambda: fact in memory_text(root)), (root / ".memcli" / "agent.log").read_text()
    ran = memcli_runs(runs)
    hooks = sorted(args for _, args in ran if args.startswith("agent hook"))
    assert hooks == sorted(f"agent hook {e}" for e in ("session-start", "prompt", "session-end"))
    assert tuple({args for _, args in ran if not args.startswith("agent")}) == ("mcp",)
    assert {folder for folder, _ in ran} == {str(root)}

    # uninstalled through Claude Code: status sees nothing, sessions get no memory
    plugin("uninstall", "memcli@memcli", path=path)
    assert plugin_rows(root, path) == []
    model.requests.clear()
    claude(root, model, "Which cache do we use?", PATH=path)
    assert "BEGIN MEMORY" not in dumps(main_requests(model)[0]["messages"])


def test_hooks_installed_before_the_plugin_are_taken_out_by_install(
    tmp_path: Path, model: ModelAPI
) -> None:
    """Hooks in the settings, then the plugin: status and doctor say they would run twice,
    and ``agent install`` again takes them out; a session is briefed once."""
    root = project(tmp_path, "app", FACT)
    path, _ = on_path(tmp_path)
    assert memcli(root, "agent", "install", "claude-code").returncode == 0
    install_plugin(path)
    status = memcli(root, "agent", "status", "--json", env=quiet_env(PATH=path))
    (twice,) = [w for w in json.loads(status.stdout)["warnings"] if "twice" in w]
    assert "project scope and by memcli's plugin" in twice
    again = memcli(root, "agent", "install", "claude-code", env=quiet_env(PATH=path))
    assert again.returncode == 0, again.stderr
    assert "hooks" not in json.loads((root / ".claude" / "settings.json").read_text())
    assert not (root / ".mcp.json").exists()  # the plugin's server serves it
    trust(root)
    claude(root, model, "Which cache do we use for sessions?", PATH=path)
    text = dumps(main_requests(model)[0]["messages"])
    assert text.count("<<<BEGIN MEMORY") == 2  # one briefing, one recall: not two of each
    # uninstall gives the settings back as they were before memcli (none)
    assert memcli(root, "agent", "uninstall", "claude-code").returncode == 0
    assert not (root / ".claude" / "settings.json").exists()


def test_without_memcli_on_the_path_or_a_workspace_the_plugin_is_silent(
    tmp_path: Path, model: ModelAPI
) -> None:
    bare = project(tmp_path, "bare")  # no workspace
    path, runs = on_path(tmp_path)
    install_plugin(path)
    trust(bare)
    run = claude(bare, model, "Hello there.", PATH=path)
    assert run.stdout.strip() == model.final_text and "memcli" not in run.stderr
    first = main_requests(model)[0]
    assert "BEGIN MEMORY" not in dumps(first["messages"])
    assert "mcp__plugin_memcli" not in dumps(first.get("tools"))  # no workspace, no tools
    assert memcli_runs(runs)  # memcli ran, and said nothing
    # memcli not on the PATH at all: the hooks do nothing and the session goes on
    root = project(tmp_path, "app", FACT)
    trust(root)
    model.requests.clear()
    claude_only = os.pathsep.join([str(Path(agent("claude")).parent), "/usr/bin", "/bin"])
    run = claude(root, model, "Which cache do we use?", PATH=claude_only)
    assert run.stdout.strip() == model.final_text
    assert "BEGIN MEMORY" not in dumps(main_requests(model)[0]["messages"])


def test_the_agent_cli_as_memcli_s_model_runs_no_plugin_hook(
    tmp_path: Path, model: ModelAPI
) -> None:
    """No llm.model: the session is saved by ``claude -p`` itself. That child runs none of
    the plugin's hooks, nor its server: every run of the plugin's memcli is in the project."""
    root = project(tmp_path, "app", FACT)
    path, runs = on_path(tmp_path)
    install_plugin(path)
    trust(root)
    fact = "The staging database is db-stage-7."
    model.facts_reply = json.dumps({"facts": [{"text": fact, "type": "fact"}]})
    claude(root, model, "Remember: the staging database is db-stage-7.", PATH=path)
    assert wait_for(lambda: fact in memory_text(root)), (root / ".memcli" / "agent.log").read_text()
    (question,) = model.memcli_questions()
    assert not question.get("tools") and "plugin_memcli" not in dumps(question)
    ran = memcli_runs(runs)
    assert ran and {folder for folder, _ in ran} == {str(root)}, ran
    assert sum(args == "agent hook session-start" for _, args in ran) == 1
