"""The coding agents memcli knows, by name, and what is asked of all of them at once: which
agent wrote a session file, where their session files are, the hook answer for a payload.

Adding an agent: its module (an :class:`~memcli.agents.base.Agent`), one line in
:data:`AGENTS`, its tests and its row in docs/agents.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memcli.agents.base import Agent
from memcli.agents.claude_code import ClaudeCode
from memcli.agents.codex import Codex
from memcli.agents.copilot import Copilot
from memcli.agents.gemini import Gemini
from memcli.agents.opencode import OpenCode

#: Every agent install writes into, in the order status lists them. Recognising a session
#: file tries them in this order too (Codex's records first: they carry a ``payload``).
AGENTS: tuple[Agent, ...] = (ClaudeCode(), Codex(), Gemini(), OpenCode(), Copilot())
_BY_NAME = {a.name: a for a in AGENTS}
#: ``memcli agent install generic``: nothing written, the settings printed
GENERIC = "generic"


def names() -> tuple[str, ...]:
    return tuple(_BY_NAME)


def get(name: str) -> Agent:
    """The agent called ``name``; bad input (exit 2) for any other name."""
    found = _BY_NAME.get(name)
    if found is None:
        from memcli.errors import BadInput

        raise BadInput(
            f"cannot install into {name!r}",
            hint=f"one of {', '.join(names())} (or '{GENERIC}' to print the settings)",
        )
    return found


def find(name: str) -> Agent | None:
    return _BY_NAME.get(name)


def transcript_folders() -> tuple[Path, ...]:
    """Every agent's session folders."""
    return tuple(f for agent in AGENTS for f in agent.transcript_folders())


def agent_format(records: list[Any]) -> str | None:
    """The name of the agent whose session file ``records`` (parsed JSON lines) are, else
    None (plain ``{"role", "content"}`` messages)."""
    order = (_BY_NAME["codex"], *(a for a in AGENTS if a.name != "codex"))
    for rec in records:
        if not isinstance(rec, dict):
            return None
        kind = rec.get("type")
        if "role" in rec and kind in (None, "message"):
            # a plain message, or Codex's older form (message records as they are)
            if kind == "message" and isinstance(rec.get("content"), list):
                return "codex"
            return None
        for agent in order:
            if agent.recognises(rec):
                return agent.name
    return None


def calling(event: str, payload: dict[str, Any]) -> Agent:
    """The agent whose hook ``event`` sent ``payload``: the one whose event the payload names
    (``hook_event_name``), or whose payload it is by its shape; Claude Code when none."""
    for agent in AGENTS:
        if agent.owns(payload):
            return agent
    named = payload.get("hook_event_name")
    for agent in AGENTS:
        if event in agent.hooks and agent.hooks[event][0] == named:
            return agent
    return AGENTS[0]


def hook_answer(event: str, text: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The answer of memcli's hook ``event`` carrying ``text``, in the form of the agent that
    called (:func:`calling`)."""
    return calling(event, payload).answer(event, text)


def touched(payload: dict[str, Any]) -> tuple[Agent, list[str]]:
    """The agent whose tool call a file hook's ``payload`` reports, with the files it read or
    edited (:meth:`~memcli.agents.base.Agent.touched`); Claude Code and none for other
    tools."""
    for agent in AGENTS:
        paths = agent.touched(payload)
        if paths:
            return agent, paths
    return AGENTS[0], []
