"""The changed-files check: which files differ from what the index recorded of them."""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Iterable
from itertools import starmap, zip_longest
from operator import eq
from pathlib import Path
from typing import NamedTuple

from memcli.index.store import Store
from memcli.notes.scan import FoundFile, Matcher, ScanResult, iter_files, list_folder
from memcli.notes.workspace import MEMORY_DIR, Workspace

#: A file modified this close to the moment it was read may change again within the same
#: timestamp tick without its (mtime, size) changing ("racy clean", as git calls it). Such a
#: file is recorded with mtime 0, so the next check re-hashes it instead of trusting the stat.
RACY_NS = 2_000_000_000
SMUDGED = 0


def recorded_mtime(mtime_ns: int) -> int:
    """The mtime to record for a file just read: :data:`SMUDGED` while it is racy."""
    return SMUDGED if time.time_ns() - mtime_ns < RACY_NS else mtime_ns


def unchanged(
    ws: Workspace, store: Store, include: list[str], folders: list[str] | None = None
) -> bool:
    """The usual answer before a search, in memory that does not grow with the files:
    the files on disk and the known ones (indexed or skipped) are both read in path
    order and must agree row by row, stat included. Only the folders on the current
    path are held, and the first difference ends the walk; the folders listed go to
    ``folders`` when given (all of them when the answer is True)."""
    found = iter_files(ws, include, [], folders)
    return all(starmap(eq, zip_longest(found, store.iter_stats())))  # None pads


def dirty(store: Store, root: str, found: ScanResult) -> tuple[list[str], list[str]]:
    """Paths whose (mtime_ns, size) differ from the index, plus deleted ones; and the
    settled ones: files recorded as racy whose content is unchanged and whose mtime is now
    old enough to be trusted (a sync records their real mtime, so later checks stop
    re-hashing them). A found file is at ``root + rel``."""
    settled = []
    known = store.file_stats()
    out = []
    for rel, f in found.files.items():
        if known.get(rel) == (f.mtime_ns, f.size):
            continue
        if _racy_but_same(store, rel, root + rel):
            if time.time_ns() - f.mtime_ns >= RACY_NS:
                settled.append(rel)
            continue
        out.append(rel)
    out.extend(rel for rel in known if rel not in found.files)
    return sorted(out), settled


def _racy_but_same(store: Store, rel: str, path: str) -> bool:
    """A smudged (racy) entry whose content hash still matches is not dirty."""
    state = store.file_states_for([rel]).get(rel)
    if state is None or state.mtime_ns != SMUDGED:
        return False
    try:
        data = Path(path).read_bytes()
    except OSError:
        return False
    import hashlib  # not needed by searches of an unchanged index

    return state.size == len(data) and state.sha256 == hashlib.sha256(data).hexdigest()


#: Meta key of the folders' modification times (the quick freshness check).
FOLDERS_KEY = "folders"
#: Meta key of when (epoch seconds) every file was last compared with the index.
FULL_CHECK_KEY = "full_checked"
#: Files the quick check stats besides the folders: the ones changed last.
RECENT_FILES = 64


#: Folders whose times moved that the quick check lists itself; more: the full comparison.
MOST_FOLDERS = 16


class QuickChanges(NamedTuple):
    """What the quick check found: the files that differ from the index (``changed``; those
    still on disk in ``found``, with their stat) and the folders it listed, with their
    times now (to record once their files are synced)."""

    found: dict[str, FoundFile]
    changed: list[str]
    folders: dict[str, int]


