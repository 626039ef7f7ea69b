"""OpenCode: the MCP server in ``opencode.json``, the policy in ``AGENTS.md``, and a plugin
(``.opencode/plugins/memcli.js``) that gives a session its briefing and each prompt its
recall.

Project scope: ``opencode.json``, ``.opencode/plugins/memcli.js`` and ``AGENTS.md`` in the
project; user scope: ``opencode.json``, ``plugins/memcli.js`` and ``AGENTS.md`` in
``$XDG_CONFIG_HOME/opencode`` (default ``~/.config/opencode``). OpenCode has no command hooks:
its plugins are JavaScript modules it loads at start. memcli's plugin runs memcli's own hooks
(``memcli agent hook session-start`` and ``prompt``) on each user message (``chat.message``)
and adds what they give to the system prompt of that turn's model requests
(``experimental.chat.system.transform``). OpenCode keeps its sessions in a database, not in
files memcli reads: its sessions are not saved as facts (no flush, no import).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memcli.agents.base import Agent, Layout, Plan

if TYPE_CHECKING:
    from memcli.agentsetup.change import Change

#: The first line of the plugin memcli writes: how status tells it is memcli's.
PLUGIN_MARK = "// memcli for OpenCode:"


def config_dir(expand: bool = True) -> Path:
    """``$XDG_CONFIG_HOME/opencode``, default ``~/.config/opencode``."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    folder = Path(base) / "opencode"
    return folder.expanduser() if expand else folder


class OpenCode(Agent):
    name = "opencode"
    title = "OpenCode"
    program = "opencode"
    config_folders = (".opencode", "plugins")
    servers_key = "mcp"
    saves_sessions = False

    def install_note(self, scope: str) -> str | None:
        return (
            "OpenCode gets the briefing and recall from memcli's plugin; its sessions are kept"
            " in its own database and are not saved as facts"
        )

    def layout(self, scope: str, project: Path) -> Layout:
        if scope == "project":
            plugin = project / ".opencode" / "plugins" / "memcli.js"
            return Layout(plugin, project / "opencode.json", project / "AGENTS.md", True)
        folder = config_dir(expand=False)
        plugin = folder / "plugins" / "memcli.js"
        return Layout(plugin, folder / "opencode.json", folder / "AGENTS.md", True)

    def homes(self) -> tuple[Path, ...]:
        return (config_dir(expand=False),)

    def plan(self, p: Plan) -> list[Change]:
        from memcli.agentsetup.change import Change
        from memcli.agentsetup.edits import json_change, policy_change, read_text, set_server

        files = self.layout(p.scope, p.project)
        assert files.hooks is not None

        def servers(data: dict[str, Any]) -> None:
            entry = p.server_entry()
            local = {"type": "local", "command": [entry["command"], *entry["args"]]}
            set_server(data, "mcp", {**local, "enabled": True} if p.server else None)

        before = read_text(files.hooks)
        after = None if p.remove else _plugin(p)
        return [
            json_change(files.servers, servers),
            Change(files.hooks, before, after),
            policy_change(files.policy, p.remove),
        ]

    def server_in(self, path: Path) -> dict[str, Any] | None:
        entry = super().server_in(path)
        command = entry.get("command") if entry is not None else None
        if not isinstance(command, list) or not command:
            return None
        return {"command": command[0], "args": command[1:]}

    def installed_hooks(self, files: Layout) -> list[str]:
        from memcli.agentsetup.edits import read_text
        from memcli.errors import BadInput

        try:
            text = read_text(files.hooks) if files.hooks is not None else None
        except BadInput:
            return []
        return ["session-start", "prompt"] if text and text.startswith(PLUGIN_MARK) else []


def _plugin(p: Plan) -> str:
    """The plugin's text: memcli's command line (``memcli [-w ROOT]``) written into it."""
    command = p.hook_command("prompt")
    import shlex

    words = shlex.split(command)[:-3]  # without "agent hook prompt"
    source = Path(__file__).with_name("opencode_plugin.js").read_text(encoding="utf-8")
    return source.replace("__MEMCLI__", json.dumps(words))
