"""Git operations on the workspace's repository: diff, log, sync, hooks and commits.

Each is one method taking typed options and returning the git room's typed results, so the
CLI, an MCP server or an agent hook call the same thing: the work an adapter would otherwise
copy (requiring a repository before writing, the commit message naming a fact, re-indexing
after a sync) happens here. The mixin builds on :class:`IndexService` because a sync
re-indexes the files it brought in.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memcli.notes.workspace import MEMORY_DIR
from memcli.service.indexing import IndexService

if TYPE_CHECKING:
    from memcli.git.diff import DiffResult
    from memcli.git.hooks import HooksReport
    from memcli.git.log import LogEntry
    from memcli.service.datatypes import DiffOptions, LogOptions, SyncOptions, SyncReport

# The git room is imported inside the methods: keyword search and status open a Memory too,
# and must not load the diff, sync and hook code (with difflib and tempfile) they never use.


class GitService(IndexService):
    def require_repo(self) -> Path:
        """The top of the workspace's repository; GitError (before anything is written)
        when the workspace is not in one. Cheap: no git process."""
        from memcli.git.repo import require_repo  # git code on git operations only (above)

        return require_repo(self.ws.root)

    def commit(self, paths: list[Path], message: str) -> str | None:
        """Commit exactly ``paths`` (and nothing else staged); the sha, None when unchanged."""
        from memcli.git.commit import commit_paths  # git code on git operations only (above)

        return commit_paths(self.ws.root, paths, message) or None

    def diff(self, opts: DiffOptions | None = None) -> DiffResult:
        """Facts added and removed under ``memory/``."""
        from memcli.git.diff import diff  # git code on git operations only (above)
        from memcli.service.datatypes import DiffOptions  # option types: not on search/status

        opts = opts or DiffOptions()
        return diff(self.ws.root, opts.rev_range, since=opts.since, memory_dir=MEMORY_DIR)

    def log(self, opts: LogOptions | None = None) -> list[LogEntry]:
        """Commits that touched ``memory/``, newest first, with the facts each changed."""
        from memcli.git.log import log  # git code on git operations only (above)
        from memcli.service.datatypes import LogOptions  # option types: not on search/status

        opts = opts or LogOptions()
        return log(
            self.ws.root, opts.rev, limit=opts.limit, since=opts.since, memory_dir=MEMORY_DIR
        )

    def _sync_git(self, opts: SyncOptions | None = None) -> SyncReport:
        """Commit pending memory, pull (rebase or merge), push; then re-index. Only through
        :meth:`memcli.memory.Memory.sync`, which first finishes a change left half done."""
        from memcli.git.sync import sync  # git code on git operations only (above)
        from memcli.service.datatypes import SyncOptions, SyncReport  # not on search/status

        opts = opts or SyncOptions()
        strategy = opts.strategy or self.settings.get("git.sync_strategy")
        result = sync(
            self.ws.root,
            strategy=strategy,
            commit=opts.commit,
            push=opts.push,
            memory_dir=MEMORY_DIR,
            time_limit=float(self.settings.get("git.sync_timeout")),
        )
        return SyncReport(result, self.index())

    def hooks_install(self, *, python: str | None = None) -> HooksReport:
        """Install (or update) the re-indexing git hooks, chaining any hook already there."""
        from memcli.git.hooks import install  # git code on git operations only (above)

        return install(self.ws.root, python=python)

    def hooks_uninstall(self) -> HooksReport:
        """Remove the hooks and restore the hooks they chained."""
        from memcli.git.hooks import uninstall  # git code on git operations only (above)

        return uninstall(self.ws.root)

    def hooks_status(self) -> HooksReport:
        """Each hook's state: installed, missing, foreign or modified."""
        from memcli.git.hooks import status  # git code on git operations only (above)

        return status(self.ws.root)
