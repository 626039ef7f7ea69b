"""What each agent session has already flushed, so a later flush sends only the new turns.

One JSON file per session under ``.memcli/agent/sessions/``, holding a short digest of every
turn flushed so far. A flush takes the turns after the longest run of leading turns whose
digests match (a transcript that was rewritten, not just appended to, is flushed from where
it first differs), and records the digests only once the flush has succeeded, so a failed
flush is tried again by the next hook. A lock per session keeps a flush at compaction and
one at the session's end from sending the same turns twice.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from memcli.locks import ProcessLock
from memcli.statedir import read_text, write_text

__all__ = ["SessionLog", "turn_digest"]

_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def turn_digest(role: str, text: str) -> str:
    """16 hex digits naming one turn (role and whitespace-collapsed text)."""
    canon = f"{role}\x00{' '.join(text.split())}"
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()[:16]


class SessionLog:
    """The flushed turns of one session, in ``folder``."""

    def __init__(self, folder: Path, session_id: str) -> None:
        name = _SAFE.sub("_", session_id.strip())[:120] or "session"
        if name != session_id:  # keep distinct ids distinct after cleaning
            name += "-" + hashlib.sha256(session_id.encode()).hexdigest()[:8]
        self.path = folder / f"{name}.json"
        self.lock = ProcessLock(folder / f"{name}.lock", what=f"session {session_id}")

    def flushed(self) -> list[str]:
        """Digests of the turns flushed so far (none when the file is missing or damaged)."""
        try:
            data = json.loads(read_text(self.path))
        except (OSError, ValueError):
            return []
        turns = data.get("turns") if isinstance(data, dict) else None
        return [t for t in turns if isinstance(t, str)] if isinstance(turns, list) else []

    def record(self, digests: list[str], transcript: str) -> None:
        """Replace the record (write a temporary file, then rename it over the old one)."""
        write_text(self.path, json.dumps({"transcript": transcript, "turns": digests}))

    @staticmethod
    def new_from(flushed: list[str], digests: list[str]) -> int:
        """Index of the first turn of ``digests`` not among the leading ``flushed`` ones."""
        n = 0
        for done, now in zip(flushed, digests, strict=False):
            if done != now:
                break
            n += 1
        return n
