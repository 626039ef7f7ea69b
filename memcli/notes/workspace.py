"""Workspace discovery, layout and path confinement."""

from __future__ import annotations

import functools
import os
import re
from datetime import date
from pathlib import Path
from typing import NamedTuple

import memcli.safewrite as safewrite
import memcli.statedir as statedir
from memcli.errors import BadInput, PathOutsideWorkspace, WorkspaceNotFound
from memcli.statedir import STATE_DIR, state_path

MEMORY_DIR = "memory"
EVERGREEN_FILE = "MEMORY.md"
CONFIG_FILE = "memcli.toml"

NAME_MAX = 255  # bytes in one file name on common file systems


@functools.cache
def _date_prefix() -> re.Pattern[str]:
    """Compiled on first use: not on every start-up."""
    return re.compile(r"^(\d{4}-\d{2}-\d{2})")


@functools.cache
def _ns_name() -> re.Pattern[str]:
    """Compiled on first use: not on every start-up."""
    return re.compile(r"^[\w][\w.\-]*$")


class Workspace(NamedTuple):
    """A folder with ``memory/`` (the Markdown) and ``.memcli/`` (derived state)."""

    root: Path

    @property
    def memory_dir(self) -> Path:
        return self.root / MEMORY_DIR

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    @property
    def index_path(self) -> Path:
        return self.state_dir / "index.db"

    @property
    def lock_path(self) -> Path:
        """The index's writer lock (``.memcli`` made a real folder first)."""
        return self.state_file("lock")

    def check_state(self) -> list[str]:
        """Make ``.memcli`` safe to write (:func:`memcli.statedir.check`) and, when git tracks
        files in it (a repository that committed it), empty it: it holds derived data only.
        One warning for each thing done. The git index is read again only when it or the
        folder changed since the last check (a stamp in the folder says which)."""
        warnings = statedir.check(self.root)
        top = find_git_root(self.root)
        if top is None:
            return warnings
        from memcli.notes.gitindex import index_file, tracked_under

        index = index_file(top)
        try:
            seen = os.stat(index) if index is not None else None
        except OSError:
            seen = None
        folder = os.lstat(self.state_dir)
        stamp = f"{folder.st_dev}:{folder.st_ino} "
        stamp += f"{seen.st_mtime_ns}:{seen.st_size}\n" if seen else "-\n"
        stamp_path = self.state_dir / "checked"
        try:
            if statedir.read_text(stamp_path, 256) == stamp:
                return warnings
        except OSError:
            pass
        prefix = f"{self.state_dir.relative_to(top).as_posix()}/"
        tracked = tracked_under(index, prefix) if index is not None and seen else None
        if tracked:
            for entry in sorted(self.state_dir.iterdir()):
                statedir.remove(entry)
            shown = ", ".join(t.removeprefix(prefix) for t in tracked[:3])
            more = f" and {len(tracked) - 3} more" if len(tracked) > 3 else ""
            warnings.append(
                f"{STATE_DIR}/ held files committed to the repository ({shown}{more}):"
                f" emptied it ({STATE_DIR}/ holds memcli's derived data only);"
                f" 'git rm -r --cached {prefix}' takes them out of the repository"
            )
        statedir.write_text(stamp_path, stamp)
        return warnings

    @property
    def writers_lock(self) -> Path:
        """The lock every write to a memory file holds shared, and ``sync`` exclusive while
        git rewrites memory files (:func:`memcli.locks.shared`, :func:`memcli.locks.exclusive`)."""
        try:
            return self.state_file("writers.lock")
        except OSError:  # .memcli cannot be made: the lock cannot be taken (see locks)
            return self.state_dir / "writers.lock"

    def state_file(self, *parts: str) -> Path:
        """A path under ``.memcli`` whose folders are real folders (see
        :mod:`memcli.statedir`); open it with :func:`memcli.statedir.open_state`."""
        return state_path(self.root, *parts)

    @property
    def memory_bounds(self) -> tuple[Path, Path]:
        """Where a memory file must stay, links resolved: the workspace, and ``memory/``
        in it (:func:`memcli.safewrite.target`)."""
        return (self.root, self.memory_dir)

    @property
    def evergreen_path(self) -> Path:
        return self.memory_dir / EVERGREEN_FILE

    def ensure_state_dir(self) -> Path:
        """``.memcli`` as a real folder (see :mod:`memcli.statedir`)."""
        return state_path(self.root)

    def rel(self, path: Path) -> str:
        """Workspace-relative POSIX path."""
        return path.relative_to(self.root).as_posix()

    def resolve_user_path(self, user_path: str | Path, *, base: Path | None = None) -> Path:
        """Resolve a user-given path and refuse anything outside the workspace.

        Relative paths are taken from ``base`` (default: the workspace root).
        Symlinked folders are resolved, so a link pointing out is refused too.
        """
        text = str(user_path)
        if not text or "\x00" in text or "\n" in text:
            raise BadInput(f"invalid path: {text!r}")
        try:
            raw = Path(text).expanduser()
            candidate = raw if raw.is_absolute() else (base or self.root) / raw
            resolved = candidate.resolve(strict=False)
        except (OSError, RuntimeError, ValueError) as exc:  # link loop, unknown ~user
            raise BadInput(f"invalid path {text!r}: {exc}") from None
        if any(len(os.fsencode(part)) > NAME_MAX for part in resolved.parts):
            raise BadInput(f"invalid path {text!r}: a name is longer than {NAME_MAX} bytes")
        root = self.root.resolve()
        if resolved != root and root not in resolved.parents:
            raise PathOutsideWorkspace(
                f"path {text!r} is outside the workspace {root}",
                hint="paths must stay inside the workspace",
            )
        return resolved

    def daily_path(self, day: date, namespace: str | None = None) -> Path:
        """``memory/YYYY-MM-DD.md`` or ``memory/<ns>/YYYY-MM-DD.md``."""
        folder = self.memory_dir
        if namespace:
            folder = self.memory_dir / check_namespace(namespace)
        path = self.resolve_user_path(folder / f"{day.isoformat()}.md")
        if self.memory_dir.resolve() not in path.parents:  # e.g. memory/<ns> links elsewhere
            raise PathOutsideWorkspace(
                f"namespace {namespace!r} leads outside {MEMORY_DIR}/",
                hint="a namespace is a folder under memory/",
            )
        return path


