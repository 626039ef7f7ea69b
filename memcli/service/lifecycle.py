"""A fact's life: supersede, forget, confirm, and the review of facts that need a decision.

Every change is a status line written under the entry in its Markdown file
(:mod:`memcli.notes.lifecycle`), with the file locked as appends lock it; the file is then
indexed, and with ``commit`` committed with a message that tells the story.
"""

# No `from __future__ import annotations` here: typing compiles each string annotation of a
# NamedTuple at import (typing.ForwardRef), and every Memory imports this module.
import functools
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path
from typing import Any, NamedTuple

import memcli.index.factrows as factrows
import memcli.service.git as gitops
import memcli.service.indexing as indexing
import memcli.service.notes as notes
from memcli.errors import BadInput
from memcli.locks import ProcessLock
from memcli.notes.entryparse import entry_id
from memcli.notes.lifecycle import ID_CHARS, Status, status_line, status_of
from memcli.notes.workspace import MEMORY_DIR
from memcli.service.core import MemoryCore

__all__ = [
    "FactRef",
    "LifecycleResult",
    "confirm",
    "find_fact",
    "finish_left_pending",
    "forget",
    "review",
    "supersede",
]


@functools.cache
def _id_pattern() -> re.Pattern[str]:
    """Compiled on first use: not on every start-up."""
    return re.compile(r"^[0-9a-f]{4,40}$")


_REF_HINT = "give a fact id (a search result's 'ids') or PATH:LINE"


class FactRef(NamedTuple):
    """One fact as it is now in its file."""

    id: str
    path: str  # workspace-relative
    line: int
    end_line: int  # its last line, status lines included
    text: str
    type: str | None
    tags: tuple[str, ...]
    status: Status

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": self.path,
            "line": self.line,
            "text": self.text,
            "type": self.type,
            "tags": list(self.tags),
            "state": self.status.state,
            "expires": self.status.expires,
            "confirmed": self.status.confirmed,
            "corroborated": self.status.corroborated,
        }


class LifecycleResult(NamedTuple):
    """What a lifecycle command did (or, dry, would do)."""

    action: str  # superseded, retracted, purged, confirmed
    fact: FactRef
    lines: list[str]  # the status lines written under it
    successor: dict[str, Any] | None = None  # the new fact of a supersede (an add's JSON)
    dry_run: bool = False
    changed: bool = True  # False: it already was so (nothing written)
    commit: str | None = None
    warnings: tuple[str, ...] = ()
    reason: str | None = None  # a retraction's reason as written, secrets redacted

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "action": self.action,
            "fact": self.fact.as_dict(),
            "status_lines": [line.strip() for line in self.lines],
            "changed": self.changed,
            "dry_run": self.dry_run,
        }
        if self.successor is not None:
            out["successor"] = self.successor
        if self.commit is not None:
            out["commit"] = self.commit
        if self.reason is not None:
            out["reason"] = self.reason
        return out


#: The lock one change of a fact's state holds, and the folder of changes under way.
LIFECYCLE_LOCK = "lifecycle.lock"
PENDING_DIR = "pending"


class PendingSupersede(NamedTuple):
    """A supersede under way: what its two writes need, recorded before them."""

    old_id: str
    old_path: str
    text: str
    type: str | None
    tags: tuple[str, ...]
    when: str  # ISO time of the change


def find_fact(core: MemoryCore, ref: str) -> FactRef:
    """The fact ``ref`` names: its id (at least 4 hex digits of it) or ``PATH:LINE``."""
    ref = ref.strip()
    if _id_pattern().match(ref):
        indexing.sync_before_search(core)
        found = factrows.facts_by_prefix(core.store.conn, ref)
        keys = {h for h, _, _ in found}
        if not keys:
            raise BadInput(f"no fact has the id {ref!r}", hint=_REF_HINT)
        if len(keys) > 1:
            ids = ", ".join(sorted(k[:ID_CHARS] for k in keys)[:5])
            raise BadInput(f"the id {ref!r} is ambiguous ({ids})", hint="give more digits")
        key, rel, line = found[0]
        return _fact_at(core, rel, line, key)
    path, sep, line_text = ref.rpartition(":")
    if not sep or not line_text.isdigit() or not path:
        raise BadInput(f"not a fact id or PATH:LINE: {ref!r}", hint=_REF_HINT)
    target = core.ws.resolve_user_path(path)
    return _fact_at(core, core.ws.rel(target), int(line_text), None)


