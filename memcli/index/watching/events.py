"""What a watch reports: its events, as JSON-ready dicts (``ready``, ``sync``, ``warning``,
``error`` and ``stopped``; ``memcli watch --json`` prints them one per line and their keys are
a contract), and the summary it returns when it ends."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memcli.index.indexer import IndexReport

PATHS_IN_EVENT = 200  # a sync event lists at most this many paths

Event = dict[str, Any]
Emit = Callable[[Event], None]


@dataclass
class WatchSummary:
    """How a watch ended: the syncs it reported and why it stopped (``stopped``, the signal's
    name such as ``SIGTERM``, or ``interrupted``)."""

    syncs: int = 0
    reason: str = "stopped"

    def as_dict(self) -> dict[str, Any]:
        return {"syncs": self.syncs, "reason": self.reason}


def now_iso() -> str:
    """The local time with its offset, to the second: every event's ``time``."""
    return datetime.now().astimezone().isoformat(timespec="seconds")


def ready_event(workspace: str, roots: list[str], debounce_ms: int, warnings: list[str]) -> Event:
    """The watcher is established and the initial sync is done."""
    return {
        "event": "ready",
        "workspace": workspace,
        "watching": [r or "." for r in roots],
        "debounce_ms": debounce_ms,
        "pid": os.getpid(),
        "warnings": warnings,
        "time": now_iso(),
    }


def sync_event(
    report: IndexReport, *, embeds: bool, embedded: int, missing: int, initial: bool
) -> Event:
    """One batch was indexed: every field of ``index --json`` plus the paths, time and
    warnings (``embedded``/``missing_vectors`` are 0 without an embedding model)."""
    event: Event = {"event": "sync", **report.as_dict()}
    event.update(
        {
            "paths": report.changed[:PATHS_IN_EVENT],
            "time": now_iso(),
            "warnings": report.warnings,
            "embedded": embedded if embeds else 0,
            "missing_vectors": missing if embeds else 0,
        }
    )
    if initial:
        event["initial"] = True
    return event


def error_event(message: str, paths: list[str], retry_in: float) -> Event:
    """A batch failed; it is retried (everything is re-synced) in ``retry_in`` seconds."""
    return {
        "event": "error",
        "message": message,
        "paths": paths[:PATHS_IN_EVENT],
        "retry_in": retry_in,
        "time": now_iso(),
    }


def warning_event(message: str) -> Event:
    return {"event": "warning", "message": message, "time": now_iso()}


def stopped_event(reason: str, syncs: int) -> Event:
    """The last event of every watch: why it stopped and how many syncs it reported."""
    return {"event": "stopped", "reason": reason, "syncs": syncs, "time": now_iso()}
