"""Sharing memory through the upstream remote: commit pending memory, fetch, integrate, push."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memcli.errors import BadInput, GitError
from memcli.git.commit import commit_paths, facts_message
from memcli.git.diff import DiffResult, diff_states
from memcli.git.repo import Repo, hint_for, last_line, operation_in_progress, run_git
from memcli.git.scope import WORKTREE, Scope
from memcli.locks import exclusive
from memcli.notes.workspace import Workspace

SYNC_STRATEGIES = ("rebase", "merge")
#: Seconds sync waits for writes to memory files under way (each a single short append or
#: edit) before it integrates.
ROUND_LOCK_TIMEOUT = 30.0
#: The first pause between two fetch-integrate-push rounds, doubled each time up to the cap
#: (each pause jittered so clones that collided do not collide again in step).
FIRST_PAUSE = 0.05
MAX_PAUSE = 2.0
#: What git says when another clone pushed or held a ref lock meanwhile: worth another round.
_CONTENTION = (
    "fetch first",
    "non-fast-forward",
    "cannot lock ref",
    "failed to update ref",
    "failed to lock",
    "unable to create",
    "incorrect old value",
    "stale info",
    "but expected",
    "unable to update local ref",
)


class SyncConflict(GitError):
    """Integrating the upstream needs a human: the same lines changed on both sides."""


@dataclass
class SyncResult:
    """What a sync did: the commit of pending memory, commits pulled and pushed, files changed."""

    branch: str
    upstream: str
    strategy: str
    committed: str | None = None  # sha of the commit of pending memory files
    before: str | None = None
    after: str | None = None
    pulled: int = 0  # upstream commits brought in
    pushed: int = 0  # local commits sent
    changed: list[str] = field(default_factory=list)  # memory files the pull changed
    attempts: int = 1  # fetch-integrate-push rounds (more than one: other clones pushed too)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "branch": self.branch,
            "upstream": self.upstream,
            "strategy": self.strategy,
            "committed": self.committed,
            "before": self.before,
            "after": self.after,
            "pulled": self.pulled,
            "pushed": self.pushed,
            "changed": self.changed,
            "attempts": self.attempts,
        }


def sync(
    root: Path,
    *,
    strategy: str = "rebase",
    commit: bool = True,
    push: bool = True,
    memory_dir: str = "memory",
    time_limit: float = 60.0,
) -> SyncResult:
    """Fetch, integrate the upstream (rebase or merge), push; commit pending memory first.

    Daily files merge with git's union driver (see ``.gitattributes``), so two
    clones appending to the same day keep both. A real conflict aborts the
    rebase/merge (the repository is as before the pull) and raises
    :class:`SyncConflict` naming the files. When another clone pushes in between (the push
    is rejected, a ref is locked), the fetch-integrate-push round runs again after a jittered
    pause that doubles each time, for at most ``time_limit`` seconds; then GitError with
    git's own words. The caller re-indexes ``changed``.
    """
    if strategy not in SYNC_STRATEGIES:
        raise BadInput(f"unknown sync strategy {strategy!r}", hint="use rebase or merge")
    scope = Scope(root, memory_dir)
    repo = scope.repo
    busy = operation_in_progress(repo)
    if busy:
        raise GitError(
            f"a {busy} is in progress in {scope.top}",
            hint=f"finish it or run 'git {busy} --abort' (git status explains), then sync again",
        )
    status, out, _ = run_git(repo, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    if status != 0:
        raise GitError("HEAD is detached: sync needs a branch", hint="git switch <branch>")
    branch = out.strip()
    remote, merge_ref, upstream = _upstream(repo, branch)
    result = SyncResult(branch, upstream, strategy)
    writers = Workspace(Path(root).resolve()).writers_lock
    # the pending memory is committed between two writes, never inside one: a supersede holds
    # the writers lock shared over its two writes, so a commit has both or neither
    with exclusive(writers, timeout=ROUND_LOCK_TIMEOUT):
        dirty = _dirty_memory(scope)
        if dirty:
            if not commit:
                raise GitError(
                    f"{len(dirty)} memory file(s) have uncommitted changes",
                    hint="commit them, or let sync commit them (its default)",
                )
            message = sync_message(diff_states(scope, scope.head(), WORKTREE))
            committed = commit_paths(root, [scope.top / p for p in dirty], message)
            result.committed = committed or None
    result.before = scope.head()
    started = time.monotonic()
    deadline = started + max(0.0, time_limit)
    pause = FIRST_PAUSE
    while True:
        error = _round(scope, result, remote, merge_ref, upstream, push=push, writers=writers)
        if error is None:
            break
        waited = time.monotonic() - started
        if not _contention(error) or time.monotonic() + pause > deadline:
            raise GitError(
                f"{_what_failed(error, remote)} after {_attempts(result.attempts)} in"
                f" {waited:.1f}s: {git_cause(error)}",
                hint=hint_for(error)
                or (
                    "other clones kept pushing; run memcli sync again (git.sync_timeout sets"
                    " how long sync retries)"
                    if _contention(error)
                    else "run 'git status' and 'git push' to see why"
                ),
            )
        time.sleep(random.uniform(0.5, 1.5) * pause)  # noqa: S311 - jitter: clones do not retry in step
        pause = min(pause * 2, MAX_PAUSE)
        result.attempts += 1
    result.seconds = time.monotonic() - started
    result.after = scope.head()
    if result.before != result.after:
        result.changed = [
            scope.ws_rel(c.path) for c in scope.changes(result.before, result.after or "HEAD")
        ]
    return result


def _round(
    scope: Scope,
    result: SyncResult,
    remote: str,
    merge_ref: str,
    upstream: str,
    *,
    push: bool,
    writers: Path,
) -> str | None:
    """One fetch, integrate, push; git's error output when a step failed, else None. While
    git integrates (rewriting memory files), the workspace's ``writers`` lock is held
    exclusive: no memcli process appends to or edits a memory file meanwhile, so no fact
    lands in a file git is replacing."""
    repo = scope.repo
    if remote != ".":
        status, _, err = run_git(repo, "fetch", "--quiet", remote, check=False)
        if status != 0:
            return f"fetch: {err}"
    ahead, behind = _ahead_behind(repo)
    if behind:
        with exclusive(writers, timeout=ROUND_LOCK_TIMEOUT):
            head = scope.head()
            _integrate(
                scope,
                strategy=result.strategy,
                fast_forward=ahead == 0,
                upstream=upstream,
                committed=result.committed,
            )
            _rehome_marks(scope, head)
        result.pulled += behind
    ahead, _ = _ahead_behind(repo)
    if not push or not ahead:
        return None
    status, _, err = run_git(repo, "push", "--quiet", remote, f"HEAD:{merge_ref}", check=False)
    if status == 0:
        result.pushed = ahead
        return None
    return f"push: {err}"


def _rehome_marks(scope: Scope, before: str | None) -> None:
    """After a merge: a ``superseded by`` line the union merge moved under another fact goes
    back under its own (:func:`memcli.notes.annotate.rehome_superseded`); the change is
    committed by the next sync."""
    from memcli.notes.annotate import rehome_superseded_in, successors

    changed = [scope.top / c.path for c in scope.changes(before, "HEAD")] if before else []
    changed = [p for p in changed if p.suffix == ".md" and p.is_file()]
    if not changed:
        return
    replaced: dict[str, str] = {}  # every successor of the memory, wherever it was written
    for path in (scope.top / scope.pathspec).rglob("*.md"):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if "supersedes" in text:
            replaced.update(successors(text))
    for path in changed:
        try:
            rehome_superseded_in(path, replaced, (scope.top, scope.top / scope.pathspec))
        except (OSError, BadInput):
            continue


def _contention(error: str) -> bool:
    low = error.lower()
    return any(mark in low for mark in _CONTENTION)


def _what_failed(error: str, remote: str) -> str:
    step = error.partition(":")[0]
    return f"{step} {'from' if step == 'fetch' else 'to'} {remote} failed"


def _attempts(n: int) -> str:
    return f"{n} attempt{'s' if n != 1 else ''}"


def git_cause(error: str) -> str:
    """Git's own account of a failure in one line: the refused refs (``! [rejected] ...``) and
    the error lines (the remote's too), without hints, advice or "failed to push some refs"."""
    text = error.partition(": ")[2] if error.startswith(("fetch: ", "push: ")) else error
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    refused = [ln for ln in lines if ln.startswith("!")]
    errors = [
        ln.removeprefix("remote: ")
        for ln in lines
        if ln.startswith(("error:", "fatal:", "remote: error:", "remote: fatal:"))
        and "failed to push some refs" not in ln
    ]
    found = list(dict.fromkeys([*refused, *errors]))
    return "; ".join(found) if found else last_line(text)


def _upstream(repo: Repo, branch: str) -> tuple[str, str, str]:
    """(remote, merge ref, short upstream name) of ``branch``; GitError when it has none."""
    _, remote, _ = run_git(repo, "config", "--get", f"branch.{branch}.remote", check=False)
    _, merge, _ = run_git(repo, "config", "--get", f"branch.{branch}.merge", check=False)
    status, short, _ = run_git(
        repo, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}", check=False
    )
    if not remote.strip() or not merge.strip():
        raise GitError(
            f"branch {branch!r} has no upstream to sync with",
            hint=f"set one: 'git push -u origin {branch}' (or 'git branch -u origin/{branch}')",
        )
    if status != 0:
        if remote.strip() != ".":
            run_git(repo, "fetch", "--quiet", remote.strip())
        status, short, _err = run_git(
            repo, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}", check=False
        )
        if status != 0:
            raise GitError(
                f"the upstream of {branch!r} ({remote.strip()} {merge.strip()}) does not exist",
                hint=f"push it first: 'git push -u {remote.strip()} {branch}'",
            )
    return remote.strip(), merge.strip(), short.strip()


