"""Whether the index is current: the comparison with the files a search runs first, as
``index.freshness`` says, what it found, and what the quick check needs recorded after it."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable

from memcli.config import Settings
from memcli.index import changes
from memcli.index.store import Store
from memcli.notes.scan import ScanResult, scan
from memcli.notes.workspace import Workspace


class Freshness:
    """One workspace's comparison of its files with the index, and its findings."""

    def __init__(
        self,
        ws: Workspace,
        store: Store,
        settings: Settings,
        include: list[str],
        mode: str | None = None,
    ) -> None:
        self.ws = ws
        self.store = store
        self.settings = settings
        self.include = include
        #: How :meth:`dirty` compares: ``index.freshness`` unless the caller says.
        self.mode: str = mode or settings.get("index.freshness")
        self.settled: list[str] = []  # see dirty()
        #: When the last :meth:`dirty` began comparing every file with the index (epoch
        #: seconds); None: it did not (the quick check answered, or the caller listed).
        self.compared_all: float | None = None
        #: What :meth:`dirty` found: the files it listed (all of them, or the quick check's
        #: changed ones), those that differ from the index, and the folders the quick check
        #: listed with their times; a sync may take them instead of comparing every file.
        self.found: ScanResult | None = None
        self.changed: list[str] = []
        self.listed: dict[str, int] = {}
        #: The folders the full comparison listed (:func:`memcli.index.changes.stamp_folders`).
        self.walked: tuple[str, ...] = ()

    def dirty(self, found: ScanResult | None = None) -> list[str]:
        """Paths whose (mtime_ns, size) differ from the index, plus deleted ones, checked as
        :attr:`mode` says: ``full`` compares every file
        (:func:`memcli.index.changes.unchanged`, then :func:`memcli.index.changes.dirty`);
        ``recent`` runs the quick check (:func:`memcli.index.changes.quick_changes`) when it
        can answer; ``auto`` runs the quick check once the index holds
        ``index.full_check_files`` files, unless the last full comparison is
        ``index.full_check_secs`` old. With ``found`` (a listing the caller made), that one
        is compared. Sets :attr:`settled`, :attr:`compared_all`, :attr:`found`,
        :attr:`changed` and :attr:`listed`."""
        self.settled, self.changed, self.found, self.listed = [], [], None, {}
        self.compared_all, self.walked = None, ()
        if found is None:
            quick = self._quick()
            if quick is not None:
                self.found = ScanResult(quick.found, [])
                self.changed, self.listed = quick.changed, quick.folders
                return quick.changed
            self.compared_all = time.time()
            walked: list[str] = []
            if changes.unchanged(self.ws, self.store, self.include, walked):
                self.walked = tuple(walked)
                return []
            found = self.found = scan(self.ws, self.include)
            self.walked = found.folders
        out, self.settled = changes.dirty(self.store, str(self.ws.root) + os.sep, found)
        self.changed = out
        return out

    def reusable(self) -> bool:
        """Whether the last :meth:`dirty` listed what a sync may take instead of listing."""
        return self.compared_all is not None or bool(self.listed)

    def _quick(self) -> changes.QuickChanges | None:
        """The quick check's findings when it applies and can answer."""
        if not self.uses_quick_check() or self._full_check_due():
            return None
        return changes.quick_changes(self.ws, self.store, self.include)

    def uses_quick_check(self) -> bool:
        """Whether searches run the quick check: always with ``recent``, and with ``auto``
        once the index holds ``index.full_check_files`` files."""
        if self.mode == "recent":
            return True
        return self.mode == "auto" and self.store.has_files(
            self.settings.get("index.full_check_files")
        )

    def _full_check_due(self) -> bool:
        """With ``auto``: the last full comparison is ``index.full_check_secs`` old."""
        if self.mode != "auto":
            return False
        last = self.store.get_meta(changes.FULL_CHECK_KEY)
        if not last:
            return True
        age = time.time() - float(last)  # < 0: the clock went back since
        return age < 0 or age >= self.settings.get("index.full_check_secs")

    def worth_recording(self) -> bool:
        """Whether a search that found the index current should record what the quick check
        needs (:meth:`record` of :attr:`compared_all` and :attr:`walked`): after a full
        comparison where searches run the quick check (or nothing is recorded yet), or
        after the quick check listed folders whose times moved."""
        began = self.compared_all
        if self.mode == "full" or (began is None and not self.listed):
            return False
        if began is not None and not self.uses_quick_check():
            return not self.store.get_meta(changes.FOLDERS_KEY)  # recorded once is enough
        return True

    def record(
        self, began: float | None, walked: Iterable[str] = (), watched: bool = False
    ) -> None:
        """Record what the quick check needs, inside the caller's write transaction: after
        a full comparison that ``began`` then, every folder's time (``walked``: those it
        listed) and when it began; after a watcher's sync, every folder's time; after the
        quick check, the times of the folders it listed (:attr:`listed`)."""
        if began is not None:
            self.store.set_meta(changes.FULL_CHECK_KEY, str(began))
        if began is not None or watched:
            changes.stamp_folders(self.ws, self.store, self.include, began, walked)
        else:
            changes.restamp_folders(self.store, self.listed)
