"""What recall gave each agent session, so that a session is never given the same entry twice.

One small JSON file per session under ``.memcli/agent/given/``: a digest of the text of each
entry recall quoted to it. An entry whose text changed since has another digest, and is given
again. After a compaction or a clear the record is dropped (the context lost what it held).
Records older than :data:`KEEP_DAYS` days are removed as new ones are written.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from memcli.digest import sha256_hex
from memcli.statedir import open_state, read_text, remove, state_path, write_text

__all__ = ["Given", "given_folder"]

#: Most digests a session's record keeps (the oldest go first).
MAX_GIVEN = 2000
#: A record not written for this long is removed.
KEEP_DAYS = 7
_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def given_folder(root: Path) -> Path:
    """``.memcli/agent/given/`` of the workspace at ``root`` (made a real folder)."""
    return state_path(root, "agent", "given", "-").parent


def digest(text: str) -> str:
    """16 hex digits naming a quoted entry by its text (whitespace collapsed)."""
    return sha256_hex(" ".join(text.split()).encode("utf-8"))[:16]


class Given:
    """The entries recall gave one session, in ``folder``."""

    def __init__(self, folder: Path, session: str) -> None:
        name = _SAFE.sub("_", session.strip())[:120] or "session"
        if name != session:
            name += "-" + sha256_hex(session.encode())[:8]
        self.folder = folder
        self.path = folder / f"{name}.json"
        self._seen: list[str] | None = None

    def _read(self) -> list[str]:
        if self._seen is None:
            try:
                data = json.loads(read_text(self.path))
            except (OSError, ValueError):
                data = None
            got = data.get("given") if isinstance(data, dict) else None
            self._seen = [d for d in got if isinstance(d, str)] if isinstance(got, list) else []
        return self._seen

    def has(self, text: str) -> bool:
        """Whether an entry of this text was given to the session."""
        return digest(text) in self._read()

    def add(self, texts: list[str]) -> None:
        """Record ``texts`` as given, with what other hooks of the session recorded since
        this one read the record (an agent runs its hooks in parallel: the record is read
        again and written whole under a lock)."""
        from memcli.locks import lock_file  # a write only

        fd = open_state(self.folder / ".lock", os.O_RDWR | os.O_CREAT)
        try:
            lock_file(fd)
            self._seen = None
            seen = self._read()
            seen.extend(d for d in map(digest, texts) if d not in seen)
            del seen[:-MAX_GIVEN]
            write_text(self.path, json.dumps({"given": seen}))
        finally:
            os.close(fd)  # closing releases the lock
        self._prune()

    def clear(self) -> None:
        """Forget what was given (a compaction or a clear emptied the context)."""
        self._seen = []
        try:
            remove(self.path)
        except OSError:
            pass

    def _prune(self) -> None:
        horizon = time.time() - KEEP_DAYS * 86400
        try:
            old = [
                e
                for e in os.scandir(self.folder)
                if e.name.endswith(".json") and e.stat().st_mtime < horizon
            ]
        except OSError:
            return
        for entry in old[:50]:
            try:
                remove(Path(entry.path))
            except OSError:
                pass
