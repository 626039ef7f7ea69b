"""Claude Code: its settings (hooks, permission rules), its MCP servers file, ``CLAUDE.md``,
and its transcripts (``$CLAUDE_CONFIG_DIR/projects/<folder>/<session>.jsonl``).

Project scope: ``.claude/settings.json``, ``.mcp.json`` and ``CLAUDE.md`` in the project;
user scope: ``settings.json`` and ``CLAUDE.md`` in ``$CLAUDE_CONFIG_DIR`` (default
``~/.claude``) and ``.claude.json`` in the home folder (in ``$CLAUDE_CONFIG_DIR`` when set).
The settings also allow memcli's read-only MCP tools (``permissions.allow``) and, in project
scope, enable the project's server (``enabledMcpjsonServers``), so that a headless
``claude -p`` may call them without asking.

A transcript is JSON Lines of records with a ``type`` (``user``, ``assistant``, ``summary``,
``system``, ``attachment``...) and, for the two turns, a ``message`` holding ``role`` and
``content`` (a string or a list of blocks: ``text``, ``tool_use``, ``tool_result``,
``thinking``, ``image``); meta records, side chains and compaction summaries are not turns.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from memcli.agents.base import (
    READ_ONLY_TOOLS,
    Agent,
    Hooks,
    Layout,
    PastSession,
    Plan,
    head_records,
    listing,
    matching,
    text_of,
    tool_file,
)

if TYPE_CHECKING:
    from memcli.agentsetup.change import Change

#: Claude Code's permission rules for memcli's read-only tools: mcp__<server>__<tool>
ALLOW = tuple(f"mcp__memcli__{tool}" for tool in READ_ONLY_TOOLS)
_TYPES = frozenset(
    {"user", "assistant", "summary", "system", "attachment", "queue-operation",
     "file-history-snapshot", "progress"}
)  # fmt: skip
_ROLES = ("user", "assistant")


def config_dir(expand: bool = True) -> Path:
    """``$CLAUDE_CONFIG_DIR``, default ``~/.claude`` (``expand``: a ``~`` in it expanded)."""
    folder = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")
    return folder.expanduser() if expand else folder


def project_folder(root: Path) -> Path:
    """Where Claude Code keeps the transcripts of sessions started in ``root``: its path with
    each character but a letter or digit made ``-``."""
    return config_dir() / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(root))


#: The tools that read or edit one file, named by ``tool_input.file_path``.
FILE_TOOLS = ("Read", "Edit", "Write", "MultiEdit")


class ClaudeCode(Agent):
    name = "claude-code"
    title = "Claude Code"
    program = "claude"
    #: event -> (Claude's event, matcher or None for every occasion, timeout in seconds)
    hooks: ClassVar[Hooks] = {
        "session-start": ("SessionStart", "startup|resume|clear|compact", 20),
        "prompt": ("UserPromptSubmit", None, 10),
        "pre-compact": ("PreCompact", None, 10),
        "session-end": ("SessionEnd", None, 10),
        "file": ("PostToolUse", "|".join(FILE_TOOLS), 10),
    }
    config_folders = (".claude",)

    def layout(self, scope: str, project: Path) -> Layout:
        if scope == "project":
            return Layout(
                project / ".claude" / "settings.json", project / ".mcp.json", project / "CLAUDE.md"
            )
        home = config_dir(expand=False)
        # .claude.json sits beside the settings folder, or in CLAUDE_CONFIG_DIR when set
        servers = home if os.environ.get("CLAUDE_CONFIG_DIR") else Path.home()
        return Layout(home / "settings.json", servers / ".claude.json", home / "CLAUDE.md")

    def homes(self) -> tuple[Path, ...]:
        return (config_dir(expand=False),)

    def plan(self, p: Plan) -> list[Change]:
        from memcli.agentsetup.edits import (
            json_change,
            policy_change,
            set_hooks,
            set_members,
            set_server,
        )
        from memcli.errors import BadInput

        files = self.layout(p.scope, p.project)
        settings_path = files.hooks
        assert settings_path is not None

        # beside memcli's enabled plugin: its hooks and server serve, not ours
        p = p._replace(server=p.server and not p.plugin)

        def settings(data: dict[str, Any]) -> None:
            set_hooks(settings_path, data, self.hooks, p.hook_command, p.remove or bool(p.plugin))
            permissions = data.get("permissions")
            if permissions is not None and not isinstance(permissions, dict):
                raise BadInput(
                    f'{settings_path}: "permissions" is not an object', hint="fix it by hand"
                )
            permissions = dict(permissions or {})
            set_members(settings_path, permissions, "allow", ALLOW, not p.server)
            set_members(settings_path, permissions, "allow", p.plugin, p.remove)
            if permissions:
                data["permissions"] = permissions
            else:
                data.pop("permissions", None)
            if p.scope == "project":  # a server of .mcp.json runs only once the user enabled it
                set_members(settings_path, data, "enabledMcpjsonServers", ("memcli",), not p.server)

        def servers(data: dict[str, Any]) -> None:
            set_server(data, "mcpServers", p.server_entry() if p.server else None)

        return [
            json_change(settings_path, settings),
            json_change(files.servers, servers),
            policy_change(files.policy, p.remove),
        ]

    def touched(self, payload: dict[str, Any]) -> list[str]:
        return tool_file(payload, FILE_TOOLS)

    def transcript_folders(self) -> tuple[Path, ...]:
        return (config_dir() / "projects",)

    def recognises(self, rec: dict[str, Any]) -> bool:
        return rec.get("type") in _TYPES and (
            isinstance(rec.get("message"), dict) or "sessionId" in rec or "uuid" in rec
        )

    def turn(self, rec: dict[str, Any]) -> tuple[str, str] | None:
        if rec.get("type") not in _ROLES:
            return None
        if rec.get("isMeta") or rec.get("isSidechain") or rec.get("isCompactSummary"):
            return None
        message = rec.get("message")
        if not isinstance(message, dict):
            return None
        role = message.get("role", rec["type"])
        if role not in _ROLES:
            return None
        return role, text_of(message.get("content"))

    def past_sessions(self, top: str, horizon: float) -> list[PastSession]:
        prefix = re.sub(r"[^A-Za-z0-9]", "-", top)
        folders = [
            f
            for f in listing(config_dir() / "projects")
            if f.name.startswith(prefix) and f.is_dir()
        ]
        files = (p for f in folders for p in listing(f))
        return matching(self.name, files, top, horizon, _head)

    def catch_up(self, root: Path, horizon: float) -> list[tuple[float, str, str]]:
        folder = project_folder(root.resolve())
        if not folder.is_dir():
            return []
        try:
            files = list(folder.glob("*.jsonl"))
        except OSError:
            return []
        found = []
        for path in files:
            try:
                mtime = path.stat().st_mtime
            except OSError:
                continue
            if mtime >= horizon:
                found.append((mtime, path.stem, str(path)))
        return found


def _head(path: Path) -> tuple[str, str] | None:
    for rec in head_records(path):
        if isinstance(rec.get("cwd"), str):
            return str(rec.get("sessionId") or ""), rec["cwd"]
    return None