def _fact_at(core: MemoryCore, rel: str, line: int, key: str | None) -> FactRef:
    from memcli.notes.entries import fact_key, parse_entries  # lifecycle commands only

    path = _memory_file(core, rel)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise BadInput(f"cannot read {rel}: {exc.strerror}") from None
    for e in parse_entries(text):
        k = fact_key(e.text)
        if (key is not None and k == key) or (key is None and e.line <= line <= e.end_line):
            status = status_of(e.status)
            return FactRef(k[:ID_CHARS], rel, e.line, e.end_line, e.text, e.type, e.tags, status)
    where = f"{rel}:{line}"
    raise BadInput(f"no fact at {where}" if key is None else f"the fact moved from {where}")


def _memory_file(core: MemoryCore, rel: str) -> Path:
    """The file ``rel`` when lifecycle commands may change it: links followed, it lies in
    the workspace's own ``memory/`` folder, which is a folder, not a link (a repository
    can commit ``memory`` as a link to the workspace's top, to reach its ``CLAUDE.md``).
    BadInput naming the rule otherwise, before anything is read or written."""
    memory = core.ws.root.resolve() / MEMORY_DIR
    path = core.ws.root / rel
    try:
        inside = memory in path.resolve().parents
    except (OSError, RuntimeError):  # a link loop
        inside = False
    if memory.is_symlink() or not memory.is_dir() or not inside:
        linked = f" ({MEMORY_DIR}/ itself is a link)" if memory.is_symlink() else ""
        raise BadInput(
            f"{rel} is not a memory file: lifecycle commands change only files under"
            f" {MEMORY_DIR}/{linked}",
            hint=f"give the id or PATH:LINE of a fact in {MEMORY_DIR}/",
        )
    return path


# -- changes ---------------------------------------------------------------------------


def supersede(
    core: MemoryCore,
    ref: str,
    text: str,
    *,
    type: str | None = None,
    tags: tuple[str, ...] | list[str] | None = None,
    dry_run: bool = False,
    commit: bool = False,
    now: datetime | None = None,
) -> LifecycleResult:
    """Write ``text`` as a new fact (the old one's type and tags unless given) that
    supersedes ``ref``, and mark ``ref`` superseded by it."""
    from memcli.notes.entryparse import fact_key

    now = now or datetime.now()
    with _changing(core):
        old = find_fact(core, ref)
        if old.status.state in ("superseded", "retracted"):
            after = old.status.successor or "?"
            raise BadInput(
                f"fact {old.id} was already superseded (by {after})"
                if old.status.state == "superseded"
                else f"fact {old.id} is retracted ({old.status.reason or 'forgotten'})",
                hint="supersede the newer fact instead"
                if old.status.state == "superseded"
                else "add the new fact instead",
            )
        new_id = fact_key(text.strip())[:ID_CHARS]
        if new_id == old.id:
            raise BadInput("the new text is the same fact", hint="give the changed fact")
        mark = status_line("superseded", f"by {new_id}", now.date())
        if dry_run:
            return LifecycleResult("superseded", old, [mark], {"id": new_id}, dry_run=True)
        if commit:
            gitops.require_repo(core)
        change = PendingSupersede(
            old.id,
            old.path,
            text,
            type if type is not None else old.type,
            tuple(tags) if tags is not None else old.tags,
            now.isoformat(),
        )
        with _pending(core, change):  # both writes, or the next command finishes them
            added = _write_supersede(core, change, old)
    sha = _commit_change(
        core, [old.path, added.path], f"memcli: superseded {old.id} by {new_id}", commit
    )
    successor = {**added.as_dict(), "id": new_id}
    return LifecycleResult("superseded", old, [mark], successor, commit=sha)


def _write_supersede(core: MemoryCore, change: PendingSupersede, old: FactRef) -> Any:
    """The successor (skipped when there already), then the mark under the old fact
    (not written twice), under the workspace's writers lock held shared for both: a
    sync, which holds it exclusive to commit and to integrate, sees both or neither."""
    from memcli.locks import shared

    now = datetime.fromisoformat(change.when)
    with shared(core.ws.writers_lock):
        added = notes.add(
            core,
            change.text,
            type=change.type,
            tags=change.tags,
            now=now,
            status=(status_line("supersedes", old.id),),
        )
        new_id = entry_id(change.text.strip())
        mark = status_line("superseded", f"by {new_id}", now.date())
        _annotate(core, old, mark, once=True)
    return added


