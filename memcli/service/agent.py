"""What a coding agent's hooks ask of memory, a briefing and recall for a prompt (the session
flush is :mod:`memcli.service.session_flush`), and installing memcli into coding agents
(:mod:`memcli.agents.setup`).

The briefing and the recalled memories are context blocks (:mod:`memcli.search.context`):
quoted data with citations, framed so that a later flush strips them
(:func:`memcli.flush.transcripts.strip_recalled`) instead of saving them again.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import memcli.index.factrows as factrows
import memcli.service.indexing as indexing
import memcli.service.searching as searching
from memcli.search.options import SearchRequest
from memcli.service.core import MemoryCore

if TYPE_CHECKING:
    from memcli.agents.claude_plugin import PluginInstall
    from memcli.agentsetup.change import Change
    from memcli.providers.models import RecallRule
    from memcli.search.context import ContextBlock, Quote
    from memcli.service.search_answers import Context

__all__ = [
    "Briefing",
    "agent_install",
    "agent_status",
    "briefing",
    "forget_given",
    "recall",
    "recall_min_similarity",
    "recall_rule",
    "recall_search",
    "session_flushing",
]

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


def briefing(core: MemoryCore, max_tokens: int | None = None) -> Briefing:
    """The standing entries (types ``agent.briefing_types``, evergreen first, then newest)
    and the ``agent.briefing_latest`` newest other entries, as one context block within
    ``max_tokens`` (default ``agent.briefing_tokens``)."""
    from memcli.search.context import render  # a briefing builds a block

    budget = int(max_tokens or core.settings.get("agent.briefing_tokens"))
    kinds = tuple(t.lower() for t in core.settings.get("agent.briefing_types"))
    latest_n = int(core.settings.get("agent.briefing_latest"))

    def collect() -> tuple[list[Quote], list[Quote]]:
        indexing.sync_before_search(core)
        standing = _recent_entries(core, kinds, 50) if kinds else []
        seen = {(q.path, q.start_line) for q in standing}
        latest = [
            q
            for q in _recent_entries(core, (), latest_n + len(seen))
            if (q.path, q.start_line) not in seen
        ][:latest_n]
        return standing, latest

    standing, latest = core._with_repair(collect)
    block = render("", [*standing, *latest], budget, title=_briefing_title(kinds))
    return Briefing(block, len(standing), len(latest), budget)


def _recent_entries(core: MemoryCore, kinds: tuple[str, ...], limit: int) -> list[Quote]:
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
    for chunk in factrows.recent_chunks(core.store.conn, limit * _CHUNKS_PER_ENTRY, kinds, today):
        lines = chunk.text.split("\n")
        found = [
            (kind, line, end)
            for _, kind, _, _, line, end, _ in entry_fields(chunk.text)
            if not kinds or (kind or "").lower() in kinds
        ]
        for _, line, end in reversed(found):  # newest (last written) first
            raw = "\n".join(lines[line - 1 : end]).rstrip()
            start = chunk.start_line + line - 1
            mark = stale_mark(core.store.conn, chunk.path, start, start)
            out.append(Quote(chunk.path, start, start + (end - line), raw, mark))
            if len(out) >= limit:
                return out
    return out


def recall(
    core: MemoryCore,
    prompt: str,
    max_tokens: int | None = None,
    session: str | None = None,
    *,
    record: bool = True,
) -> Context | None:
    """The memories that match ``prompt`` well (score at least ``agent.recall_min_score``,
    at most ``agent.recall_limit``) as a :class:`~memcli.service.search_answers.Context`, or
    None when nothing does, the prompt is too short to search or is a slash command.
    The block quotes the entries that matched, not their neighbours. ``session``: the
    agent's session, which is never given the same entry twice (:mod:`memcli.flush.given`:
    an entry whose text changed since is new). ``record``: the entries the block quotes
    (``block.quoted``) are recorded as given to ``session``; False leaves that to the caller
    once the block is delivered (the engine: the hook that asked may have stopped waiting)."""
    from memcli.flush.transcripts import strip_recalled  # recall only

    text = " ".join(strip_recalled(prompt).split())
    budget = int(core.settings.get("agent.recall_tokens") if max_tokens is None else max_tokens)
    if budget <= 0 or len(text) < MIN_RECALL_CHARS or text.startswith("/"):
        return None
    limit = int(core.settings.get("agent.recall_limit"))
    opts = searching.search_options(core, SearchRequest(limit=limit, min_score=0.0))
    from memcli.search.context import render  # recall builds a block
    from memcli.service.search_answers import Context  # (with the block)

    result = recall_search(core, text[:RECALL_QUERY_CHARS], opts)
    result.hits = _recalled(core, result)[:limit]
    if session and result.hits:
        from memcli.flush.given import Given, given_folder  # a session's recall only

        given: Given | None = Given(given_folder(core.ws.root), session)
    else:
        given = None
    skip = given.has if given is not None else None
    block = render(result.query, result.hits, budget, matches_only=True, skip=skip)
    if record and given is not None and block.included:
        given.add(block.quoted)
    return Context(result, block, budget) if block.included else None


def recall_search(core: MemoryCore, query: str, opts: Any) -> Any:
    """Recall's search for ``query``. When it uses vectors, its keyword query also holds
    the words related to the prompt's (:mod:`memcli.search.related`), and its vector is the
    prompt's own; a keyword search scores the prompt alone (a keyword score falls with every
    word the query holds that an entry does not). The result's query is the prompt."""
    wider = None
    if core.embedder is not None:
        import memcli.search.related as related  # recall with vectors only

        wider = related.expanded(query)
    result = searching.search(core, query, opts, wider=wider)
    result.query = query
    return result