def _dirty_memory(scope: Scope) -> list[str]:
    _, out, _ = run_git(
        scope.repo, "status", "--porcelain", "-z", "--untracked-files=all", "--", scope.pathspec
    )
    paths: list[str] = []
    fields = out.split("\0")
    i = 0
    while i < len(fields):
        rec = fields[i]
        i += 1
        if len(rec) < 4:
            continue
        paths.append(rec[3:])
        if rec[0] in "RC":
            paths.append(fields[i])
            i += 1
    return sorted(set(paths))


def _ahead_behind(repo: Repo) -> tuple[int, int]:
    _, out, _ = run_git(repo, "rev-list", "--left-right", "--count", "HEAD...@{u}")
    ahead, behind = out.split()
    return int(ahead), int(behind)


def _integrate(
    scope: Scope, *, strategy: str, fast_forward: bool, upstream: str, committed: str | None
) -> None:
    repo = scope.repo
    if fast_forward:
        args = ["merge", "--ff-only", "--autostash", "--quiet", "@{u}"]
    elif strategy == "rebase":
        args = ["rebase", "--autostash", "--quiet", "@{u}"]
    else:
        args = ["merge", "--autostash", "--no-edit", "--quiet", "@{u}"]
    status, out, err = run_git(repo, *args, check=False)
    if status == 0:
        return
    op = "rebase" if args[0] == "rebase" else "merge"
    _, unmerged, _ = run_git(repo, "diff", "--name-only", "-z", "--diff-filter=U", check=False)
    files = [scope.ws_rel(p) for p in unmerged.split("\0") if p]
    if not files:
        if operation_in_progress(repo):
            run_git(repo, op, "--abort", check=False)
        raise GitError(
            f"{op} onto {upstream} failed: {last_line(err or out)}",
            hint="run 'git status' to see why",
        )
    aborted, _, _ = run_git(repo, op, "--abort", check=False)
    names = ", ".join(files)
    if aborted == 0:
        here = (
            f"your pending memory stays committed here as {committed[:10]}, not pushed"
            if committed
            else "nothing was changed here"
        )
        raise SyncConflict(
            f"sync stopped: {names} changed on both sides; {here} ({op} aborted)",
            hint=f"resolve by hand: 'git pull {'--rebase' if op == 'rebase' else '--no-rebase'}'"
            ", fix and 'git add' the files, "
            f"'git {op} --continue', then 'memcli sync'",
        )
    raise SyncConflict(
        f"sync stopped: {names} changed on both sides and the {op} is still in progress",
        hint=f"fix the files and run 'git {op} --continue', or 'git {op} --abort' (see git status)",
    )


def sync_message(d: DiffResult) -> str:
    """A commit message for pending memory changes that names the facts."""
    added = [f.text for fd in d.files for f in fd.added if f.kind == "fact"]
    t = d.totals
    return facts_message(added, removed=t["removed"], files=t["files"])