def quick_changes(
    ws: Workspace, store: Store, include: list[str], recent: int = RECENT_FILES
) -> QuickChanges | None:
    """The quick freshness check (``index.freshness`` recent, or auto in a large workspace):
    a folder whose time differs from the one recorded is listed (its files compared with
    the index's, its new sub-folders listed in turn), and the files changed last are
    stat-ed. None: no folder times recorded, a link, or more folders to list than
    :data:`MOST_FOLDERS` (the full comparison follows). It cannot
    see a file rewritten in place without changing its folder, unless it is among the
    ``recent`` changed last."""
    raw = store.get_meta(FOLDERS_KEY)
    if not raw:
        return None
    stamps: dict[str, int] = json.loads(raw)
    root = str(ws.root) + os.sep
    moved: dict[str, int] = {}
    for folder, mtime_ns in stamps.items():
        try:
            st = os.lstat(root + folder)
        except OSError:
            return None
        if st.st_mtime_ns != mtime_ns:
            if stat.S_ISLNK(st.st_mode):  # a folder that became a link: the walk judges it
                return None
            moved[folder] = st.st_mtime_ns
            if len(moved) > MOST_FOLDERS:
                return None
    matcher = Matcher(ws, include)
    found: dict[str, FoundFile] = {}
    changed: set[str] = set()
    todo = list(moved)
    while todo:
        folder = todo.pop()
        listed = list_folder(ws, matcher, folder)
        if listed is None:
            return None
        for sub in listed[1]:  # a new folder: listed too, and recorded with the others
            if sub not in stamps and sub not in moved:
                try:
                    moved[sub] = os.stat(root + sub).st_mtime_ns
                except OSError:
                    return None
                if len(moved) > MOST_FOLDERS:
                    return None
                todo.append(sub)
        files, known = listed[0], store.folder_stats(folder)
        for rel, f in files.items():
            if known.get(rel) != (f.mtime_ns, f.size):
                found[rel] = f
                changed.add(rel)
        changed.update(rel for rel in known if rel not in files)
    for rel, mtime_ns, size in store.recent_files(recent):
        if rel in changed:
            continue
        if not matcher.matches(rel):  # no longer indexed (the patterns or .memignore)
            changed.add(rel)
            continue
        try:
            st = os.stat(root + rel)
        except FileNotFoundError:
            changed.add(rel)
            continue
        except OSError:
            return None
        if (st.st_mtime_ns, st.st_size) != (mtime_ns, size):
            found[rel] = FoundFile(rel, st.st_mtime_ns, st.st_size)
            changed.add(rel)
    return QuickChanges(found, sorted(changed), moved)


def stamp_folders(
    ws: Workspace,
    store: Store,
    include: list[str],
    began: float | None = None,
    walked: Iterable[str] = (),
) -> None:
    """Record the modification time of every folder holding a known file, of the folders
    above them, and of the memory folder (and of the workspace's own when ``include`` reaches
    outside it) and of the folders in ``walked`` (those a full listing visited, empty ones
    too), inside the caller's write transaction: a new file or folder anywhere changes one
    of them. A folder changed after the comparison with the files began
    (``began``, epoch seconds; else now) or just before it is recorded as unknown (0): the
    quick check lists it."""
    root = str(ws.root) + os.sep
    top = {MEMORY_DIR}
    if any(not pattern.startswith(f"{MEMORY_DIR}/") for pattern in include):
        top.add("")
    folders = set(top) | set(walked)  # walked: every folder listed, files in it or not
    raw = store.get_meta(FOLDERS_KEY)
    if raw:  # and those recorded before that are still there (the gone are passed below)
        folders.update(json.loads(raw))
    for folder in store.known_folders():
        while folder:  # it and every folder above it
            folders.add(folder)
            folder = folder.rpartition("/")[0]
    times: dict[str, int] = {}
    for folder in sorted(folders):
        try:
            times[folder] = os.stat(root + folder if folder else str(ws.root)).st_mtime_ns
        except OSError:
            continue
    _record_folders(store, {}, times, began)


def _record_folders(
    store: Store, stamps: dict[str, int], times: dict[str, int], began: float | None
) -> None:
    """Record ``times`` over ``stamps``; one changed after ``began`` (else now), or just
    before, as unknown (0)."""
    cutoff = (time.time_ns() if began is None else int(began * 1e9)) - RACY_NS
    for folder, mtime_ns in times.items():
        stamps[folder] = SMUDGED if mtime_ns > cutoff else mtime_ns
    store.set_meta(FOLDERS_KEY, json.dumps(stamps))


def restamp_folders(store: Store, folders: dict[str, int]) -> None:
    """Record the times of folders the quick check listed and whose files are now synced
    (inside the caller's write transaction); a time too recent to trust is recorded as
    unknown (0): the next check lists that folder again."""
    raw = store.get_meta(FOLDERS_KEY)
    if raw and folders:
        _record_folders(store, json.loads(raw), folders, None)
