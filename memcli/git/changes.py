"""When the paths facts link to last changed: one ``git log`` for them all, kept in the index.

``memcli index`` (and so the git hooks, which run it, and ``watch``) calls
:func:`refresh_links`; a search or a hook only reads what it stored (no git on their path).
"""

from __future__ import annotations

import re
from pathlib import Path

import memcli.index.factrows as factrows
from memcli.index.links import resolve
from memcli.index.store import Store
from memcli.notes.gitindex import index_file, tracked_under

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
#: The date git prints for a commit: local time, as entries write theirs.
DATE_FORMAT = "--date=format-local:%Y-%m-%d %H:%M"


def last_changes(top: Path, paths: set[str], since: str) -> dict[str, tuple[str, str]]:
    """Each of ``paths`` (tracked files or folders) changed in a commit since the day
    ``since``, with the date and short hash of its last such commit: one ``git log``."""
    from memcli.git.repo import find_repo, run_git

    repo = find_repo(top)
    if repo is None or not paths or not _DAY.fullmatch(since):
        return {}
    status, out, _ = run_git(
        repo,
        "log",
        "--no-renames",
        "--name-only",
        "-z",
        "--format=%x1e%h%x1f%cd",
        DATE_FORMAT,
        f"--since={since} 00:00:00",  # a bare day is that day at the current time to git
        "HEAD",
        "--",
        check=False,
    )
    found: dict[str, tuple[str, str]] = {}
    if status != 0:  # no commit yet
        return found
    for record in out.split("\x1e")[1:]:
        head, _, rest = record.partition("\0")
        commit, _, changed = head.partition("\x1f")
        for name in rest.split("\0"):
            name = name.strip("\n")
            parts = name.split("/")
            for i in range(len(parts), 0, -1):  # the file, then each folder holding it
                path = "/".join(parts[:i])
                if path in paths and found.get(path, ("",))[0] < changed:
                    found[path] = (changed, commit)
    return found


def file_dates(top: Path, files: list[str]) -> dict[str, str]:
    """The date of the last commit of each of ``files`` (paths of the repository at
    ``top``): one ``git log``; a file never committed has none."""
    from memcli.git.repo import find_repo, run_git

    repo = find_repo(top)
    if repo is None or not files:
        return {}
    status, out, _ = run_git(
        repo, "log", "--no-renames", "--name-only", "-z", "--format=%x1e%cd", DATE_FORMAT,
        "HEAD", "--", *files, check=False,
    )  # fmt: skip
    found: dict[str, str] = {}
    if status != 0:  # no commit yet
        return found
    wanted = set(files)
    for record in out.split("\x1e")[1:]:  # newest first
        changed, _, rest = record.partition("\0")
        for name in rest.split("\0"):
            name = name.strip("\n")
            if name in wanted:
                found.setdefault(name, changed.strip())
        if len(found) == len(wanted):
            break
    return found


def uncommitted_lines(top: Path, files: list[str]) -> dict[str, list[tuple[int, int]]]:
    """The lines of each of ``files`` (paths of the repository at ``top``) added or changed
    since its last commit, as (first, last) runs of the working copy: one ``git diff``."""
    from memcli.git.repo import find_repo, run_git

    repo = find_repo(top)
    if repo is None or not files:
        return {}
    status, out, _ = run_git(
        repo, "-c", "core.quotePath=false", "diff", "--no-ext-diff", "--no-textconv",
        "--no-color", "--no-renames", "-U0", "--src-prefix=a/", "--dst-prefix=b/", "HEAD",
        "--", *files, check=False,
    )  # fmt: skip
    found: dict[str, list[tuple[int, int]]] = {}
    if status != 0:  # no commit yet
        return found
    runs: list[tuple[int, int]] = []
    for line in out.splitlines():
        if line.startswith("+++ "):
            name = _unquoted(line[4:])
            runs = found.setdefault(name[2:], []) if name.startswith("b/") else []
        elif line.startswith("@@ ") and (m := _HUNK.match(line)):
            first, count = int(m[1]), int(m[2] or 1)
            if count:
                runs.append((first, first + count - 1))
    return found


#: A hunk's header: the working copy's first line and count (``@@ -3,0 +4,2 @@``).
_HUNK = re.compile(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@")
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def _unquoted(name: str) -> str:
    """A path as git's diff header writes it, unquoted when git quoted it (C style)."""
    if not (name.startswith('"') and name.endswith('"') and len(name) > 1):
        return name
    raw, out, i = name[1:-1], bytearray(), 0
    while i < len(raw):
        if raw[i] == "\\" and i + 1 < len(raw):
            if raw[i + 1 : i + 4].isdigit():
                out.append(int(raw[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
            out.append(_ESCAPES.get(raw[i + 1], ord(raw[i + 1]) & 0xFF))
            i += 2
            continue
        out += raw[i].encode("utf-8", "surrogateescape")
        i += 1
    return out.decode("utf-8", "surrogateescape")


def date_undated(store: Store, top: Path, root: Path) -> None:
    """Give a fact without a date (an evergreen file's) the date of its memory file's last
    commit as the time it was last known true: the code it names changing after that makes
    it stale. A file never committed keeps its facts undated (never stale), and so does a
    fact on a line written since the file's last commit (newer than that commit)."""
    undated = factrows.undated_links(store.conn)
    if not undated:
        return
    prefix = root.resolve().relative_to(top.resolve()).as_posix()
    prefix = "" if prefix == "." else prefix + "/"
    dates = file_dates(top, [prefix + rel for rel in undated])
    new = uncommitted_lines(top, [prefix + rel for rel in undated if prefix + rel in dates])
    rows = [
        (dates[prefix + rel], rel, line)
        for rel, lines in undated.items()
        if prefix + rel in dates
        for line in lines
        if not any(lo <= line <= hi for lo, hi in new.get(prefix + rel, ()))
    ]
    factrows.date_undated_links(store.conn, rows)


def refresh_links(store: Store, top: Path, root: Path | None = None) -> int:
    """Resolve the names facts link to against the files the repository at ``top`` tracks
    and record each path's last change after the earliest fact (inside the caller's
    transaction); how many names resolved. ``root``: the workspace, whose undated facts take
    their file's last commit date (:func:`date_undated`). No repository: nothing is linked."""
    if root is not None:
        date_undated(store, top, root)
    names, first = factrows.link_names(store.conn)
    index = index_file(top)
    tracked = tracked_under(index, "") if index is not None and names else None
    resolved = resolve(names, tracked) if tracked else {}
    paths = {p for ps in resolved.values() for p in ps}
    changes = last_changes(top, paths, first[:10]) if first and paths else {}
    rows = [
        (name, path, *changes.get(path, (None, None)))
        for name, ps in resolved.items()
        for path in ps
    ]
    factrows.set_link_paths(store.conn, rows)
    return len(resolved)


def link_new_names(store: Store, top: Path, files: list[str]) -> int:
    """Resolve the names that facts of the memory ``files`` (just synced) link to and no
    refresh has seen, against the files the repository at ``top`` tracks (its index file:
    no git process); how many resolved. Their paths' changes wait for the next
    :func:`refresh_links`: a fact just written is newer than them."""
    names = factrows.unresolved_link_names(store.conn, files)
    index = index_file(top) if names else None
    tracked = tracked_under(index, "") if index is not None else None
    resolved = resolve(names, tracked) if tracked else {}
    factrows.add_link_paths(store.conn, resolved)
    return len(resolved)
