"""GitHub Copilot CLI: ``agent install copilot`` (the MCP server, a ``sessionStart`` hook, the
policy) undone byte for byte, and the hook answering Copilot CLI's camelCase payload."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Cli

USER_SERVERS = b'{\n    "mcpServers": {\n        "db": {"type": "local", "command": "pgmcp", "tools": ["*"]}\n    }\n}\n'  # noqa: E501


def test_install_merges_and_uninstall_gives_the_bytes_back(cli: Cli, workspace: Path) -> None:
    github = workspace / ".github"
    github.mkdir()
    (github / "mcp.json").write_bytes(USER_SERVERS)
    (github / "copilot-instructions.md").write_bytes(b"Use tabs.")
    r = cli("agent", "install", "copilot", "--json")
    assert r.exit_code == 0, r.stderr
    assert [f["action"] for f in r.json()["files"]] == ["update", "create", "update"]
    servers = json.loads((github / "mcp.json").read_text())["mcpServers"]
    assert servers["db"]["command"] == "pgmcp"
    assert servers["memcli"]["type"] == "local" and servers["memcli"]["args"][-1] == "mcp"
    hooks = json.loads((github / "hooks" / "memcli.json").read_text())
    assert hooks["version"] == 1
    [hook] = hooks["hooks"]["sessionStart"]
    assert hook["bash"].endswith("agent hook session-start") and hook["timeoutSec"] == 20
    assert {f["action"] for f in cli("agent", "install", "copilot", "--json").json()["files"]} == {
        "unchanged"
    }
    row = next(
        r
        for r in cli("agent", "status", "--json").json()["installed"]
        if (r["agent"], r["scope"]) == ("copilot", "project")
    )
    assert row["hooks"] == ["session-start"] and row["mcp"] and row["policy"]
    assert cli("agent", "uninstall", "copilot").exit_code == 0
    assert (github / "mcp.json").read_bytes() == USER_SERVERS
    assert (github / "copilot-instructions.md").read_bytes() == b"Use tabs."
    assert not (github / "hooks").exists()


def test_the_session_start_hook_answers_copilot_s_payload(cli: Cli, workspace: Path) -> None:
    from memcli.agent.hook_runner import run_hook

    assert cli("add", "--type", "decision", "Use Valkey for the session cache.").exit_code == 0
    payload = {"sessionId": "3f9a", "timestamp": 1, "cwd": str(workspace), "source": "new"}
    answer = json.loads(run_hook("session-start", json.dumps(payload)))
    assert list(answer) == ["additionalContext"] and "Valkey" in answer["additionalContext"]
