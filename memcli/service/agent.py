"""What a coding agent's hooks ask of memory: a briefing, recall for a prompt, a session flush.

The briefing and the recalled memories are context blocks (:mod:`memcli.search.context`):
quoted data with citations, framed so that a later flush strips them
(:func:`memcli.flush.transcripts.strip_recalled`) instead of saving them again.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import memcli.index.factrows as factrows
from memcli.errors import BadInput, MemcliError
from memcli.search.options import SearchRequest
from memcli.service.flush import FlushService
from memcli.service.searching import SearchService

if TYPE_CHECKING:
    from memcli.flush.facts import FlushResult
    from memcli.flush.history import PastSession
    from memcli.search.context import ContextBlock, Quote

__all__ = ["AgentService", "Briefing", "SessionFlush"]

#: Prompts shorter than this (in characters, stripped) get no recall: "yes", "go on", "ok".
MIN_RECALL_CHARS = 12
#: How much of a prompt recall searches with (the start of a long paste says what it is about).
RECALL_QUERY_CHARS = 2000
#: Chunks read per briefing section before entries are picked from them.
_CHUNKS_PER_ENTRY = 2


class Briefing(NamedTuple):
    """The context a session starts with: standing entries, then the latest ones."""

    block: ContextBlock
    standing: int  # standing entries found (decisions, constraints, procedures...)
    latest: int  # latest entries found besides them
    budget: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "text": self.block.text,
            "standing": self.standing,
            "latest": self.latest,
            "included": self.block.included,
            "left_out": self.block.left_out,
            "budget": self.budget,
            "sections": [s.as_dict() for s in self.block.sections],
        }


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


class AgentService(SearchService, FlushService):
    def briefing(self, max_tokens: int | None = None) -> Briefing:
        """The standing entries (types ``agent.briefing_types``, evergreen first, then newest)
        and the ``agent.briefing_latest`` newest other entries, as one context block within
        ``max_tokens`` (default ``agent.briefing_tokens``)."""
        from memcli.search.context import render  # a briefing builds a block

        budget = int(max_tokens or self.settings.get("agent.briefing_tokens"))
        kinds = tuple(t.lower() for t in self.settings.get("agent.briefing_types"))
        latest_n = int(self.settings.get("agent.briefing_latest"))

        def collect() -> tuple[list[Quote], list[Quote]]:
            self.sync_before_search()
            standing = self._recent_entries(kinds, 50) if kinds else []
            seen = {(q.path, q.start_line) for q in standing}
            latest = [
                q
                for q in self._recent_entries((), latest_n + len(seen))
                if (q.path, q.start_line) not in seen
            ][:latest_n]
            return standing, latest

        standing, latest = self._with_repair(collect)
        block = render("", [*standing, *latest], budget, title=_briefing_title(kinds))
        return Briefing(block, len(standing), len(latest), budget)

    def _recent_entries(self, kinds: tuple[str, ...], limit: int) -> list[Quote]:
        """Up to ``limit`` entries, newest first: of types ``kinds``, or (none given) any
        entry of a dated file."""
        from memcli.notes.entries import entry_fields  # briefings only
        from memcli.search.context import Quote  # briefings only
        from memcli.search.stale import stale_mark

        out: list[Quote] = []
        if limit <= 0:
            return out
        from datetime import date

        today = date.today().isoformat()
        for chunk in factrows.recent_chunks(
            self.store.conn, limit * _CHUNKS_PER_ENTRY, kinds, today
        ):
            lines = chunk.text.split("\n")
            found = [
                (kind, line, end)
                for _, kind, _, _, line, end, _ in entry_fields(chunk.text)
                if not kinds or (kind or "").lower() in kinds
            ]
            for _, line, end in reversed(found):  # newest (last written) first
                raw = "\n".join(lines[line - 1 : end]).rstrip()
                start = chunk.start_line + line - 1
                mark = stale_mark(self.store.conn, chunk.path, start, start)
                out.append(Quote(chunk.path, start, start + (end - line), raw, mark))
                if len(out) >= limit:
                    return out
        return out

    def recall(self, prompt: str, max_tokens: int | None = None, session: str | None = None) -> Any:
        """The memories that match ``prompt`` well (score at least ``agent.recall_min_score``,
        at most ``agent.recall_limit``) as a :class:`~memcli.service.search_answers.Context`, or
        None when nothing does, the prompt is too short to search or is a slash command.
        The block quotes the entries that matched, not their neighbours. ``session``: the
        agent's session, which is never given the same entry twice (:mod:`memcli.flush.given`:
        an entry whose text changed since is new)."""
        from memcli.flush.transcripts import strip_recalled  # recall only

        text = " ".join(strip_recalled(prompt).split())
        budget = int(self.settings.get("agent.recall_tokens") if max_tokens is None else max_tokens)
        if budget <= 0 or len(text) < MIN_RECALL_CHARS or text.startswith("/"):
            return None
        limit = int(self.settings.get("agent.recall_limit"))
        opts = self.search_options(SearchRequest(limit=limit, min_score=0.0))
        from memcli.search.context import render  # recall builds a block
        from memcli.service.search_answers import Context  # (with the block)

        result = self.search(text[:RECALL_QUERY_CHARS], opts)
        result.hits = self._recalled(result)
        if session and result.hits:
            from memcli.flush.given import Given, given_folder  # a session's recall only

            given: Given | None = Given(given_folder(self.ws.root), session)
        else:
            given = None
        skip = given.has if given is not None else None
        block = render(result.query, result.hits, budget, matches_only=True, skip=skip)
        if given is not None and block.included:
            given.add(block.quoted)
        return Context(result, block, budget) if block.included else None

    def forget_given(self, session: str) -> None:
        """The session starts again after a compaction or a clear: what recall gave it is gone
        from its context, and may be given again."""
        from memcli.flush.given import Given, given_folder  # session records only

        Given(given_folder(self.ws.root), session).clear()

    def _recalled(self, result: Any) -> list[Any]:
        """The hits recall keeps. In a search with vectors: each hit narrowed to the entry of
        its chunk nearest the prompt, kept when that entry's own similarity reaches
        :meth:`recall_min_similarity` (a fused score says less: it ranks, it does not tell
        a prompt about memory from one that is not). Otherwise: hits scoring at least
        ``agent.recall_min_score``, with their matching passage."""
        embedder = self.embedder
        if result.mode != "keyword" and embedder is not None and result.hits:
            from functools import partial

            from memcli.errors import ProviderError
            from memcli.search.nearest import nearest_entries  # recall with vectors only

            try:
                vector = embedder.embed_query(result.query)
                found = nearest_entries(result.hits, vector, partial(embedder.embed, quick=True))
            except ProviderError:  # the model failed since the search: scores alone
                found = None
            if found is not None:
                threshold = self.recall_min_similarity()
                return [hit for hit, sim in found if sim >= threshold]
        min_score = float(self.settings.get("agent.recall_min_score"))
        return [hit for hit in result.hits if hit.score >= min_score]

    def recall_min_similarity(self) -> float:
        """``agent.recall_min_similarity``, or (0, the default) the value measured for the
        embedding model (:data:`memcli.providers.models.MODELS`), or
        :data:`~memcli.providers.models.RECALL_SIMILARITY` for a model not measured."""
        value = float(self.settings.get("agent.recall_min_similarity"))
        if value > 0:
            return value
        from memcli.providers.models import RECALL_SIMILARITY, find

        known = find(str(self.settings.get("embedding.model") or ""))
        return known.recall_similarity if known is not None else RECALL_SIMILARITY

    def flush_session(
        self, session_id: str, transcript: str | Path, *, background: bool = False
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
        from memcli.errors import BadInput
        from memcli.flush.conversation import agent_of, parse  # session flushes only
        from memcli.flush.sessions import SessionLog, take_daily_slot, turn_digest
        from memcli.flush.source import read_agent_file
        from memcli.service.datatypes import FlushOptions

        log = SessionLog(self._sessions_folder(), session_id)
        with log.lock.acquire(self._lock_timeout()):
            try:
                raw = read_agent_file(transcript, self.ws.root, "transcript_path")
            except BadInput as exc:
                log.record_refusal(str(transcript), exc.message)
                raise
            turns = parse(raw)
            digests = [turn_digest(m.role, m.content) for m in turns]
            start = log.new_from(log.flushed(), digests)
            new = turns[start:]
            if not new:
                return SessionFlush(session_id, len(turns), 0, None)
            text = json.dumps([{"role": m.role, "content": m.content} for m in new])
            try:
                if background:
                    cap = int(self.settings.get("agent.max_flushes_per_day"))
                    take_daily_slot(self._sessions_folder(), cap)
                result = self.flush(FlushOptions(text=text, agent=agent_of(raw)))
            except Exception as exc:  # the next hook of the workspace tries it again
                log.record_failure(str(transcript), getattr(exc, "message", str(exc)))
                raise
            log.record(digests, str(transcript))
            return SessionFlush(session_id, len(turns), len(new), result)

    def import_sessions(
        self,
        *,
        agents: tuple[str, ...] | None = None,
        days: int = 30,
        limit: int = 50,
        dry_run: bool = False,
        progress: Callable[[int, int, PastSession], None] | None = None,
    ) -> list[dict[str, Any]]:
        """Save the facts of this project's past sessions (:mod:`memcli.flush.history`:
        those of ``agents`` that ran here or below, changed within ``days``; the ``limit``
        newest), each through :meth:`flush_session`: its turns flushed before, by a hook or
        an earlier import, are never sent again, so an import stopped halfway goes on where it
        stopped. One row per session, newest first; ``dry_run`` reads and sends nothing.
        A ConfigError (exit 2) before anything is read when no LLM can save them."""
        from memcli.agents.registry import names
        from memcli.flush.extract import llm_config  # an import flushes
        from memcli.flush.history import past_sessions

        agents = agents or names()
        if days < 1 or limit < 1:
            raise BadInput("--days and --max-sessions take a number of at least 1")
        found = past_sessions(self.ws.root, agents, days)[:limit]
        for agent in [] if dry_run else sorted({s.agent for s in found}) or list(agents[:1]):
            llm_config(self.settings, agent)  # no LLM for these sessions: say so, read none
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
                    done = self.flush_session(past.session_id, past.path)
                except MemcliError as exc:  # recorded as failed: the next import retries it
                    row["error"] = exc.message
                else:
                    result = done.result
                    row["new_turns"] = done.new_turns
                    row["written"] = len(result.written) if result is not None else 0
            rows.append(row)
        return rows

    def _sessions_folder(self) -> Path:
        return self.ws.state_file("agent", "sessions", "-").parent

    def sessions_due(self, current: str | None = None) -> list[tuple[str, str]]:
        """The sessions a flush is due for, (session id, transcript): those whose last flush
        failed, then this workspace's folder's sessions that an agent kept (each agent's
        :meth:`~memcli.agents.base.Agent.catch_up`: Claude Code's transcripts, Gemini CLI's
        chats), changed within :data:`CATCH_UP_DAYS` days, that memcli never flushed: a
        session that ended without its end hook (Ctrl-C, a crash). ``current``, the session
        asking, is left out; at most :data:`CATCH_UP_MAX`, the newest first."""
        from memcli.agents.registry import AGENTS
        from memcli.flush.sessions import failed_sessions, recorded_sessions

        folder = self._sessions_folder()
        due = [(s, t) for s, t in failed_sessions(folder) if s != current and t]
        known = recorded_sessions(folder)
        horizon = time.time() - CATCH_UP_DAYS * 86400
        found = [
            (mtime, session, path)
            for agent in AGENTS
            for mtime, session, path in agent.catch_up(self.ws.root, horizon)
            if session != current and session not in known
        ]
        found.sort(reverse=True)  # the newest first
        due += [(session, path) for _, session, path in found]
        return due[:CATCH_UP_MAX]


def _briefing_title(kinds: tuple[str, ...]) -> str:
    return (
        "Memory briefing: standing " + "/".join(kinds) + ", then latest"
        if kinds
        else ("Memory briefing: latest entries")
    )


class InstallReport(NamedTuple):
    """What ``memcli agent install|uninstall`` changed (or, with ``dry_run``, would)."""

    agent: str
    scope: str
    action: str  # install or uninstall
    changes: list[Any]  # memcli.agentsetup.change.Change
    dry_run: bool
    plugin: Any = None  # memcli.agents.claude_plugin.PluginInstall: enabled, so no hooks of ours

    @property
    def diff(self) -> str:
        return "".join(c.diff() for c in self.changes if c.changed)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "agent": self.agent,
            "scope": self.scope,
            "action": self.action,
            "dry_run": self.dry_run,
            "files": [c.as_dict() for c in self.changes],
            "plugin": self.plugin.id if self.plugin is not None else None,
        }
        if self.dry_run:
            out["diff"] = self.diff
        return out


class AgentSetup(AgentService):
    """Installing memcli into coding agents (see :mod:`memcli.agents.setup`)."""

    def agent_install(
        self,
        agent: str,
        *,
        scope: str = "project",
        project: Path | None = None,
        dry_run: bool = False,
        remove: bool = False,
    ) -> InstallReport:
        """Write (or with ``remove``, take out) memcli's hooks, MCP server entry and memory
        policy in ``agent``'s settings; ``project`` is the agent's folder (default: the
        workspace). With ``dry_run`` nothing is written."""
        from memcli.agents import claude_plugin as plugin  # agent set-up only
        from memcli.agents.setup import apply, plan

        where = _resolved(project)
        # beside memcli's enabled Claude Code plugin, never a second copy of its hooks
        beside = plugin.enabled(where or self.ws.root, scope) if agent == "claude-code" else None
        rules = plugin.ALLOW if beside is not None or (remove and agent == "claude-code") else ()
        changes = plan(agent, self.ws.root, scope=scope, project=where, remove=remove, plugin=rules)
        if not dry_run:
            apply(changes)
        action = "uninstall" if remove else "install"
        return InstallReport(agent, scope, action, changes, dry_run, beside)

    def agent_status(self, project: Path | None = None) -> dict[str, Any]:
        """Where memcli is installed, whether a session-start briefing can be made here, and
        the latest lines of the hooks' log."""
        from memcli.agents.claude_plugin import rows as plugin_rows
        from memcli.agents.setup import status
        from memcli.agentsetup.hooklog import read_log  # agent set-up only

        try:
            briefing = self.briefing()
            works: dict[str, Any] = {"ok": True, "briefing_entries": briefing.block.included}
        except Exception as exc:  # reported, not raised: status must show the failure
            works = {"ok": False, "error": getattr(exc, "message", str(exc))}
        log = read_log(self.ws.root)
        here = _resolved(project) or self.ws.root
        return {
            "workspace": str(self.ws.root),
            "installed": status(self.ws.root, here) + plugin_rows(here),
            "check": works,
            "flush": self.session_flushing(),
            "errors": [line for line in log if " error: " in line],
            "log": log,
        }

    def session_flushing(self, agent: str | None = None) -> dict[str, Any]:
        """Whether sessions are flushed at compaction and at their end, and by what
        (:func:`memcli.providers.agentcli.session_saving`); else the hooks start no flush,
        and ``why`` says so."""
        from memcli.providers.agentcli import session_saving  # names and PATH look-ups only

        return session_saving(self.settings, agent)


def _resolved(project: Path | None) -> Path | None:
    return Path(project).expanduser().resolve() if project is not None else None
