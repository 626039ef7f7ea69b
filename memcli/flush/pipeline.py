"""Flush: turn a conversation into durable facts through an LLM, safely and idempotently.

The pipeline, in order; nothing is written unless every step before the append succeeded:

1. Parse the input (:mod:`memcli.flush.conversation`) and redact every message
   (:mod:`memcli.notes.redact`) before anything leaves the machine.
2. Hash the redacted conversation. A flush writes its facts under the heading
   ``## HH:MM flush · conversation <hash8>`` (:mod:`memcli.flush.provenance`); when a memory
   file already holds that heading the conversation was flushed before and nothing is sent or
   written.
3. Ask the configured ``[llm] model`` for ``{"facts": [{"text", "type", "tags"}]}`` (JSON mode),
   one request per part when the conversation is longer than ``llm.max_chars``. The
   conversation is untrusted data between random delimiters; the instructions say so
   (:mod:`memcli.flush.prompt`).
4. Validate each reply strictly. A reply that does not validate is asked for once more; a
   second bad reply is a :class:`ProviderError` (exit 4) (:mod:`memcli.flush.extract`).
5. Redact the facts again, drop facts already known and repeats within the batch
   (:mod:`memcli.flush.dedupe`).
6. Append the remaining facts, under the heading, to ``memory/YYYY-MM-DD.md`` (or the
   namespace's daily file) with one locked write, index that file and optionally commit it.
   ``MEMORY.md`` is never a target: the model chooses only text, type and tags.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import memcli.index.factrows as factrows
from memcli.config import Settings, confine_file
from memcli.errors import BadInput, ConfigError, GitError, MemcliError
from memcli.flush.conversation import (
    MIN_PART_CHARS,
    Message,
    conversation_hash,
    parse,
    split_for_context,
)
from memcli.flush.dedupe import KnownFacts, dedupe
from memcli.flush.extract import ask, llm_config
from memcli.flush.facts import Fact, FactOutcome, FlushResult
from memcli.flush.prompt import build_messages, load_prompt, new_nonce
from memcli.flush.provenance import (
    append_facts,
    check_target,
    find_flushed,
    flushed_meanwhile,
    heading_for,
    heading_line,
    summary,
)
from memcli.flush.reconcile import reconcile
from memcli.notes import entries
from memcli.notes.annotate import annotate
from memcli.notes.instructions import detect as instruction_like
from memcli.notes.lifecycle import ID_CHARS, status_line
from memcli.notes.redact import redact
from memcli.notes.workspace import find_git_root
from memcli.providers import remote

if TYPE_CHECKING:
    from memcli.index.indexer import IndexReport
    from memcli.index.store import Store
    from memcli.notes.workspace import Workspace

__all__ = ["FlushHost", "commit_message", "flush"]


class FlushHost(Protocol):
    """What the pipeline needs of the workspace it runs for (the service hands it a
    :class:`memcli.service.flush.FlushWorkspace`): its workspace, settings, index and
    warnings, a sync and an index run, and a commit, the same service functions the CLI
    reaches. Declared here, so that the flush room does not import the service above it."""

    ws: Workspace
    settings: Settings
    warnings: list[str]

    @property
    def store(self) -> Store: ...

    def sync_before_search(self) -> tuple[bool | None, list[str]]: ...

    def index(self, paths: list[str] | None = None) -> IndexReport: ...

    def commit(self, paths: list[Path], message: str) -> str | None: ...


def flush(
    mem: FlushHost,
    text: str | Sequence[Message],
    *,
    namespace: str | None = None,
    dry_run: bool = False,
    prompt_file: str | Path | None = None,
    commit: bool = False,
    now: datetime | None = None,
    agent: str | None = None,
) -> FlushResult:
    """Extract facts from conversation ``text`` and append the new ones (see module doc).
    ``text``: the conversation as text, or its messages already parsed (an agent session's
    new turns: :func:`memcli.flush.conversation.parse` of its transcript).
    ``agent``: the coding agent whose session it is (its CLI may be the LLM: ``llm_config``)."""
    now = now or datetime.now()
    ws = mem.ws
    settings = mem.settings
    target = ws.daily_path(now.date(), namespace)
    check_target(ws, target)
    rel = ws.rel(target)

    redactions: list[str] = []
    clean: list[Message] = []
    for m in parse(text) if isinstance(text, str) else text:
        red = redact(m.content)
        redactions.extend(red.kinds)
        clean.append(Message(m.role, red.text))
    hash8 = conversation_hash(clean)[:8]
    heading = heading_for(now, hash8)
    result = FlushResult(
        hash8, rel, heading, dry_run=dry_run, messages=len(clean), redactions=redactions
    )
    if not clean:
        result.message = "the conversation is empty; nothing to flush"
        return result
    git_warnings = _check_git(ws.root) if commit and not dry_run else []  # before the model
    earlier = find_flushed(ws.memory_dir, hash8, ws.root)
    if earlier:
        result.already_flushed = earlier
        result.message = f"conversation {hash8} was already flushed ({earlier}); nothing to do"
        if commit and not dry_run:  # an earlier flush whose commit failed: commit it now
            result.commit = _commit_earlier(mem, earlier, hash8)
            if result.commit:
                result.message = f"conversation {hash8} was already flushed ({earlier}); committed"
                result.warnings.extend(git_warnings)
        return result

    instructions = load_prompt(prompt_file or _prompt_setting(settings, ws.root), ws.root)
    cfg = llm_config(settings, agent)
    result.model = cfg.model
    max_chars = int(settings.get("llm.max_chars"))
    if max_chars < MIN_PART_CHARS:
        raise ConfigError(f"llm.max_chars must be at least {MIN_PART_CHARS}, got {max_chars}")
    parts = split_for_context(clean, max_chars)
    result.parts = len(parts)
    max_requests = int(settings.get("llm.max_requests"))
    if len(parts) > max_requests:
        raise BadInput(
            f"the conversation needs {len(parts)} LLM requests (parts of llm.max_chars"
            f" {max_chars}), over llm.max_requests ({max_requests}); nothing was sent",
            hint="flush a shorter conversation, or raise llm.max_requests or llm.max_chars",
        )

    def timed(messages: list[dict[str, Any]], cfg: Any, json_mode: bool = True) -> str:
        """One chat call, its seconds recorded in ``result.calls`` (the provider looked up
        per call: tests may swap it)."""
        started = time.monotonic()
        reply = remote.complete(messages, cfg, json_mode=json_mode)
        result.calls.append(time.monotonic() - started)
        return reply

    counter = [0]
    nonce = new_nonce([m.content for m in clean] + [instructions])
    facts: list[Fact] = []
    try:
        for i, part in enumerate(parts, 1):
            reply = ask(
                build_messages(instructions, part, i, len(parts), nonce),
                cfg,
                timed,
                counter,
                max_requests,
            )
            facts.extend(reply.facts)
            result.rejected.extend(reply.rejected)
    finally:
        result.requests = counter[0]
    result.warnings.extend(f"rejected a fact from the model: {why}" for why in result.rejected)
    facts = _redact_facts(facts, redactions)
    if not facts:
        result.message = "the model found nothing worth keeping; nothing written"
        return result

    if not dry_run:
        _stale, warnings = mem.sync_before_search()
        result.warnings.extend(warnings)
    existing = target.read_text(encoding="utf-8", errors="replace") if target.exists() else ""
    line = heading_line(existing, hash8)
    if line:  # another flush of this conversation finished while the model was thinking
        flushed_meanwhile(result, f"{rel}:{line}", facts)
        return result
    known = KnownFacts(
        lambda: mem.store,
        rel,
        entries.parse_entries(existing),
        use_index=_has_index(mem, dry_run),
        root=ws.root,
    )
    keep, skip = dedupe(facts, known)

    def ask_model(messages: list[dict[str, Any]]) -> str:
        result.requests += 1
        return timed(messages, cfg, json_mode=True)

    keep, skip, result.discarded = reconcile(
        keep, skip, known, now.date(), ask_model, instruction_like
    )
    result.warnings.extend(known.warnings)
    result.skipped = skip
    if dry_run:
        result.written = keep
        result.message = summary(len(keep), len(skip), rel, dry_run=True)
        return result
    touched = _corroborate(mem, skip, now)
    written = append_facts(ws, target, now, heading, keep, result) if keep else []
    touched += _supersede(mem, written, now)
    if not keep:
        result.message = f"all {len(skip)} facts are already known or discarded; nothing written"
    files = [target] if written else []
    files += [p for p in dict.fromkeys(touched) if p != target]
    if files:
        try:
            report = mem.index([str(p) for p in files])
            result.warnings.extend(report.warnings)
        except MemcliError as exc:  # the facts are safe in the files; 'memcli index' catches up
            result.warnings.append(f"{rel} was written but not indexed: {exc.message}")
        if commit:
            facts_written = [o.fact for o in written]
            message = (
                commit_message(hash8, facts_written)
                if facts_written
                else f"memory: corroborated known facts (conversation {hash8})\n"
            )
            try:
                result.commit = mem.commit(files, message)
                result.warnings.extend(git_warnings if result.commit else [])
            except GitError as exc:
                raise GitError(
                    f"{len(written)} facts are saved in {rel} but not committed ({exc.message});"
                    " nothing is staged",
                    hint=exc.hint
                    or "fix what git reports, then flush the same conversation with {commit}"
                    " again: it commits them",
                    fields=("commit",),
                ) from None
    return result


def _commit_earlier(mem: FlushHost, earlier: str, hash8: str) -> str | None:
    """Commit the file an earlier flush of this conversation wrote, when HEAD lacks its
    heading (that flush's commit failed); None when it is committed already."""
    from memcli.git.commit import head_text  # git code on --commit only

    path = mem.ws.root / earlier.rsplit(":", 1)[0]
    if heading_line(head_text(mem.ws.root, path) or "", hash8):
        return None
    return mem.commit([path], f"memory: facts flushed from conversation {hash8}")


def _corroborate(mem: FlushHost, skip: list[FactOutcome], now: datetime) -> list[Path]:
    """A ``corroborated`` status line (once a day) under each known fact a new one repeats."""
    return [p for o in skip if o.decision == "duplicate" and o.target
            for p in _mark(mem, o.target, status_line("corroborated", day=now.date(),
                                                      fact=o.target), once=True)]  # fmt: skip


def _supersede(mem: FlushHost, written: list[FactOutcome], now: datetime) -> list[Path]:
    """Mark each known fact that a written one updates as superseded by it."""
    out: list[Path] = []
    for o in written:
        if o.decision == "update" and o.target:
            new_id = entries.fact_key(o.fact.text)[:ID_CHARS]
            out += _mark(mem, o.target, status_line("superseded", f"by {new_id}", now.date()))
    return out


def _mark(mem: FlushHost, fact_id: str, mark: str, *, once: bool = False) -> list[Path]:
    """Write ``mark`` under the fact ``fact_id``; the file, when written (else a warning)."""
    found = factrows.facts_by_prefix(mem.store.conn, fact_id)
    if not found:
        return []
    path = mem.ws.root / found[0][1]
    try:
        marked = annotate(
            path,
            fact_id,
            [mark],
            once=once,
            writers=mem.ws.writers_lock,
            within=mem.ws.memory_bounds,
        )
        return [path] if marked else []
    except (BadInput, OSError) as exc:
        mem.warnings.append(f"could not mark {fact_id}: {getattr(exc, 'message', exc)}")
        return []


def _has_index(mem: FlushHost, dry_run: bool) -> bool:
    """Use the index for duplicate checks; a dry run only reads one that already exists."""
    return not dry_run or mem.ws.index_path.exists()


def _redact_facts(facts: list[Fact], redactions: list[str]) -> list[Fact]:
    out = []
    for fact in facts:
        red = redact(fact.text)
        redactions.extend(red.kinds)
        out.append(Fact(red.text, fact.type, fact.tags) if red.kinds else fact)
    return out


# --- git ------------------------------------------------------------------------------------


def _check_git(root: Path) -> list[str]:
    """Refuse --commit outside git or mid-merge (before anything is sent or written); the
    warnings a commit would carry (a detached HEAD)."""
    if find_git_root(root) is None:
        raise GitError(
            f"{{commit}}: {root} is not in a git repository",
            hint="run 'git init' there, or flush without {commit}",
            fields=("commit",),
        )
    from memcli.git.commit import check_committable  # git code on --commit only

    return check_committable(root)


def commit_message(hash8: str, facts: list[Fact]) -> str:
    """Subject naming the first fact and the count; the body lists every fact."""
    first = facts[0].text
    if len(first) > 60:
        first = first[:59].rstrip() + "…"
    more = f" (+{len(facts) - 1} more)" if len(facts) > 1 else ""
    body = "\n".join(f"- {'[' + f.type + '] ' if f.type else ''}{f.text}" for f in facts)
    return f"memory: {first}{more}\n\nFlushed from conversation {hash8}:\n\n{body}\n"


def _prompt_setting(settings: Settings, root: Path) -> str | Path | None:
    """``llm.prompt_file``; from the workspace memcli.toml (trusted: see memcli trust), it
    must name a file inside the workspace, links resolved (exit 2 otherwise)."""
    value = str(settings.get("llm.prompt_file") or "")
    if value and settings.origin("llm.prompt_file") == "workspace":
        return confine_file("llm.prompt_file", value, root)
    return value or None
