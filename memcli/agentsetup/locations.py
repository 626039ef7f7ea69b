"""The one way a project's file is reached: through a link only when the link stays inside
the project. (Where each agent keeps its files: its module in :mod:`memcli.agents`.)
"""

from __future__ import annotations

import os
from pathlib import Path

import memcli.safewrite as safewrite


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
