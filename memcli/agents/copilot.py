"""GitHub Copilot CLI: the MCP server (``.github/mcp.json``, or ``~/.copilot/mcp-config.json``),
a ``sessionStart`` hook (``.github/hooks/memcli.json``, or ``~/.copilot/hooks/memcli.json``)
that briefs each session, and the policy (``.github/copilot-instructions.md``, or
``~/.copilot/copilot-instructions.md``); ``$COPILOT_HOME`` replaces ``~/.copilot``.

Copilot CLI takes context from a command hook only at ``sessionStart`` (its
``additionalContext``); what a ``userPromptSubmitted`` command hook prints is dropped, so there
is no recall per prompt: the agent searches with the MCP tools, as the policy says. Its
sessions are not read by memcli (their format is not documented): they are not saved as
facts. The hook is configured under Copilot CLI's own event name (``sessionStart``), whose
payload is camelCase (``sessionId``, ``cwd``, ``source``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from memcli.agents.base import Agent, Hooks, Layout, Plan

if TYPE_CHECKING:
    from memcli.agentsetup.change import Change


def home(expand: bool = True) -> Path:
    """``$COPILOT_HOME``, default ``~/.copilot``."""
    folder = Path(os.environ.get("COPILOT_HOME") or Path.home() / ".copilot")
    return folder.expanduser() if expand else folder


class Copilot(Agent):
    name = "copilot"
    title = "GitHub Copilot CLI"
    program = "copilot"
    #: event -> (Copilot CLI's event, matcher, timeout in seconds)
    hooks: ClassVar[Hooks] = {"session-start": ("sessionStart", None, 20)}
    config_folders = ("hooks",)
    saves_sessions = False

    def layout(self, scope: str, project: Path) -> Layout:
        if scope == "project":
            github = project / ".github"
            return Layout(
                github / "hooks" / "memcli.json",
                github / "mcp.json",
                github / "copilot-instructions.md",
                True,
            )
        folder = home(expand=False)
        return Layout(
            folder / "hooks" / "memcli.json",
            folder / "mcp-config.json",
            folder / "copilot-instructions.md",
            True,
        )

    def homes(self) -> tuple[Path, ...]:
        return (home(expand=False),)

    def plan(self, p: Plan) -> list[Change]:
        from memcli.agentsetup.change import Change
        from memcli.agentsetup.edits import json_change, policy_change, read_text, set_server

        files = self.layout(p.scope, p.project)
        assert files.hooks is not None

        def servers(data: dict[str, Any]) -> None:
            entry = {"type": "local", **p.server_entry(), "tools": ["*"]}
            set_server(data, "mcpServers", entry if p.server else None)

        hook = {"type": "command", "bash": p.hook_command("session-start"), "timeoutSec": 20}
        table = {"version": 1, "hooks": {"sessionStart": [hook]}}
        after = None if p.remove else json.dumps(table, indent=2) + "\n"
        return [
            json_change(files.servers, servers),
            Change(files.hooks, read_text(files.hooks), after),
            policy_change(files.policy, p.remove),
        ]

    def installed_hooks(self, files: Layout) -> list[str]:
        from memcli.agentsetup.edits import is_ours, read_text
        from memcli.errors import BadInput

        try:
            data = json.loads(read_text(files.hooks) or "{}") if files.hooks else {}
        except (ValueError, RecursionError, BadInput):
            return []
        table = data.get("hooks") if isinstance(data, dict) else None
        starts = table.get("sessionStart") if isinstance(table, dict) else None
        commands = [{"command": h.get("bash")} for h in starts or [] if isinstance(h, dict)]
        return ["session-start"] if any(is_ours(c) for c in commands) else []

    def install_note(self, scope: str) -> str | None:
        trust = (
            "; it reads a project's .github/mcp.json and hooks in a trusted folder only"
            if scope == "project"
            else ""
        )
        return (
            "Copilot CLI gets the briefing at session start and memcli's MCP tools; it has no"
            f" recall per prompt, and its sessions are not saved as facts{trust}"
        )

    def owns(self, payload: dict[str, Any]) -> bool:
        return "sessionId" in payload and "hook_event_name" not in payload

    def answer(self, event: str, text: str) -> dict[str, Any]:
        return {"additionalContext": text}