def check_namespace(name: str) -> str:
    """A namespace is one safe folder name (no separators, no ``..``)."""
    if not _ns_name().match(name) or name in (".", "..") or ".." in name:
        raise BadInput(
            f"invalid namespace {name!r}",
            hint="use letters, digits, '_', '-' or '.' (no slashes)",
        )
    return name


def find_workspace(explicit: str | Path | None = None, cwd: Path | None = None) -> Workspace:
    """Find the workspace: explicit flag, ``$MEMCLI_WORKSPACE``, or nearest ancestor."""
    chosen = explicit or os.environ.get("MEMCLI_WORKSPACE")
    if chosen:
        root = Path(chosen).expanduser().resolve()
        if not root.is_dir():
            raise WorkspaceNotFound(
                f"workspace {str(chosen)!r} is not a directory",
                hint="run 'memcli init' there first",
            )
        if not (_is_workspace(root) or (root / STATE_DIR).is_dir()):  # only init makes one
            raise WorkspaceNotFound(
                f"{root} is not a memcli workspace (no {MEMORY_DIR}/ or {CONFIG_FILE})",
                hint=f"run 'memcli init {chosen}' to create one there",
            )
        return Workspace(root)
    start = (cwd or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        if _is_workspace(folder):
            return Workspace(folder)
    raise WorkspaceNotFound(
        f"no memcli workspace in {start} or any parent",
        hint="run 'memcli init' to create one, or pass -w DIR",
    )


def _is_workspace(folder: Path) -> bool:
    return (folder / MEMORY_DIR).is_dir() or (folder / CONFIG_FILE).is_file()


def find_git_root(path: Path) -> Path | None:
    """The nearest folder at or above ``path`` holding ``.git`` (a folder, or a file in a
    linked worktree or submodule); None outside git. No subprocess: the notes room finds
    its repository without the git room."""
    start = Path(path).resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def source_of(rel_path: str) -> str:
    """Source label: ``memory/x.md`` -> ``memory``; ``memory/ns/.../x.md`` -> ``ns``."""
    parts = rel_path.split("/")
    if len(parts) >= 3 and parts[0] == MEMORY_DIR:
        return parts[1]
    return parts[0] if len(parts) > 1 else MEMORY_DIR


def date_from_name(rel_path: str) -> str | None:
    """A ``YYYY-MM-DD`` prefix of the file name, if it is a real date."""
    name = rel_path.rsplit("/", 1)[-1]
    m = _date_prefix().match(name)
    if not m:
        return None
    try:
        return date.fromisoformat(m.group(1)).isoformat()
    except ValueError:
        return None


MEMORY_TEMPLATE = """# Memory

Evergreen facts: curated by hand, never decayed, never written by `memcli flush`.
"""


def init_workspace(root: Path) -> list[str]:
    """Create the layout in ``root`` (idempotent); return what was created or changed.

    Every file is written through :mod:`memcli.safewrite`, and each is checked before the
    first is written: a link that leads out of the workspace (or, for ``MEMORY.md``, out of
    ``memory/``) stops ``init`` with nothing changed."""
    root = root.resolve()
    ws = Workspace(root)
    gitignore, gitattributes = root / ".gitignore", root / ".gitattributes"
    in_git = find_git_root(root) is not None
    for path in (ws.memory_dir, gitignore, *([gitattributes] if in_git else [])):
        safewrite.target(path, root)
    if ws.memory_dir.exists() and not ws.memory_dir.is_dir():
        raise BadInput(f"{ws.memory_dir} exists and is not a folder")
    safewrite.target(ws.evergreen_path, *ws.memory_bounds)
    done: list[str] = []
    if not ws.memory_dir.is_dir():
        ws.memory_dir.mkdir(parents=True)
        done.append(f"{MEMORY_DIR}/")
    if not os.path.lexists(ws.evergreen_path):
        safewrite.replace(ws.evergreen_path, MEMORY_TEMPLATE.encode("utf-8"), *ws.memory_bounds)
        done.append(f"{MEMORY_DIR}/{EVERGREEN_FILE}")
    if safewrite.append_line(gitignore, f"{STATE_DIR}/", root):
        done.append(".gitignore")
    if in_git and safewrite.append_line(gitattributes, UNION_MERGE, root):
        done.append(".gitattributes")
    return done


#: Dated memory files are append-only logs: git's union merge keeps both sides' lines.
UNION_MERGE = f"{MEMORY_DIR}/**/[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*.md merge=union"
