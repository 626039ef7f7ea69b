"""A project's past sessions, where the coding agents keep them (each agent's
:meth:`~memcli.agents.base.Agent.past_sessions`: Claude Code's
``$CLAUDE_CONFIG_DIR/projects/<folder>/<session>.jsonl``, Codex's
``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`` and ``archived_sessions``, Gemini CLI's
``~/.gemini/tmp/<project>/chats/session-*.jsonl``).

A session belongs to the project when the folder it ran in (the ``cwd`` its first records
carry, or the folder the agent registered its chats for) is the project's folder or one below
it; only that is read of each file, and only files changed within the horizon are opened.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from memcli.agents.base import PastSession
from memcli.agents.registry import find

__all__ = ["PastSession", "past_sessions"]


def past_sessions(root: Path, agents: tuple[str, ...], days: int) -> list[PastSession]:
    """The sessions of ``agents`` that ran in ``root`` or below it and changed within ``days``
    days, newest first."""
    top = os.path.realpath(root)
    horizon = time.time() - days * 86400
    found: list[PastSession] = []
    for name in agents:
        agent = find(name)
        if agent is not None:
            found += agent.past_sessions(top, horizon)
    return sorted(found, key=lambda s: s.mtime, reverse=True)