# -- one change at a time, whole ---------------------------------------------------------


@contextmanager
def _changing(core: MemoryCore) -> Iterator[None]:
    """Hold the workspace's lifecycle lock (one change of a fact's state at a time: of two
    changes of one fact, the second sees the first), having finished any change a killed
    process left half done."""
    lock = ProcessLock(core.ws.state_file(LIFECYCLE_LOCK), "lifecycle changes")
    with lock.acquire(core._lock_timeout()):
        _finish_pending(core)
        yield


@contextmanager
def _pending(core: MemoryCore, change: PendingSupersede) -> Iterator[None]:
    """Record ``change`` before its writes and remove the record after them: a process
    killed in between leaves the record, and the next lifecycle command or review
    finishes the change (:func:`_finish_pending`)."""
    from memcli.statedir import write_text

    path = core.ws.state_file(PENDING_DIR, f"supersede-{change.old_id}.json")
    write_text(path, json.dumps(change._asdict()))
    yield
    path.unlink(missing_ok=True)


def _finish_pending(core: MemoryCore) -> list[str]:
    """Finish the changes a killed process left half done; the fact ids finished."""
    from memcli.statedir import read_text

    folder = core.ws.state_dir / PENDING_DIR
    try:
        names = sorted(p for p in folder.iterdir() if p.name.startswith("supersede-"))
    except OSError:
        return []
    done = []
    for path in names:
        try:
            data = json.loads(read_text(path, 1 << 20))
            change = PendingSupersede(**{**data, "tags": tuple(data.get("tags") or ())})
            old = find_fact(core, change.old_id)
        except (OSError, ValueError, TypeError, BadInput) as exc:  # unreadable, or gone
            core.warnings.append(
                f"a supersede left half done cannot be finished, dropped ({path.name}:"
                f" {getattr(exc, 'message', exc)})"
            )
            path.unlink(missing_ok=True)
            continue
        if old.status.state != "retracted":
            _write_supersede(core, change, old)
        path.unlink(missing_ok=True)
        done.append(change.old_id)
    return done


def forget(
    core: MemoryCore,
    ref: str,
    *,
    reason: str,
    purge: bool = False,
    dry_run: bool = False,
    commit: bool = False,
    now: datetime | None = None,
) -> LifecycleResult:
    """Retract ``ref`` (it no longer shows in searches) with ``reason``; ``purge`` also
    replaces its text in the working tree (git history still holds it)."""
    from memcli.notes.redact import redact  # a reason may quote a secret

    reason = " ".join(redact(reason).text.split())
    if not reason:
        raise BadInput(
            "forget needs a reason", hint="{reason}: why it is wrong", fields=("reason",)
        )
    now = now or datetime.now()
    with _changing(core):
        return _forget(core, ref, reason, purge, dry_run, commit, now)


def _forget(
    core: MemoryCore, ref: str, reason: str, purge: bool, dry_run: bool, commit: bool, now: datetime
) -> LifecycleResult:
    fact = find_fact(core, ref)
    purged = f" (purged {fact.id})" if purge else ""
    mark = status_line("retracted", f"{purged}: {reason}", now.date(), None if purge else fact.id)
    action = "purged" if purge else "retracted"
    if fact.status.state == "retracted" and not purge:
        return LifecycleResult(action, fact, [], changed=False, dry_run=dry_run, reason=reason)
    if dry_run:
        return LifecycleResult(action, fact, [mark], dry_run=True, reason=reason)
    if commit:
        gitops.require_repo(core)
    _annotate(core, fact, mark, purge=purge)
    message = f"memcli: forgot {fact.id} ({reason})"
    sha = _commit_change(core, [fact.path], message, commit)
    warnings = (
        (f"{fact.path}: the text is gone from the working tree; git history still holds it",)
        if purge
        else ()
    )
    return LifecycleResult(action, fact, [mark], commit=sha, warnings=warnings, reason=reason)


def confirm(
    core: MemoryCore,
    ref: str,
    *,
    by: str | None = None,
    dry_run: bool = False,
    commit: bool = False,
    now: datetime | None = None,
) -> LifecycleResult:
    """A person vouches for ``ref``: it ranks higher, and a review of it is closed."""
    now = now or datetime.now()
    with _changing(core):
        return _confirm(core, ref, by, dry_run, commit, now)


