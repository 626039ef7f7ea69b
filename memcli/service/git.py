"""Git operations on the workspace's repository: diff, log, sync, hooks and commits.

Each is one function over the workspace's core taking typed options and returning the git
room's typed results, so the CLI, an MCP server or an agent hook call the same thing: the work
an adapter would otherwise copy (requiring a repository before writing, the commit message
naming a fact, re-indexing after a sync, :func:`memcli.service.indexing.index`) happens here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import memcli.service.indexing as indexing
from memcli.notes.workspace import MEMORY_DIR
from memcli.service.core import MemoryCore

if TYPE_CHECKING:
    from memcli.git.diff import DiffResult
    from memcli.git.hooks import HooksReport
    from memcli.git.log import LogEntry
    from memcli.service.datatypes import DiffOptions, LogOptions, SyncOptions, SyncReport

# The git room is imported inside the methods: keyword search and status open a Memory too,
# and must not load the diff, sync and hook code (with difflib and tempfile) they never use.


def require_repo(core: MemoryCore) -> Path:
    """The top of the workspace's repository; GitError (before anything is written)
    when the workspace is not in one. Cheap: no git process."""
    from memcli.git.repo import require_repo  # git code on git operations only (above)

    return require_repo(core.ws.root)


def commit(core: MemoryCore, paths: list[Path], message: str) -> str | None:
    """Commit exactly ``paths`` (and nothing else staged); the sha, None when unchanged."""
    from memcli.git.commit import commit_paths  # git code on git operations only (above)

    return commit_paths(core.ws.root, paths, message) or None


def diff(core: MemoryCore, opts: DiffOptions | None = None) -> DiffResult:
    """Facts added and removed under ``memory/``."""
    from memcli.git.diff import diff  # git code on git operations only (above)
    from memcli.service.datatypes import DiffOptions  # option types: not on search/status

    opts = opts or DiffOptions()
    return diff(core.ws.root, opts.rev_range, since=opts.since, memory_dir=MEMORY_DIR)


def log(core: MemoryCore, opts: LogOptions | None = None) -> list[LogEntry]:
    """Commits that touched ``memory/``, newest first, with the facts each changed."""
    from memcli.git.log import log  # git code on git operations only (above)
    from memcli.service.datatypes import LogOptions  # option types: not on search/status

    opts = opts or LogOptions()
    return log(core.ws.root, opts.rev, limit=opts.limit, since=opts.since, memory_dir=MEMORY_DIR)


def sync(core: MemoryCore, opts: SyncOptions | None = None) -> SyncReport:
    """Commit pending memory, pull (rebase or merge), push; then re-index. Only through
    :meth:`memcli.memory.Memory.sync`, which first finishes a change left half done."""
    from memcli.git.sync import sync as git_sync  # git code on git operations only (above)
    from memcli.service.datatypes import SyncOptions, SyncReport  # not on search/status

    opts = opts or SyncOptions()
    strategy = opts.strategy or core.settings.get("git.sync_strategy")
    result = git_sync(
        core.ws.root,
        strategy=strategy,
        commit=opts.commit,
        push=opts.push,
        memory_dir=MEMORY_DIR,
        time_limit=float(core.settings.get("git.sync_timeout")),
    )
    return SyncReport(result, indexing.index(core))


def hooks_install(core: MemoryCore, *, python: str | None = None) -> HooksReport:
    """Install (or update) the re-indexing git hooks, chaining any hook already there."""
    from memcli.git.hooks import install  # git code on git operations only (above)

    return install(core.ws.root, python=python)


def hooks_uninstall(core: MemoryCore) -> HooksReport:
    """Remove the hooks and restore the hooks they chained."""
    from memcli.git.hooks import uninstall  # git code on git operations only (above)

    return uninstall(core.ws.root)


def hooks_status(core: MemoryCore) -> HooksReport:
    """Each hook's state: installed, missing, foreign or modified."""
    from memcli.git.hooks import status  # git code on git operations only (above)

    return status(core.ws.root)
