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
        f"--since={since}",
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


def refresh_links(store: Store, top: Path) -> int:
    """Resolve the names facts link to against the files the repository at ``top`` tracks
    and record each path's last change after the earliest fact (inside the caller's
    transaction); how many names resolved. No repository: nothing is linked."""
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
