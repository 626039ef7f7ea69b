"""The record of what install wrote, per file: what the file held before and what install
wrote, so that uninstalling a file nobody changed since gives back its very bytes. It lives in
memcli's cache folder: losing it loses only the byte-exact undo.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from memcli.agentsetup.change import Change


def record_path() -> Path:
    """Where install records, per file it wrote, what the file held before and what install
    wrote (in memcli's cache folder: losing it loses only the byte-exact undo)."""
    from memcli.config.layers import cache_dir

    return cache_dir() / "agent-install.json"


def _load() -> dict[str, dict[str, str | None]]:
    try:
        data = json.loads(record_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save(record: dict[str, dict[str, str | None]]) -> None:
    path = record_path()
    if not record:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".agent-install.", dir=path.parent)  # mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(record, fh, ensure_ascii=False)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def undo_exactly(changes: list[Change]) -> list[Change]:
    """Uninstall: a file that holds what install wrote (nobody changed it since) gets back
    what it held before, byte for byte."""
    entries = _load()
    out = []
    for change in changes:
        entry = entries.get(str(change.path))
        if isinstance(entry, dict) and change.before is not None:
            if entry.get("after") == change.before:
                change = change._replace(after=entry.get("before"))
        out.append(change)
    return out


def remember(changes: list[Change]) -> None:
    """Record the written ``changes``: per file, what it held before install (kept from an
    earlier install while nobody changed the file since) and what install wrote; an undone
    file's record is dropped."""
    entries = _load()
    for change in changes:
        key = str(change.path)
        if change.undo:
            entries.pop(key, None)
        elif change.changed:
            entry = entries.get(key)
            if not isinstance(entry, dict) or entry.get("after") != change.before:
                entry = {"before": change.before}  # new, or changed since: from here
            entry["after"] = change.after
            entries[key] = entry
    _save(entries)
