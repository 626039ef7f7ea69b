"""OpenCode: ``agent install opencode`` (its MCP server in ``opencode.json``, memcli's plugin,
the policy in ``AGENTS.md``) undone byte for byte, and the plugin run by Node as OpenCode
loads it: the briefing and the recall in the system prompt, from the real memcli."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Cli

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
    assert row["hooks"] == ["session-start", "prompt"] and row["mcp"] and row["policy"]

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
