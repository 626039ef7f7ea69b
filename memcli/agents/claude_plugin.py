"""memcli's Claude Code plugin: its files, and whether Claude Code has it enabled.

The repository is a plugin marketplace (``.claude-plugin/marketplace.json``) holding one
plugin, ``memcli@memcli``, in :data:`FOLDER`: the hooks ``agent install claude-code`` writes
(the same events, matchers and timeouts), run as ``memcli`` from the agent's PATH and silent
when it is not there, the MCP server (``memcli mcp``) and the memory policy as a skill.
:func:`files` makes them from the code; ``make plugin`` writes them and a test checks they are
current.

Claude Code records what it installed in ``$CLAUDE_CONFIG_DIR/plugins/installed_plugins.json``
and what is enabled in the settings' ``enabledPlugins`` (user, then the project's
``.claude/settings.json``, then ``.claude/settings.local.json``, the later winning).
:func:`installs` reads them, as hostile input (capped, regular files only, a link leaving the
project refused, any damage read as nothing), for ``agent status`` and doctor (:func:`rows`)
and for ``agent install``, which writes no second copy of the hooks or the server beside an
enabled plugin (:data:`ALLOW`: the plugin's read-only tools, allowed instead).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, NamedTuple

from memcli.agents.base import READ_ONLY_TOOLS
from memcli.agents.claude_code import ClaudeCode, config_dir
from memcli.agentsetup.commands import mcp_problem
from memcli.agentsetup.edits import END, load_json, policy_text, read_text, set_hooks
from memcli.agentsetup.installed import installed_hooks
from memcli.agentsetup.locations import project_file
from memcli.errors import BadInput
from memcli.version import __version__

__all__ = ["ALLOW", "PluginInstall", "beside", "enabled", "files", "installs", "rows"]

NAME = "memcli"  #: the plugin's name and its marketplace's: ``memcli@memcli``
SERVER = "memcli"  #: the plugin's MCP server
FOLDER = ".claude-plugin/memcli"  #: the plugin in the repository (the marketplace's root)
SKILL = "skills/memory/SKILL.md"  #: the policy, as a skill (``/memcli:memory``)
#: Claude Code's permission rules for the plugin server's read-only tools
ALLOW = tuple(f"mcp__plugin_{NAME}_{SERVER}__{tool}" for tool in READ_ONLY_TOOLS)
#: What makes the plugin's server start: memcli, with the MCP extra, on the agent's PATH
FIX = (
    "install memcli with its mcp extra on the PATH Claude Code starts with (pipx), then restart it"
)
DESCRIPTION = (
    "Persistent project memory from memcli: a briefing at session start, recall on each"
    " prompt, sessions saved as facts at compaction and at their end, and memcli's MCP tools."
    " Needs memcli on the PATH."
)


def hook_command(event: str) -> str:
    """The plugin's hook for ``event``: ``memcli`` from the PATH, nothing when it is not
    there (the hook itself exits 0 and prints nothing without a workspace)."""
    return f"command -v memcli >/dev/null 2>&1 || exit 0; exec memcli agent hook {event}"


def files() -> dict[str, str]:
    """The marketplace's and the plugin's files: repository path -> text."""
    hooks: dict[str, Any] = {}
    set_hooks(Path("hooks.json"), hooks, ClaudeCode.hooks, hook_command, False)
    plugin = {
        "name": NAME,
        "version": __version__,
        "description": DESCRIPTION,
        "author": {"name": "memcli developers"},
        "license": "MIT",
        "keywords": ["memory", "mcp", "hooks", "markdown", "git"],
    }
    market = {
        "name": NAME,
        "owner": {"name": "memcli developers"},
        "description": "memcli's Claude Code plugin",
        "plugins": [{"name": NAME, "source": f"./{FOLDER}", "description": DESCRIPTION}],
    }
    server = {"mcpServers": {SERVER: {"command": "memcli", "args": ["mcp"]}}}
    return {
        ".claude-plugin/marketplace.json": _json(market),
        f"{FOLDER}/.claude-plugin/plugin.json": _json(plugin),
        f"{FOLDER}/hooks/hooks.json": _json(hooks),
        f"{FOLDER}/.mcp.json": _json(server),
        f"{FOLDER}/{SKILL}": _skill(),
    }


def _json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _skill() -> str:
    """The policy ``agent install`` puts in CLAUDE.md, without its markers, as a skill."""
    body = policy_text().split("\n", 1)[1].replace(END, "").strip()
    about = (
        "How to use this project's memcli memory: recall what is known before a task; save"
        " durable decisions, constraints, procedures and preferences; supersede or forget"
        " facts that changed. Use at the start of a task and whenever something worth"
        " remembering is decided."
    )
    return f"---\nname: memory\ndescription: {json.dumps(about)}\n---\n\n{body}\n"


class PluginInstall(NamedTuple):
    """memcli's plugin as Claude Code records it for a project."""

    id: str  #: name@marketplace
    scope: str  #: where Claude Code installed it: user, project or local
    path: Path | None  #: the installed folder
    enabled: bool  #: enabled for the project by the settings


