"""Which folders a watch covers and which file-system events in them matter."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from typing import Any

from memcli.errors import WorkspaceNotFound
from memcli.notes.scan import SKIP_DIRS, Matcher
from memcli.notes.workspace import MEMORY_DIR, Workspace


def watch_roots(ws: Workspace, include: list[str]) -> tuple[list[str], list[str]]:
    """Folders to watch (workspace-relative, '' = the root) and warnings for missing ones.

    ``memory/`` plus the fixed leading folders of the include globs; folders
    inside another watched folder are dropped (it is watched recursively).
    """
    wanted = sorted({MEMORY_DIR, *Matcher(ws, include).roots}, key=lambda p: (p.count("/"), p))
    roots: list[str] = []
    warnings: list[str] = []
    for rel in wanted:
        if any(r == "" or rel == r or rel.startswith(r + "/") for r in roots):
            continue
        path = ws.root / rel if rel else ws.root
        if path.is_dir():
            roots.append(rel)
        elif rel == MEMORY_DIR:
            raise WorkspaceNotFound(
                f"nothing to watch: {path} does not exist", hint="run 'memcli init' first"
            )
        else:
            warnings.append(f"{rel}/ does not exist; not watching it (restart watch once it does)")
    return roots, warnings


class ChangeFilter:
    """Which file-system events matter: a ``(Change, path) -> bool`` callable.

    Kept: paths the include globs match (minus ``.memignore``), folders that
    appear (a folder moved in brings its files), and deleted folders that held
    indexed files (a folder moved out or renamed takes its files along).
    Dropped: ``.memcli/``, ``.git/`` and the like, everything else.
    """

    def __init__(self, ws: Workspace, include: list[str]) -> None:
        self.ws = ws
        self.include = include
        self.root = str(ws.root)
        self.matcher = Matcher(ws, include)
        self.known_dirs: set[str] = set()
        self._ignore_stamp = self._memignore_stamp()
        self._checked = time.monotonic()

    def _memignore_stamp(self) -> tuple[int, int] | None:
        try:
            st = (self.ws.root / ".memignore").stat()
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size)

    def refresh(self) -> None:
        """Reload ``.memignore`` when it changed (checked at most once a second)."""
        now = time.monotonic()
        if now - self._checked < 1.0:
            return
        self._checked = now
        stamp = self._memignore_stamp()
        if stamp != self._ignore_stamp:
            self._ignore_stamp = stamp
            self.matcher = Matcher(self.ws, self.include)

    def set_indexed(self, paths: Iterable[str]) -> None:
        """Remember the folders holding indexed files (to recognise deleted folders)."""
        self.known_dirs = set()
        self.add_indexed(paths)

    def add_indexed(self, paths: Iterable[str]) -> None:
        for p in paths:
            parts = p.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                self.known_dirs.add("/".join(parts[:i]))

    def rel(self, path: str) -> str | None:
        """Workspace-relative POSIX path, or None outside the workspace."""
        if not path.startswith(self.root + os.sep):
            return None
        rel = path[len(self.root) + 1 :]
        return rel.replace(os.sep, "/") if os.sep != "/" else rel

    def __call__(self, change: Any, path: str) -> bool:
        rel = self.rel(path)
        if not rel:
            return False
        if any(part in SKIP_DIRS for part in rel.split("/")):
            return False
        if self.matcher.matches(rel):
            return True
        if int(change) == 3:  # Change.deleted: a folder that held indexed files?
            return rel in self.known_dirs
        return os.path.isdir(path)
