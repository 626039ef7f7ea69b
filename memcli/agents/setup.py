"""``memcli agent install|uninstall|status`` for any agent: the changes its module plans,
written and recorded for a byte-exact uninstall (:mod:`memcli.agentsetup.record`), and where
memcli is installed.

In user scope no command names a workspace: a hook finds it from the payload's ``cwd``, the
server from its working folder (the project), so each project gets its own memory, and a
project without one gets nothing. Existing settings are merged into, never replaced
(:mod:`memcli.agentsetup.edits`); reinstalling replaces memcli's entries instead of adding
more, and uninstall removes exactly memcli's entries, giving back the very bytes of a file
nobody changed since. ``--dry-run`` shows the plan as a unified diff and writes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from memcli.agents.base import SCOPES, Plan
from memcli.agents.registry import AGENTS, get

if TYPE_CHECKING:
    from memcli.agentsetup.change import Change


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
    """The file changes that install (or, with ``remove``, uninstall) ``agent``; ``plugin``:
    the read-only tool rules of memcli's enabled Claude Code plugin (:class:`Plan`)."""
    from memcli.agentsetup import record
    from memcli.agentsetup.commands import mcp_problem, program
    from memcli.agentsetup.locations import project_file
    from memcli.errors import BadInput

    found = get(agent)
    if scope not in SCOPES:
        raise BadInput(f"unknown scope {scope!r}", hint="--scope project or --scope user")
    prog = prog or program()
    where = project or ws_root
    real = {path: project_file(path, where) for path in found.layout(scope, where).files}
    # the server is written only when it can start (the MCP extra is there)
    server = not remove and mcp_problem(prog) is None
    changes = found.plan(Plan(ws_root, scope, where, remove, prog, server, plugin))
    # a link inside the project (CLAUDE.md -> AGENTS.md) stays one: its target is written
    changes = [c._replace(path=real.get(c.path, c.path), undo=remove) for c in changes]
    return record.undo_exactly(changes) if remove else changes


def apply(changes: list[Change]) -> None:
    """Write the planned files (:func:`memcli.agentsetup.edits.apply`); a config folder of
    an agent that install made and uninstall emptied is removed, never an agent's home."""
    from memcli.agentsetup.edits import apply as write

    folders = tuple(name for agent in AGENTS for name in agent.config_folders)
    homes = tuple(home for agent in AGENTS for home in agent.homes())
    write(changes, folders, homes)


def status(ws_root: Path, project: Path) -> list[dict[str, Any]]:
    """Where memcli is installed: per agent and scope, its hooks, MCP server (and, when it
    could not start, why: ``mcp_problem``) and policy."""
    from memcli.agentsetup.installed import entry_problem, has_policy

    out: list[dict[str, Any]] = []
    for agent in AGENTS:
        for scope in SCOPES:
            files = agent.layout(scope, project)
            entry = agent.server_in(files.servers)
            out.append(
                {
                    "agent": agent.name,
                    "scope": scope,
                    "hooks": agent.installed_hooks(files),
                    "mcp": entry is not None,
                    "mcp_problem": entry_problem(entry),
                    "policy": has_policy(files.policy),
                    "files": [str(f) for f in files.files],
                }
            )
    return out