def forget_given(core: MemoryCore, session: str) -> None:
    """The session starts again after a compaction or a clear: what recall gave it is gone
    from its context, and may be given again."""
    from memcli.flush.given import Given, given_folder  # session records only

    Given(given_folder(core.ws.root), session).clear()


def _recalled(core: MemoryCore, result: Any) -> list[Any]:
    """The hits recall keeps. In a search with vectors: the entries of the hits' chunks, each
    kept when its own similarity to the prompt reaches :func:`recall_min_similarity` and the
    prompt is nearer to it than to the everyday requests nearest it
    (:mod:`memcli.search.background`), by a margin that says how much else points to it
    (:func:`recall_rule`): it is the entry of its chunk nearest the prompt; the best keyword
    result quotes it (words and vectors agree); it names a thing the prompt names in other
    words (:mod:`memcli.search.related`). A fused score says less: it ranks, it does not tell
    a prompt about memory from one that is not. Otherwise: hits scoring at least
    ``agent.recall_min_score``, with their matching passage."""
    embedder = core.embedder
    if result.mode != "keyword" and embedder is not None and result.hits:
        from functools import partial

        import memcli.search.background as background  # recall with vectors only
        from memcli.errors import ProviderError
        from memcli.search.nearest import chunk_entries, matched_entries

        embed = partial(embedder.embed, quick=True)
        rule = recall_rule(core)
        try:
            vector = embedder.embed_query(result.query)
            found = chunk_entries(result.hits, vector, embed)
            best = _best_keyword_hit(core, result.query, rule.agreed_score)
            agreed = matched_entries(best, vector, embed) if best is not None else []
            sims = [sim for _, sim, _ in found] + [sim for _, sim in agreed]
            if not any(sim >= rule.floor for sim in sims):
                return []
            usual = background.similarity(vector, embed, embedder.fingerprint.key)
        except ProviderError:  # the model failed since the search: scores alone
            pass
        else:
            return _kept_entries(result.query, rule, usual, found, agreed)
    min_score = float(core.settings.get("agent.recall_min_score"))
    return [hit for hit in result.hits if hit.score >= min_score]


