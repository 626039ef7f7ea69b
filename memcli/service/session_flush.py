"""An agent session's flush: the turns of its transcript not flushed before, the sessions due
(a failed flush, a session that ended without its end hook) and the import of a project's
past sessions.

The transcript is read and parsed once; its new turns go to the flush pipeline as messages
(:func:`memcli.flush.pipeline.flush`), never turned back into text.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import memcli.service.flush as flushing
from memcli.errors import BadInput, MemcliError
from memcli.service.core import MemoryCore

if TYPE_CHECKING:
    from memcli.flush.facts import FlushResult
    from memcli.flush.history import PastSession

__all__ = [
    "CATCH_UP_DAYS",
    "CATCH_UP_MAX",
    "SessionFlush",
    "flush_session",
    "import_sessions",
    "sessions_due",
]


class SessionFlush(NamedTuple):
    """What a session flush sent: the turns found, those new since the last flush, the flush."""

    session_id: str
    turns: int
    new_turns: int
    result: FlushResult | None  # None: nothing new to send

    def as_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "turns": self.turns,
            "new_turns": self.new_turns,
            "flush": self.result.as_dict() if self.result is not None else None,
        }


#: A session-start catches up with the sessions of the last days that were never flushed,
#: at most this many at a time (each is an LLM request or more).
CATCH_UP_DAYS = 3
CATCH_UP_MAX = 5


def flush_session(
    core: MemoryCore, session_id: str, transcript: str | Path, *, background: bool = False
) -> SessionFlush:
    """Flush the turns of an agent session's transcript not flushed before (see
    :mod:`memcli.flush.sessions`); the record moves on only when the flush succeeded.
    With no ``llm.model``, the agent that wrote the transcript answers with its own CLI
    (``agent.own_model``). ``background``: a hook started it, and it counts towards
    ``agent.max_flushes_per_day`` (past it, the session waits for the next day).

    The transcript is read with the hook's own checks (:func:`read_agent_file`), again:
    the file the hook checked may have been swapped since for a link or a FIFO, and a
    failed session's record (``--due``) may name any file. A refused one is recorded so,
    and not tried again."""
    from memcli.flush.conversation import agent_of, parse  # session flushes only
    from memcli.flush.pipeline import flush as run_flush
    from memcli.flush.sessions import SessionLog, take_daily_slot, turn_digest
    from memcli.flush.source import read_agent_file

    log = SessionLog(_sessions_folder(core), session_id)
    with log.lock.acquire(core._lock_timeout()):
        try:
            raw = read_agent_file(transcript, core.ws.root, "transcript_path")
        except BadInput as exc:
            log.record_refusal(str(transcript), exc.message)
            raise
        turns = parse(raw)
        digests = [turn_digest(m.role, m.content) for m in turns]
        start = log.new_from(log.flushed(), digests)
        new = turns[start:]
        if not new:
            return SessionFlush(session_id, len(turns), 0, None)
        try:
            if background:
                cap = int(core.settings.get("agent.max_flushes_per_day"))
                take_daily_slot(_sessions_folder(core), cap)
            # the turns as parsed: the pipeline takes messages, never parses them again
            result = run_flush(flushing.host(core), new, agent=agent_of(raw))
        except Exception as exc:  # the next hook of the workspace tries it again
            log.record_failure(str(transcript), getattr(exc, "message", str(exc)))
            raise
        log.record(digests, str(transcript))
        return SessionFlush(session_id, len(turns), len(new), result)


def import_sessions(
    core: MemoryCore,
    *,
    agents: tuple[str, ...] | None = None,
    days: int = 30,
    limit: int = 50,
    dry_run: bool = False,
    progress: Callable[[int, int, PastSession], None] | None = None,
) -> list[dict[str, Any]]:
    """Save the facts of this project's past sessions (:mod:`memcli.flush.history`:
    those of ``agents`` that ran here or below, changed within ``days``; the ``limit``
    newest), each through :func:`flush_session`: its turns flushed before, by a hook or
    an earlier import, are never sent again, so an import stopped halfway goes on where it
    stopped. One row per session, newest first; ``dry_run`` reads and sends nothing.
    A ConfigError (exit 2) before anything is read when no LLM can save them."""
    from memcli.agents.registry import names
    from memcli.flush.extract import llm_config  # an import flushes
    from memcli.flush.history import past_sessions

    agents = agents or names()
    if days < 1 or limit < 1:
        raise BadInput(
            "{days} and {max_sessions} take a number of at least 1",
            fields=("days", "max_sessions"),
        )
    found = past_sessions(core.ws.root, agents, days)[:limit]
    for agent in [] if dry_run else sorted({s.agent for s in found}) or list(agents[:1]):
        llm_config(core.settings, agent)  # no LLM for these sessions: say so, read none
    rows = []
    for n, past in enumerate(found, 1):
        row: dict[str, Any] = {
            "agent": past.agent,
            "session_id": past.session_id,
            "path": str(past.path),
            "modified": time.strftime("%Y-%m-%d %H:%M", time.localtime(past.mtime)),
            "cwd": past.cwd,
        }
        if progress is not None:
            progress(n, len(found), past)
        if not dry_run:
            try:
                done = flush_session(core, past.session_id, past.path)
            except MemcliError as exc:  # recorded as failed: the next import retries it
                row["error"] = exc.message
            else:
                result = done.result
                row["new_turns"] = done.new_turns
                row["written"] = len(result.written) if result is not None else 0
        rows.append(row)
    return rows


def _sessions_folder(core: MemoryCore) -> Path:
    return core.ws.state_file("agent", "sessions", "-").parent


def sessions_due(core: MemoryCore, current: str | None = None) -> list[tuple[str, str]]:
    """The sessions a flush is due for, (session id, transcript): those whose last flush
    failed, then this workspace's folder's sessions that an agent kept (each agent's
    :meth:`~memcli.agents.base.Agent.catch_up`: Claude Code's transcripts, Gemini CLI's
    chats), changed within :data:`CATCH_UP_DAYS` days, that memcli never flushed: a
    session that ended without its end hook (Ctrl-C, a crash). ``current``, the session
    asking, is left out; at most :data:`CATCH_UP_MAX`, the newest first."""
    from memcli.agents.registry import AGENTS
    from memcli.flush.sessions import failed_sessions, recorded_sessions

    folder = _sessions_folder(core)
    due = [(s, t) for s, t in failed_sessions(folder) if s != current and t]
    known = recorded_sessions(folder)
    horizon = time.time() - CATCH_UP_DAYS * 86400
    found = [
        (mtime, session, path)
        for agent in AGENTS
        for mtime, session, path in agent.catch_up(core.ws.root, horizon)
        if session != current and session not in known
    ]
    found.sort(reverse=True)  # the newest first
    due += [(session, path) for _, session, path in found]
    return due[:CATCH_UP_MAX]
