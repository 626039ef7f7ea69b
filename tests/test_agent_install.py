"""memcli agent install / uninstall / status: merging into agents' settings, and undoing it."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli

OTHER_HOOK: dict[str, Any] = {
    "hooks": {
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}
        ],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}
        ],
    },
    "permissions": {"allow": ["Bash(make test)"]},
}


#: Claude Code's permission rules for memcli's read-only MCP tools
READ_ONLY_RULES = [
    "mcp__memcli__search",
    "mcp__memcli__context",
    "mcp__memcli__get",
    "mcp__memcli__status",
]


def read_json(path: Path) -> dict:
    return json.loads(path.read_text("utf-8"))


def test_install_claude_code_project_merges_and_keeps_other_hooks(
    cli: Cli, workspace: Path
) -> None:
    settings = workspace / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(OTHER_HOOK, indent=4))
    (workspace / "CLAUDE.md").write_text("# Shop\n\nRun make test before pushing.\n")
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"db": {"command": "pgmcp"}}}))

    r = cli("agent", "install", "claude-code", "--json")
    assert r.exit_code == 0, r.stderr
    assert {f["action"] for f in r.json()["files"]} == {"update"}

    data = read_json(settings)
    # the user's rules first, then memcli's read-only MCP tools; the project's server enabled
    assert data["permissions"] == {"allow": ["Bash(make test)", *READ_ONLY_RULES]}
    assert data["enabledMcpjsonServers"] == ["memcli"]
    assert data["hooks"]["PreToolUse"] == OTHER_HOOK["hooks"]["PreToolUse"]
    start = data["hooks"]["SessionStart"]
    assert start[0] == OTHER_HOOK["hooks"]["SessionStart"][0]  # the user's hook stays first
    ours = start[1]
    assert ours["matcher"] == "startup|resume|clear|compact"
    command = ours["hooks"][0]["command"]
    assert shlex.split(command)[-3:] == ["agent", "hook", "session-start"]
    assert "-w" not in shlex.split(command)  # the agent runs in the workspace: found from cwd
    for event, name in (
        ("UserPromptSubmit", "prompt"),
        ("PreCompact", "pre-compact"),
        ("SessionEnd", "session-end"),
    ):
        assert data["hooks"][event][0]["hooks"][0]["command"].endswith(f"agent hook {name}")
    servers = read_json(workspace / ".mcp.json")["mcpServers"]
    assert servers["db"] == {"command": "pgmcp"}
    assert servers["memcli"]["args"][-1] == "mcp"
    claude_md = (workspace / "CLAUDE.md").read_text()
    assert claude_md.startswith("# Shop\n\nRun make test before pushing.\n\n<!-- memcli:begin")
    assert claude_md.rstrip().endswith("<!-- memcli:end -->")


def test_install_is_idempotent_and_uninstall_restores_every_byte(cli: Cli, workspace: Path) -> None:
    settings = workspace / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = json.dumps(OTHER_HOOK, indent=4) + "\n"
    settings.write_text(original)
    (workspace / "CLAUDE.md").write_text("# Shop\n")

    assert cli("agent", "install", "claude-code").exit_code == 0
    once = {p: p.read_text() for p in (settings, workspace / ".mcp.json", workspace / "CLAUDE.md")}
    r = cli("agent", "install", "claude-code", "--json")
    assert {f["action"] for f in r.json()["files"]} == {"unchanged"}
    assert {p: p.read_text() for p in once} == once

    r = cli("agent", "uninstall", "claude-code", "--json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(settings.read_text()) == OTHER_HOOK
    assert (workspace / "CLAUDE.md").read_text() == "# Shop\n"
    assert not (workspace / ".mcp.json").exists()  # install made it for memcli alone


def test_install_allows_only_the_read_only_tools_and_uninstall_takes_back_only_those(
    cli: Cli, workspace: Path
) -> None:
    """A headless `claude -p` may call search, context, get and status: the project's server
    is enabled and those four are allowed; add, flush, supersede, forget and confirm still ask.
    Uninstall takes out memcli's rules and server name, and nothing of the user's."""
    settings = workspace / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {
        "permissions": {"allow": ["Bash(make test)"], "deny": ["Read(.env)"]},
        "enabledMcpjsonServers": ["db"],
    }
    settings.write_text(json.dumps(mine, indent=2) + "\n")

    assert cli("agent", "install", "claude-code").exit_code == 0
    data = read_json(settings)
    assert data["permissions"]["allow"] == ["Bash(make test)", *READ_ONLY_RULES]
    assert data["permissions"]["deny"] == ["Read(.env)"]
    assert data["enabledMcpjsonServers"] == ["db", "memcli"]
    assert not any(
        r.endswith(("__add", "__flush", "__forget")) for r in data["permissions"]["allow"]
    )
    assert cli("agent", "install", "claude-code").exit_code == 0  # again: nothing added twice
    assert read_json(settings) == data

    assert cli("agent", "uninstall", "claude-code").exit_code == 0
    assert read_json(settings) == mine


def test_user_scope_allows_the_read_only_tools_without_a_project_server(
    cli: Cli, workspace: Path, isolated_env: Path
) -> None:
    assert cli("agent", "install", "claude-code", "--scope", "user").exit_code == 0
    data = read_json(isolated_env / ".claude" / "settings.json")
    assert data["permissions"] == {"allow": READ_ONLY_RULES}
    assert "enabledMcpjsonServers" not in data  # the user's own server needs no enabling
    assert cli("agent", "uninstall", "claude-code", "--scope", "user").exit_code == 0
    assert not (isolated_env / ".claude" / "settings.json").exists()


def test_dry_run_shows_a_diff_and_writes_nothing(cli: Cli, workspace: Path) -> None:
    r = cli("agent", "install", "claude-code", "--dry-run")
    assert r.exit_code == 0, r.stderr
    assert f"+++ {workspace / '.claude' / 'settings.json'}" in r.stdout
    assert '+        "matcher": "startup|resume|clear|compact",' in r.stdout
    assert "+<!-- memcli:begin" in r.stdout
    assert not (workspace / ".claude").exists()
    assert not (workspace / ".mcp.json").exists()
    assert not (workspace / "CLAUDE.md").exists()


def test_user_scope_writes_home_settings_without_pinning_a_workspace(
    cli: Cli, workspace: Path, isolated_env: Path
) -> None:
    r = cli("agent", "install", "claude-code", "--scope", "user")
    assert r.exit_code == 0, r.stderr
    data = read_json(isolated_env / ".claude" / "settings.json")
    command = data["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    # every project finds its own workspace (the hook from the payload's cwd)
    assert shlex.split(command)[-4:] == ["memcli", "agent", "hook", "prompt"]
    assert "-w" not in shlex.split(command)
    server = read_json(isolated_env / ".claude.json")["mcpServers"]["memcli"]
    assert server["args"][-3:] == ["-m", "memcli", "mcp"]  # the server: from its cwd
    assert (isolated_env / ".claude" / "CLAUDE.md").is_file()
    assert not (workspace / ".claude").exists()


@pytest.mark.parametrize("agent", ["codex", "claude-code"])
def test_installing_again_changes_no_byte(cli: Cli, workspace: Path, agent: str) -> None:
    """The second install finds everything in place: every file unchanged, byte for byte
    (a second `agent install codex` rewrote .codex/config.toml without its blank line)."""
    assert cli("agent", "install", agent).exit_code == 0
    files = [p for p in workspace.rglob("*") if p.is_file() and ".memcli" not in p.parts]
    before = {p: p.read_bytes() for p in files}
    again = cli("agent", "install", agent, "--json")
    assert again.exit_code == 0, again.stderr
    assert {c["action"] for c in again.json()["files"]} == {"unchanged"}
    assert {p: p.read_bytes() for p in files} == before


def test_codex_install_keeps_the_users_toml(
    cli: Cli, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    original = (
        '# my settings\nmodel = "gpt-5-codex"  # keep\n\n[mcp_servers.db]\ncommand = "pgmcp"\n'
    )
    (home / "config.toml").write_text(original)

    r = cli("agent", "install", "codex", "--scope", "user")
    assert r.exit_code == 0, r.stderr
    text = (home / "config.toml").read_text()
    assert text.startswith(original)
    import tomllib

    conf = tomllib.loads(text)
    assert conf["mcp_servers"]["db"] == {"command": "pgmcp"}
    # user scope pins no workspace: the server finds the one of the folder Codex runs in
    assert conf["mcp_servers"]["memcli"]["args"][-3:] == ["-m", "memcli", "mcp"]
    # Codex's per-tool approval (config.toml mcp_servers.<id>.tools.<tool>.approval_mode):
    # the read-only tools run in `codex exec` without asking, the others keep Codex's default
    tools = conf["mcp_servers"]["memcli"]["tools"]
    assert tools == {
        t: {"approval_mode": "approve"} for t in ("search", "context", "get", "status")
    }
    assert "<!-- memcli:begin" in (home / "AGENTS.md").read_text()

    assert cli("agent", "uninstall", "codex", "--scope", "user").exit_code == 0
    assert (home / "config.toml").read_text() == original
    assert not (home / "AGENTS.md").exists()
    assert not (home / "hooks.json").exists()


def test_generic_prints_the_server_and_the_policy(cli: Cli, workspace: Path) -> None:
    r = cli("agent", "install", "generic", "--json")
    assert r.exit_code == 0, r.stderr
    data = r.json()
    entry = data["mcpServers"]["memcli"]
    assert entry["command"] == sys.executable
    assert entry["args"] == ["-m", "memcli", "-w", str(workspace), "mcp"]
    assert "memcli:begin" in data["policy"]


def test_settings_that_are_not_json_are_refused_untouched(cli: Cli, workspace: Path) -> None:
    settings = workspace / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{ not json")
    r = cli("agent", "install", "claude-code")
    assert r.exit_code == 2
    assert "settings.json is not valid JSON" in r.stderr
    assert len(r.stderr.strip().splitlines()) <= 2  # one line and a hint
    assert settings.read_text() == "{ not json"
    assert not (workspace / "CLAUDE.md").exists()  # nothing half-installed


def test_unknown_agent_is_a_usage_error(cli: Cli) -> None:
    r = cli("agent", "install", "vim")
    assert r.exit_code == 2
    assert "cannot install into 'vim'" in r.stderr


def test_status_reports_what_is_installed_and_logged_errors(cli: Cli, workspace: Path) -> None:
    assert cli("agent", "install", "claude-code").exit_code == 0
    (workspace / ".memcli").mkdir(exist_ok=True)
    (workspace / ".memcli" / "agent.log").write_text(
        "2026-11-25T10:00:00 prompt error: the index is damaged\n"
    )
    r = cli("agent", "status", "--json")
    assert r.exit_code == 0, r.stderr
    data = r.json()
    project = next(i for i in data["installed"] if i["scope"] == "project")
    assert project["hooks"] == ["session-start", "prompt", "pre-compact", "session-end", "file"]
    assert project["mcp"] and project["policy"]
    user = next(i for i in data["installed"] if i["scope"] == "user")
    assert user["hooks"] == [] and not user["mcp"]
    assert data["check"]["ok"] is True
    assert data["errors"] == ["2026-11-25T10:00:00 prompt error: the index is damaged"]
