"""Where memcli is installed (``memcli agent status``, doctor): per agent and scope its hooks,
its MCP server (and, when that cannot start, why) and its policy, with the warnings they call
for.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from memcli.agentsetup.commands import MCP_HINT, SERVER_NAME, mcp_problem
from memcli.agentsetup.edits import BEGIN, OUR_HOOK, is_ours, read_text
from memcli.agentsetup.hooklog import EVENTS
from memcli.agentsetup.locations import claude_files, codex_files
from memcli.errors import BadInput


def status(ws_root: Path, project: Path) -> list[dict[str, Any]]:
    """Where memcli is installed: per agent and scope, its hooks, MCP server (and, when it
    could not start, why: ``mcp_problem``) and policy."""
    out: list[dict[str, Any]] = []
    # each agent's files per scope, and which of them holds the hooks and the server
    agents = (
        ("claude-code", claude_files, 0, 1, _server_of),
        ("codex", codex_files, 1, 0, _codex_server),
    )
    for agent, files_of, hooks_at, server_at, server_in in agents:
        for scope in ("project", "user"):
            files = files_of(scope, project)
            entry = server_in(files[server_at])
            out.append(
                {
                    "agent": agent,
                    "scope": scope,
                    "hooks": _installed_hooks(files[hooks_at]),
                    "mcp": entry is not None,
                    "mcp_problem": _entry_problem(entry),
                    "policy": _has_policy(files[2]),
                    "files": [str(f) for f in files],
                }
            )
    return out


def scope_warnings(rows: list[dict[str, Any]]) -> list[str]:
    """One warning per agent whose hooks are installed in both scopes, or in a scope beside
    memcli's plugin (rows of scope ``plugin``): in this project they would run twice (two
    briefings, two recalls a prompt)."""
    out = []
    for agent in dict.fromkeys(r["agent"] for r in rows):
        plugged = any(r["hooks"] for r in rows if r["agent"] == agent and r["scope"] == "plugin")
        settings = [r for r in rows if r["agent"] == agent and r["scope"] != "plugin"]
        for scope in [r["scope"] for r in settings if r["hooks"]] if plugged else ():
            out.append(
                f"memcli's {agent} hooks are installed in the {scope} scope and by memcli's"
                " plugin: hooks would run twice in this project (memcli agent install"
                f" {agent} --scope {scope} takes them out)"
            )
        if all(r["hooks"] for r in settings) and len(settings) > 1:
            out.append(
                f"memcli's {agent} hooks are installed in both the project and the user scope:"
                " hooks would run twice in this project (memcli agent uninstall"
                f" {agent} --scope user, or --scope project)"
            )
    return out


def server_problems(rows: list[dict[str, Any]]) -> list[str]:
    """One line per installed MCP server entry that cannot start."""
    return [
        f"the {r['agent']} MCP server ({r['scope']} scope) cannot start: {r['mcp_problem']}"
        f" ({r.get('fix') or MCP_HINT + ', then memcli agent install ' + r['agent'] + ' again'})"
        for r in rows
        if r["mcp"] and r["mcp_problem"]
    ]


def _entry_problem(entry: dict[str, Any] | None) -> str | None:
    if entry is None:
        return None
    command, args = entry.get("command"), entry.get("args") or []
    if not isinstance(command, str) or not isinstance(args, list):
        return "the entry has no command"
    if not os.path.isabs(command):
        found = shutil.which(command)
        problem = mcp_problem([found, *map(str, args)]) if found else f"{command} is not found"
        bare = f"it names {command!r} without a path, which an agent may not find on its PATH"
        return f"{bare}; {problem}" if problem else bare
    return mcp_problem([command, *map(str, args)])


def _server_of(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(read_text(path) or "{}")
    except (ValueError, RecursionError, BadInput):
        return None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    return entry if isinstance(entry, dict) else None


def _codex_server(path: Path) -> dict[str, Any] | None:
    import tomllib

    try:
        data = tomllib.loads(read_text(path) or "")
    except (ValueError, RecursionError, BadInput):
        return None
    servers = data.get("mcp_servers")
    entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    return entry if isinstance(entry, dict) else None


def _installed_hooks(path: Path) -> list[str]:
    try:
        data = json.loads(read_text(path) or "{}")
    except (ValueError, RecursionError, BadInput):
        return []
    found: set[str] = set()
    table = data.get("hooks") if isinstance(data, dict) else None
    for groups in (table or {}).values() if isinstance(table, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            for hook in group.get("hooks", []) if isinstance(group, dict) else ():
                m = OUR_HOOK.search(hook.get("command", "")) if is_ours(hook) else None
                if m:
                    found.add(m.group(1))
    return [e for e in EVENTS if e in found]


def _has_policy(path: Path) -> bool:
    try:
        return BEGIN.split(" (")[0] in (read_text(path) or "")
    except BadInput:
        return False
