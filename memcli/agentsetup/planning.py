"""Planning ``memcli agent install`` and ``uninstall``: the changes to each agent's files.

Claude Code (project scope: ``.claude/settings.json``, ``.mcp.json`` and ``CLAUDE.md`` in the
project; user scope: ``settings.json``, ``.claude.json`` and ``CLAUDE.md`` in
``$CLAUDE_CONFIG_DIR``, default ``~/.claude``, with ``.claude.json`` in the home folder):
the four hooks, the MCP server and a memory policy between markers; the settings also allow
memcli's read-only MCP tools (``permissions.allow``: ``mcp__memcli__search``...) and, in
project scope, enable the project's server (``enabledMcpjsonServers``), so that a headless
``claude -p`` may call them without asking. Codex (project scope: ``.codex/config.toml``,
``.codex/hooks.json`` and ``AGENTS.md`` in the project, which Codex reads in a trusted project;
user scope: the same files in ``$CODEX_HOME``, default ``~/.codex``): the MCP server with its
read-only tools approved (``[mcp_servers.memcli.tools.<tool>] approval_mode = "approve"``),
the hooks (SessionStart, UserPromptSubmit, PreCompact, and Stop for session-end) with
``[features] hooks = true``, and the policy.

In user scope no command names a workspace: a hook finds it from the payload's ``cwd``, the
server from its working folder (the project), so each project gets its own memory, and a
project without one gets nothing. Existing settings are merged into, never replaced
(:mod:`memcli.agentsetup.edits`); reinstalling replaces memcli's entries instead of adding
more, and uninstall removes exactly memcli's entries, giving back the very bytes of a file
nobody changed since (:mod:`memcli.agentsetup.record`). ``--dry-run`` shows the plan as a
unified diff and writes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memcli.agentsetup import record
from memcli.agentsetup.change import Change
from memcli.agentsetup.commands import SERVER_NAME, hook_command, mcp_problem, program, server_entry
from memcli.agentsetup.edits import (
    json_change,
    newline_of,
    policy_change,
    read_text,
    set_hooks,
    set_members,
    set_server,
    with_newline,
)
from memcli.agentsetup.hooklog import EVENTS
from memcli.agentsetup.locations import claude_files, codex_files, files_of, project_file
from memcli.errors import BadInput

AGENTS = ("claude-code", "codex", "generic")
#: The MCP tools that only read (their readOnlyHint, memcli.agent.mcp_server): allowed without
#: asking. Not imported from the server: that would import the MCP SDK.
READ_ONLY_TOOLS = ("search", "context", "get", "status")
#: Claude Code's permission rules for them: mcp__<server>__<tool>
CLAUDE_ALLOW = tuple(f"mcp__{SERVER_NAME}__{tool}" for tool in READ_ONLY_TOOLS)
#: Claude Code: event -> (matcher or None for every occasion, timeout in seconds)
CLAUDE_HOOKS = {
    "session-start": ("startup|resume|clear|compact", 20),
    "prompt": (None, 10),
    "pre-compact": (None, 10),
    "session-end": (None, 10),
}
#: Codex: event -> (Codex's event name, matcher or None, timeout in seconds). Codex has no
#: session end (Stop ends each turn): the flush it starts takes only the turns not flushed.
CODEX_HOOKS: dict[str, tuple[str, str | None, int]] = {
    "session-start": ("SessionStart", None, 20),
    "prompt": ("UserPromptSubmit", None, 10),
    "pre-compact": ("PreCompact", None, 10),
    "session-end": ("Stop", None, 10),
}


def plan(
    agent: str,
    ws_root: Path,
    *,
    scope: str = "project",
    project: Path | None = None,
    remove: bool = False,
    prog: list[str] | None = None,
    plugin: tuple[str, ...] = (),
) -> list[Change]:
    """The file changes that install (or, with ``remove``, uninstall) ``agent``. ``plugin``:
    Claude Code's permission rules for the read-only tools of memcli's plugin, given when it
    is enabled for the project (its hooks and server serve it: none of memcli's are written,
    these rules are) and on uninstall (taken out)."""
    prog = prog or program()
    where = project or ws_root
    if agent not in ("claude-code", "codex"):
        raise BadInput(
            f"cannot install into {agent!r}",
            hint="one of claude-code, codex (or 'generic' to print the settings)",
        )
    real = {path: project_file(path, where) for path in files_of(agent, scope, where)}
    # the server is written only when it can start (the MCP extra is there)
    server = not remove and mcp_problem(prog) is None
    if agent == "claude-code":  # the files are read only once checked, above
        changes = _plan_claude(ws_root, scope, where, remove, prog, server, plugin)
    else:
        changes = _plan_codex(ws_root, scope, where, remove, prog, server)
    # a link inside the project (CLAUDE.md -> AGENTS.md) stays one: its target is written
    changes = [c._replace(path=real.get(c.path, c.path), undo=remove) for c in changes]
    return record.undo_exactly(changes) if remove else changes


def _plan_claude(
    ws_root: Path,
    scope: str,
    project: Path,
    remove: bool,
    prog: list[str],
    server: bool,
    plugin: tuple[str, ...] = (),
) -> list[Change]:
    settings_path, servers_path, policy_path = claude_files(scope, project)
    here = project if scope == "project" else None  # user scope: the workspace of the cwd
    events = {e: (EVENTS[e], matcher, t) for e, (matcher, t) in CLAUDE_HOOKS.items()}
    server = server and not plugin  # beside memcli's plugin: its hooks and server, not ours

    def hooks(data: dict[str, Any]) -> None:
        set_hooks(
            settings_path,
            data,
            events,
            lambda e: hook_command(ws_root, here, prog, e),
            remove or bool(plugin),
        )
        permissions = data.get("permissions")
        if permissions is not None and not isinstance(permissions, dict):
            raise BadInput(
                f'{settings_path}: "permissions" is not an object', hint="fix it by hand"
            )
        permissions = dict(permissions or {})
        set_members(settings_path, permissions, "allow", CLAUDE_ALLOW, not server)
        set_members(settings_path, permissions, "allow", plugin, remove)
        if permissions:
            data["permissions"] = permissions
        else:
            data.pop("permissions", None)
        if scope == "project":  # a server of .mcp.json runs only once the user enabled it
            set_members(settings_path, data, "enabledMcpjsonServers", (SERVER_NAME,), not server)

    def servers(data: dict[str, Any]) -> None:
        set_server(data, "mcpServers", server_entry(ws_root, here, prog) if server else None)

    return [
        json_change(settings_path, hooks),
        json_change(servers_path, servers),
        policy_change(policy_path, remove),
    ]


def _plan_codex(
    ws_root: Path, scope: str, project: Path, remove: bool, prog: list[str], server: bool
) -> list[Change]:
    import tomlkit  # a TOML writer that keeps the user's comments and layout

    config_path, hooks_path, policy_path = codex_files(scope, project)
    here = project if scope == "project" else None  # user scope: the workspace of the cwd
    before = read_text(config_path)
    try:
        doc = tomlkit.parse(before or "")
    except Exception as exc:  # tomlkit's parse errors have no common public base
        raise BadInput(f"{config_path} is not valid TOML: {exc}", hint="fix it by hand") from None
    servers = doc.get("mcp_servers")
    if not server:
        if servers is not None and SERVER_NAME in servers:
            del servers[SERVER_NAME]
            if not servers:
                del doc["mcp_servers"]
    else:
        if servers is None:
            servers = tomlkit.table(is_super_table=True)
            doc["mcp_servers"] = servers
        entry = tomlkit.table()
        for key, value in server_entry(ws_root, here, prog).items():
            entry[key] = value
        # the read-only tools run without asking, `codex exec` (approval policy never) too
        tools = tomlkit.table(is_super_table=True)
        for tool in READ_ONLY_TOOLS:
            approval = tomlkit.table()
            approval["approval_mode"] = "approve"
            tools[tool] = approval
        entry["tools"] = tools
        old = servers.get(SERVER_NAME)
        if old is None or getattr(old, "unwrap", lambda: old)() != entry.unwrap():
            servers[SERVER_NAME] = entry  # an entry already as it should be keeps its layout
    if not remove:  # hooks run behind this feature (on by default in later Codex versions)
        features = doc.get("features")
        if features is None:
            features = tomlkit.table()
            doc["features"] = features
        if "codex_hooks" not in features and "hooks" not in features:  # the user's choice
            features["hooks"] = True  # its older name codex_hooks is still read
    nl = newline_of(before)  # the file's own line endings for what memcli writes
    after: str | None = tomlkit.dumps(doc)
    if after == "" and before is None:
        after = None
    elif remove and after != before and after is not None:  # no blank lines where it was
        after = after.rstrip("\r\n") + nl if after.strip() else None
    if after is not None and after != before:
        after = with_newline(after, nl)
    events = CODEX_HOOKS

    def hooks(data: dict[str, Any]) -> None:
        set_hooks(hooks_path, data, events, lambda e: hook_command(ws_root, here, prog, e), remove)

    return [
        Change(config_path, before, after),
        json_change(hooks_path, hooks),
        policy_change(policy_path, remove),
    ]
