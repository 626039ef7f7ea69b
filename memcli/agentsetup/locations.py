"""Where each agent keeps the files install writes, per scope, and the one way a project's
file is reached: through a link only when the link stays inside the project.
"""

from __future__ import annotations

import os
from pathlib import Path

import memcli.safewrite as safewrite
from memcli.errors import BadInput


def claude_dir() -> Path:
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")


def codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def claude_files(scope: str, project: Path) -> tuple[Path, Path, Path]:
    """(settings with the hooks, file with the MCP servers, instructions file)."""
    if scope == "project":
        return project / ".claude" / "settings.json", project / ".mcp.json", project / "CLAUDE.md"
    if scope == "user":
        home = claude_dir()
        # .claude.json sits beside the settings folder, or in CLAUDE_CONFIG_DIR when set
        servers = home if os.environ.get("CLAUDE_CONFIG_DIR") else Path.home()
        servers = servers / ".claude.json"
        return home / "settings.json", servers, home / "CLAUDE.md"
    raise BadInput(f"unknown scope {scope!r}", hint="--scope project or --scope user")


def codex_files(scope: str, project: Path) -> tuple[Path, Path, Path]:
    """(config.toml with the MCP server, hooks.json, instructions file). Codex reads a
    project's ``.codex/`` layer (its config.toml and hooks.json) in a trusted project."""
    if scope == "project":
        return (
            project / ".codex" / "config.toml",
            project / ".codex" / "hooks.json",
            (project / "AGENTS.md"),
        )
    if scope == "user":
        home = codex_home()
        return home / "config.toml", home / "hooks.json", home / "AGENTS.md"
    raise BadInput(f"unknown scope {scope!r}", hint="--scope project or --scope user")


def files_of(agent: str, scope: str, project: Path) -> tuple[Path, ...]:
    """Every file installing ``agent`` reads and writes."""
    if agent == "claude-code":
        return claude_files(scope, project)
    return codex_files(scope, project)


def project_file(path: Path, project: Path) -> Path:
    """The file install reads and writes for ``path``: itself, or, when it or a folder on
    its way is a link, the file the link leads to, as long as that stays inside the project
    (``CLAUDE.md -> AGENTS.md``; :func:`memcli.safewrite.target`). A link leading out of it
    is refused: a repository may have committed one pointing at the user's files
    (``.claude/settings.json`` to a credentials file, ``CLAUDE.md`` to a shell profile),
    which install would read into a tracked file. A file outside the project (user scope)
    is the user's own to link."""
    top = Path(os.path.abspath(project))
    try:
        Path(os.path.abspath(path)).relative_to(top)
    except ValueError:
        return path
    return safewrite.target(path, top)