def installs(project: Path) -> list[PluginInstall]:
    """memcli's plugin installs that reach ``project`` (one of user scope, or of the project
    or a folder above it), each with whether the settings enable it there."""
    record = _read(config_dir() / "plugins" / "installed_plugins.json")
    plugins = record.get("plugins") if isinstance(record, dict) else None
    out = []
    for plugin_id, entries in plugins.items() if isinstance(plugins, dict) else ():
        if not isinstance(plugin_id, str) or plugin_id.split("@")[0] != NAME:
            continue
        on = _enabled(plugin_id, project)
        for entry in entries if isinstance(entries, list) else [entries]:
            if not isinstance(entry, dict) or not _reaches(entry, project):
                continue
            path = entry.get("installPath")
            folder = Path(path) if isinstance(path, str) and os.path.isabs(path) else None
            out.append(PluginInstall(plugin_id, str(entry.get("scope")), folder, on))
    return out


def enabled(project: Path, scope: str = "project") -> PluginInstall | None:
    """The install of memcli's plugin that is enabled for ``project``, if any; for
    ``scope`` user (settings that reach every project), only one installed for the user."""
    return next(
        (p for p in installs(project) if p.enabled and (scope != "user" or p.scope == "user")),
        None,
    )


def rows(project: Path) -> list[dict[str, Any]]:
    """``agent status`` rows (as :func:`memcli.agents.setup.status`'s) for the
    plugin's installs: its hooks, server and policy skill, as installed, when enabled."""
    out = []
    for p in installs(project):
        folder = p.path if p.enabled else None
        server = ClaudeCode().server_in(folder / ".mcp.json") if folder else None
        out.append(
            {
                "agent": "claude-code",
                "scope": "plugin",
                "plugin": {"id": p.id, "scope": p.scope, "enabled": p.enabled},
                "hooks": installed_hooks(folder / "hooks" / "hooks.json") if folder else [],
                "mcp": server is not None,
                "mcp_problem": _problem() if server is not None else None,
                "fix": FIX,
                "policy": bool(folder and (folder / SKILL).is_file()),
                "files": [str(p.path)] if p.path else [],
            }
        )
    return out


def _problem() -> str | None:
    """Why the plugin's server cannot start from this PATH (it runs ``memcli mcp``)."""
    found = shutil.which("memcli")
    if found is None:
        return "memcli is not on the PATH, where the plugin runs it"
    return mcp_problem([found, "mcp"])


def beside(plugin: PluginInstall) -> str:
    """The one line ``agent install`` says beside an enabled plugin."""
    return (
        f"the memcli plugin ({plugin.id}, {plugin.scope} scope) is enabled here and runs the"
        " hooks and the MCP server: install writes only the policy, and allows the plugin's"
        " read-only tools"
    )


def _enabled(plugin_id: str, project: Path) -> bool:
    """``enabledPlugins[plugin_id]`` as the settings decide it for ``project``: the user's,
    then the project's, then its local settings, the last that says wins."""
    found = False
    for path in (
        config_dir() / "settings.json",
        project / ".claude" / "settings.json",
        project / ".claude" / "settings.local.json",
    ):
        data = _read(path, project)
        said = data.get("enabledPlugins") if isinstance(data, dict) else None
        value = said.get(plugin_id) if isinstance(said, dict) else None
        if isinstance(value, bool):
            found = value
    return found


def _reaches(entry: dict[str, Any], project: Path) -> bool:
    """Whether an install record serves ``project``: user scope, or the project's own."""
    if entry.get("scope") == "user":
        return True
    where = entry.get("projectPath")
    if not isinstance(where, str) or not os.path.isabs(where):
        return False
    top = Path(os.path.abspath(where))
    here = Path(os.path.abspath(project))
    return here == top or top in here.parents


def _read(path: Path, project: Path | None = None) -> Any:
    """A JSON file of Claude Code's, or None when it is absent or damaged: not a regular
    file, too large, too deep, not JSON, or a project's link leading out of the project."""
    try:
        if project is not None:
            path = project_file(path, project)
        text = read_text(path)
        return load_json(path, text) if text else None
    except (BadInput, OSError):
        return None
