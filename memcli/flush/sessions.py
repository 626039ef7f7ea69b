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
from typing import Any

from memcli.locks import ProcessLock
from memcli.statedir import read_text, write_text

__all__ = ["SessionLog", "failed_sessions", "recorded_sessions", "turn_digest"]

_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def turn_digest(role: str, text: str) -> str:
    """16 hex digits naming one turn (role and whitespace-collapsed text)."""
    canon = f"{role}\x00{' '.join(text.split())}"
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()[:16]


#: The one lock every session flush of a workspace takes (a lock file per session was left
#: behind for every session ever flushed).
FLUSH_LOCK = "flush.lock"


class SessionLog:
    """The flushed turns of one session, in ``folder``."""

    def __init__(self, folder: Path, session_id: str) -> None:
        name = _SAFE.sub("_", session_id.strip())[:120] or "session"
        if name != session_id:  # keep distinct ids distinct after cleaning
            name += "-" + hashlib.sha256(session_id.encode()).hexdigest()[:8]
        self.session_id = session_id
        self.path = folder / f"{name}.json"
        self.lock = ProcessLock(folder / FLUSH_LOCK, what="the session flushes")
        self._stale_lock = folder / f"{name}.lock"  # the per-session lock of older versions

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(read_text(self.path))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def flushed(self) -> list[str]:
        """Digests of the turns flushed so far (none when the file is missing or damaged)."""
        turns = self._read().get("turns")
        return [t for t in turns if isinstance(t, str)] if isinstance(turns, list) else []

    def record(self, digests: list[str], transcript: str) -> None:
        """Replace the record (write a temporary file, then rename it over the old one): the
        flush succeeded, so no retry is due."""
        data = {"session": self.session_id, "transcript": transcript, "turns": digests}
        write_text(self.path, json.dumps(data))
        self._stale_lock.unlink(missing_ok=True)

    def record_failure(self, transcript: str, error: str) -> None:
        """Remember that a flush of this session failed (the turns flushed before are kept):
        the next hook of the workspace retries it (:func:`failed_sessions`)."""
        data = {
            "session": self.session_id,
            "transcript": transcript,
            "turns": self.flushed(),
            "failed": error[:500],
        }
        write_text(self.path, json.dumps(data))

    def record_refusal(self, transcript: str, error: str) -> None:
        """Remember that the transcript was refused (memcli.flush.source.agent_file: outside
        the workspace and the agents' folders, a link swapped in, a FIFO): no hook tries it
        again (the turns flushed before are kept)."""
        data = {
            "session": self.session_id,
            "transcript": transcript,
            "turns": self.flushed(),
            "refused": error[:500],
        }
        write_text(self.path, json.dumps(data))

    @staticmethod
    def new_from(flushed: list[str], digests: list[str]) -> int:
        """Index of the first turn of ``digests`` not among the leading ``flushed`` ones."""
        n = 0
        for done, now in zip(flushed, digests, strict=False):
            if done != now:
                break
            n += 1
        return n


def failed_sessions(folder: Path) -> list[tuple[str, str]]:
    """(session id, transcript) of every session whose last flush failed. The transcript is
    whatever the record says (a workspace that arrives as a tarball brings its own records):
    it is read only through the hook's checks (memcli.flush.source.read_agent_file)."""
    return [
        (session, str(data.get("transcript") or ""))
        for session, data in _records(folder)
        if data.get("failed")
    ]


def recorded_sessions(folder: Path) -> set[str]:
    """The ids of the sessions with a record (flushed, or tried)."""
    return {session for session, _ in _records(folder)}


def _records(folder: Path) -> list[tuple[str, dict[str, Any]]]:
    out = []
    try:
        paths = sorted(folder.glob("*.json"))
    except OSError:
        return []
    for path in paths:
        try:
            data = json.loads(read_text(path))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("session"):
            out.append((str(data["session"]), data))
    return out


#: The count of the day's background session flushes, beside the session records.
DAILY_COUNT = "daily.count"  # not *.json: those are session records


def take_daily_slot(folder: Path, cap: int, today: str | None = None) -> int:
    """Count one more background session flush for today (the caller holds the flush lock);
    a ProviderError when ``cap`` (``agent.max_flushes_per_day``) are done already: the
    session is recorded as failed and its flush waits for a hook of a later day."""
    from datetime import date

    from memcli.errors import ProviderError

    day = today or date.today().isoformat()
    try:
        data = json.loads(read_text(folder / DAILY_COUNT))
    except (OSError, ValueError):
        data = {}
    done = data.get("count") if isinstance(data, dict) and data.get("day") == day else 0
    done = done if isinstance(done, int) and done >= 0 else 0
    if done >= cap:
        raise ProviderError(
            f"{done} session(s) saved today already (agent.max_flushes_per_day {cap});"
            " this one waits for tomorrow",
            hint="raise agent.max_flushes_per_day, or run 'memcli agent flush-session --due'",
        )
    write_text(folder / DAILY_COUNT, json.dumps({"day": day, "count": done + 1}))
    return done + 1
