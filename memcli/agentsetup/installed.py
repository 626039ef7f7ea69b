"""What ``memcli agent status`` and doctor read of an agent's files: memcli's hooks in a hooks
table, whether a server entry can start, the policy; and the warnings they call for. (The
rows per agent and scope: :func:`memcli.agents.setup.status`.)
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from memcli.agentsetup.commands import MCP_HINT, mcp_problem
from memcli.agentsetup.edits import BEGIN, OUR_HOOK, is_ours, read_text
from memcli.agentsetup.hooklog import EVENTS
from memcli.errors import BadInput


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


def entry_problem(entry: dict[str, Any] | None) -> str | None:
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


def installed_hooks(path: Path) -> list[str]:
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


def has_policy(path: Path) -> bool:
    try:
        return BEGIN.split(" (")[0] in (read_text(path) or "")
    except BadInput:
        return False
