"""Gemini CLI: ``agent install gemini`` merging into its settings and undone byte for byte,
its hook answers, its chat files read as turns and found by ``agent import``."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from tests.conftest import Cli

FIXTURE = Path(__file__).parent / "fixtures" / "agents" / "gemini_session.jsonl"
USER_SETTINGS = b'{\n\t"ui": {"theme": "Dracula"},\n\t"hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./guard.sh"}]}]},\n\t"tools": {"allowed": ["run_shell_command(git)"]}\n}'  # noqa: E501


def test_install_merges_into_the_settings_and_uninstall_gives_the_bytes_back(
    cli: Cli, workspace: Path
) -> None:
    settings = workspace / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(USER_SETTINGS)
    (workspace / "GEMINI.md").write_bytes(b"# Shop\r\n\r\nRun make test.\r\n")

    r = cli("agent", "install", "gemini", "--json")
    assert r.exit_code == 0, r.stderr
    assert [f["action"] for f in r.json()["files"]] == ["update", "update"]
    data = json.loads(settings.read_text())
    assert data["ui"] == {"theme": "Dracula"}
    assert data["hooks"]["BeforeTool"][0]["hooks"][0]["command"] == "./guard.sh"
    events = {e: g[0]["hooks"][0] for e, g in data["hooks"].items() if e != "BeforeTool"}
    assert list(events) == ["SessionStart", "BeforeAgent", "PreCompress", "SessionEnd", "AfterTool"]
    assert data["hooks"]["AfterTool"][0]["matcher"] == "read_file|write_file|replace"
    assert events["BeforeAgent"]["command"].endswith("agent hook prompt")
    assert events["SessionStart"]["timeout"] == 20000  # milliseconds
    assert data["mcpServers"]["memcli"]["args"][-1] == "mcp"
    assert data["tools"]["allowed"] == [
        "run_shell_command(git)",
        "mcp_memcli_search",
        "mcp_memcli_context",
        "mcp_memcli_get",
        "mcp_memcli_status",
    ]
    assert settings.read_text().startswith('{\n\t"ui"')  # the file's own indentation
    policy = (workspace / "GEMINI.md").read_bytes()
    assert (
        policy.startswith(b"# Shop\r\n")
        and b"memcli:begin" in policy
        and b"\n" not in (policy.replace(b"\r\n", b""))
    )

    assert {f["action"] for f in cli("agent", "install", "gemini", "--json").json()["files"]} == {
        "unchanged"
    }
    rows = cli("agent", "status", "--json").json()["installed"]
    row = next(r for r in rows if (r["agent"], r["scope"]) == ("gemini", "project"))
    assert row["hooks"] == ["session-start", "prompt", "pre-compact", "session-end", "file"]
    assert row["mcp"] and row["policy"]

    assert cli("agent", "uninstall", "gemini").exit_code == 0
    assert settings.read_bytes() == USER_SETTINGS
    assert (workspace / "GEMINI.md").read_bytes() == b"# Shop\r\n\r\nRun make test.\r\n"


def test_a_fresh_install_is_removed_whole(cli: Cli, workspace: Path) -> None:
    assert cli("agent", "install", "gemini").exit_code == 0
    assert (workspace / ".gemini" / "settings.json").is_file()
    assert cli("agent", "uninstall", "gemini").exit_code == 0
    assert not (workspace / ".gemini").exists() and not (workspace / "GEMINI.md").exists()


def test_user_scope_writes_gemini_s_own_folder(cli: Cli, workspace: Path) -> None:
    home = Path(os.environ["HOME"]) / ".gemini"
    r = cli("agent", "install", "gemini", "--scope", "user")
    assert r.exit_code == 0, r.stderr
    data = json.loads((home / "settings.json").read_text())
    assert "-w" not in data["mcpServers"]["memcli"]["args"]  # each project its own workspace
    assert "memcli:begin" in (home / "GEMINI.md").read_text()
    assert cli("agent", "uninstall", "gemini", "--scope", "user").exit_code == 0
    assert home.is_dir() and not (home / "settings.json").exists()


def test_bad_settings_are_refused_untouched(cli: Cli, workspace: Path) -> None:
    settings = workspace / ".gemini" / "settings.json"
    settings.parent.mkdir()
    for bad in ('{"hooks": ', '{"tools": ["x"]}', "[" * 100_000):
        settings.write_text(bad)
        r = cli("agent", "install", "gemini")
        assert r.exit_code == 2, (bad[:20], r.stderr)
        assert "settings.json" in r.stderr and len(r.stderr.strip().splitlines()) <= 2
        assert settings.read_text() == bad
        assert not (workspace / "GEMINI.md").exists()


def test_the_hooks_answer_gemini_and_recall_without_its_hook_context(
    cli: Cli, workspace: Path
) -> None:
    from memcli.agent.hook_runner import run_hook

    assert cli("add", "--type", "decision", "Use Valkey for the session cache.").exit_code == 0
    briefing = "&lt;&lt;&lt;BEGIN MEMORY 1&gt;&gt;&gt; Deploys on Tuesdays. Payments on Stripe."
    payload = {
        "session_id": "0e175e3d-1913-4dae-9513-94a86290e01a",
        "cwd": str(workspace),
        "hook_event_name": "BeforeAgent",
        "prompt": f"<hook_context>{briefing}</hook_context>\n\nWhich cache do we use for sessions?",
    }
    answer = json.loads(run_hook("prompt", json.dumps(payload)))["hookSpecificOutput"]
    assert answer["hookEventName"] == "BeforeAgent"
    assert "Valkey" in answer["additionalContext"]
    start = {**payload, "hook_event_name": "SessionStart", "source": "startup"}
    answer = json.loads(run_hook("session-start", json.dumps(start)))["hookSpecificOutput"]
    assert answer["hookEventName"] == "SessionStart" and "Valkey" in answer["additionalContext"]


def test_a_chat_file_reads_as_its_turns() -> None:
    from memcli.flush.conversation import agent_of, parse

    text = FIXTURE.read_text()
    assert agent_of(text) == "gemini"
    # Gemini CLI's session context and memcli's hook context are not turns; a message written
    # again keeps its last text; a rewound one is gone; info lines are not turns
    assert [(m.role, m.content) for m in parse(text)] == [
        ("user", "Which cache do we use for sessions?"),
        ("assistant", "Done."),
        ("user", "Use Postgres 15 for the orders service."),
        ("assistant", "Noted: Postgres 15 for orders."),
    ]


def test_import_finds_the_project_s_chats(cli: Cli, workspace: Path, tmp_path: Path) -> None:
    home = Path(os.environ["HOME"]) / ".gemini"
    other = tmp_path / "elsewhere"
    other.mkdir()
    for name in ("ws", "other"):
        chats = home / "tmp" / name / "chats"
        chats.mkdir(parents=True)
        shutil.copy(FIXTURE, chats / f"session-2026-12-02T02-00-{name}.jsonl")
    (workspace / "api").mkdir()
    projects = {str(workspace / "api"): "ws", str(other): "other"}
    (home / "projects.json").write_text(json.dumps({"projects": projects}))

    r = cli("agent", "import", "--agent", "gemini", "--dry-run", "--json")
    assert r.exit_code == 0, r.stderr
    [found] = r.json()["sessions"]
    assert found["agent"] == "gemini"
    assert found["session_id"] == "0e175e3d-1913-4dae-9513-94a86290e01a"
    assert found["cwd"] == str(workspace / "api")