def _kept_entries(
    prompt: str,
    rule: RecallRule,
    usual: float,
    found: list[tuple[Any, float, bool]],
    agreed: list[tuple[Any, float]],
) -> list[Any]:
    """The entries of :func:`_recalled` that pass, the nearest the prompt first: ``found``,
    each entry of the hits' chunks with its similarity and whether it is its chunk's
    nearest; ``agreed``, the best keyword result's; ``usual``, the prompt's similarity to its
    nearest everyday requests."""
    import memcli.search.related as related  # recall with vectors only

    places: dict[tuple[str, int], tuple[Any, float, list[float]]] = {}
    for hit, sim, nearest in found:
        places[(hit.path, hit.start_line)] = (hit, sim, [rule.margin] if nearest else [])
    for hit, sim in agreed:
        places.setdefault((hit.path, hit.start_line), (hit, sim, []))[2].append(rule.agreed_margin)
    names = related.named(prompt)
    kept = []
    for hit, sim, margins in places.values():
        if names & related.entry_named(hit.snippet):
            margins.append(rule.related_margin)
        if margins and sim >= max(rule.floor, usual + min(margins)):
            kept.append((sim, hit))
    return [hit for _, hit in sorted(kept, key=lambda k: -k[0])]


def _best_keyword_hit(core: MemoryCore, query: str, score: float) -> Any:
    """The best result of a keyword search for ``query``, when it scores at least ``score``;
    else None. Recall's own search synced the index just before: no second check."""
    request = SearchRequest(limit=1, min_score=score, strategy="keyword")
    opts = searching.search_options(core, request)
    hits = searching.search(core, query, opts, sync=False).hits
    return hits[0] if hits else None


def recall_min_similarity(core: MemoryCore) -> float:
    """The similarity an entry needs at least to be recalled: ``agent.recall_min_similarity``,
    or (0, the default) the floor of :func:`recall_rule`."""
    return recall_rule(core).floor


def recall_rule(core: MemoryCore) -> RecallRule:
    """When recall gives an entry: the rule measured for the embedding model
    (:data:`memcli.providers.models.MODELS`), or
    :data:`~memcli.providers.models.RECALL_RULE` for a model not measured; its floor
    ``agent.recall_min_similarity`` when that is set."""
    from memcli.providers.models import RECALL_RULE, find

    known = find(str(core.settings.get("embedding.model") or ""))
    rule = known.recall if known is not None else RECALL_RULE
    value = float(core.settings.get("agent.recall_min_similarity"))
    return rule._replace(floor=value) if value > 0 else rule


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
    changes: list[Change]
    dry_run: bool
    plugin: PluginInstall | None = None  # memcli's plugin enabled, so no hooks of ours

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


def agent_install(
    core: MemoryCore,
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
    beside = plugin.enabled(where or core.ws.root, scope) if agent == "claude-code" else None
    rules = plugin.ALLOW if beside is not None or (remove and agent == "claude-code") else ()
    changes = plan(agent, core.ws.root, scope=scope, project=where, remove=remove, plugin=rules)
    if not dry_run:
        apply(changes)
    action = "uninstall" if remove else "install"
    return InstallReport(agent, scope, action, changes, dry_run, beside)


def agent_status(core: MemoryCore, project: Path | None = None) -> dict[str, Any]:
    """Where memcli is installed, whether a session-start briefing can be made here, and
    the latest lines of the hooks' log."""
    from memcli.agents.claude_plugin import rows as plugin_rows
    from memcli.agents.setup import status
    from memcli.agentsetup.hooklog import read_log  # agent set-up only

    try:
        brief = briefing(core)
        works: dict[str, Any] = {"ok": True, "briefing_entries": brief.block.included}
    except Exception as exc:  # reported, not raised: status must show the failure
        works = {"ok": False, "error": getattr(exc, "message", str(exc))}
    log = read_log(core.ws.root)
    here = _resolved(project) or core.ws.root
    return {
        "workspace": str(core.ws.root),
        "installed": status(core.ws.root, here) + plugin_rows(here),
        "check": works,
        "flush": session_flushing(core),
        "errors": [line for line in log if " error: " in line],
        "log": log,
    }


def session_flushing(core: MemoryCore, agent: str | None = None) -> dict[str, Any]:
    """Whether sessions are flushed at compaction and at their end, and by what
    (:func:`memcli.providers.agentcli.session_saving`); else the hooks start no flush,
    and ``why`` says so."""
    from memcli.providers.agentcli import session_saving  # names and PATH look-ups only

    return session_saving(core.settings, agent)


def _resolved(project: Path | None) -> Path | None:
    return Path(project).expanduser().resolve() if project is not None else None