def _confirm(
    core: MemoryCore, ref: str, by: str | None, dry_run: bool, commit: bool, now: datetime
) -> LifecycleResult:
    fact = find_fact(core, ref)
    if fact.status.state in ("superseded", "retracted"):
        raise BadInput(
            f"fact {fact.id} is {fact.status.state}: it cannot be confirmed",
            hint="add it again, or confirm the fact that replaced it",
        )
    who = " ".join((by or "").split())
    mark = status_line("confirmed", f"by {who}" if who else "", now.date(), fact.id)
    today = now.date().isoformat()
    fresh = fact.status.state != "review"
    if fresh and fact.status.confirmed and _confirmed_on(core.ws.root / fact.path, fact, today):
        return LifecycleResult("confirmed", fact, [], changed=False, dry_run=dry_run)
    if dry_run:
        return LifecycleResult("confirmed", fact, [mark], dry_run=True)
    if commit:
        gitops.require_repo(core)
    _annotate(core, fact, mark)
    sha = _commit_change(core, [fact.path], f"memcli: confirmed {fact.id}", commit)
    return LifecycleResult("confirmed", fact, [mark], commit=sha)


def finish_left_pending(core: MemoryCore) -> None:
    """Finish a supersede that a killed process left half done (see :func:`_pending`):
    :meth:`memcli.memory.Memory.sync` runs it first, so that a sync never commits and
    pushes half of one."""
    if _left_pending(core):
        with _changing(core):
            pass


def _left_pending(core: MemoryCore) -> bool:
    """Whether a record of a supersede left half done is there (see :func:`_pending`)."""
    try:
        folder = (core.ws.state_dir / PENDING_DIR).iterdir()
        return any(p.name.startswith("supersede-") for p in folder)
    except OSError:
        return False


def review(core: MemoryCore, today: date | None = None) -> list[dict[str, Any]]:
    """Facts that need a decision: under review (a conflict, an instruction-like fact),
    and expired ones, each with the commands that settle it (:mod:`memcli.service.review`)."""
    from memcli.service.review import needing_review

    finish_left_pending(core)  # a change a killed process left
    indexing.sync_before_search(core)
    return needing_review(core, today or date.today())


# -- writing ---------------------------------------------------------------------------


def _annotate(
    core: MemoryCore, fact: FactRef, mark: str, *, purge: bool = False, once: bool = False
) -> None:
    """Write ``mark`` under ``fact`` (see :func:`memcli.notes.annotate.annotate`), then
    index the file."""
    from memcli.notes.annotate import annotate

    path = core.ws.root / fact.path
    annotate(
        path,
        fact.id,
        [mark],
        purge=purge,
        once=once,
        writers=core.ws.writers_lock,
        within=core.ws.memory_bounds,
    )
    try:
        indexing.index(core, [str(path)])
    except Exception as exc:  # written; the index catches up on its next sync
        core.warnings.append(f"{fact.path} not indexed yet: {getattr(exc, 'message', exc)}")
        return
    if purge:  # no trace of the old text left in index.db either
        try:
            wiped = indexing.scrub(core)
        except Exception as exc:
            wiped, why = False, f"{getattr(exc, 'message', exc)}"
        else:
            why = "another process (an engine, a watcher) is reading it"
        if not wiped:
            core.warnings.append(
                f"{core.ws.index_path} may still hold the purged text: {why}; it leaves"
                " the file at the first write after that process stops"
            )


def _commit_change(core: MemoryCore, paths: list[str], message: str, commit: bool) -> str | None:
    if not commit:
        return None
    files = [core.ws.root / p for p in dict.fromkeys(paths)]
    return gitops.commit(core, files, message)


def _confirmed_on(path: Path, fact: FactRef, today: str) -> bool:
    """Whether ``fact`` already has a confirmation dated ``today`` (confirm twice: once)."""
    from memcli.notes.entries import fact_key, parse_entries

    for e in parse_entries(path.read_text(encoding="utf-8", errors="replace")):
        if fact_key(e.text)[:ID_CHARS] == fact.id:
            return any(s.strip().startswith(f"- confirmed {today}") for s in e.status)
    return False
