"""A project's past sessions, where the coding agents keep them: Claude Code's
``$CLAUDE_CONFIG_DIR/projects/<folder>/<session>.jsonl`` and Codex's
``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`` (and ``archived_sessions``).

A session belongs to the project when the folder it ran in (the ``cwd`` its first records
carry) is the project's folder or one below it; only that is read of each file, and only files
changed within the horizon are opened at all.
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from memcli.flush.source import transcript_folders
from memcli.flush.transcripts import CLAUDE_CODE, CODEX

__all__ = ["PastSession", "past_sessions"]

#: How much of a session file is read to find the folder it ran in.
_HEAD_BYTES = 64 * 1024


class PastSession(NamedTuple):
    """One session file of the project."""

    agent: str  # claude-code, codex
    session_id: str
    path: Path
    mtime: float
    cwd: str


def past_sessions(root: Path, agents: tuple[str, ...], days: int) -> list[PastSession]:
    """The sessions of ``agents`` that ran in ``root`` or below it and changed within ``days``
    days, newest first."""
    top = os.path.realpath(root)
    horizon = time.time() - days * 86400
    claude, codex, archived = transcript_folders()
    found: list[PastSession] = []
    if CLAUDE_CODE in agents:
        prefix = re.sub(r"[^A-Za-z0-9]", "-", top)
        folders = [f for f in _listing(claude) if f.name.startswith(prefix) and f.is_dir()]
        found += _matching(CLAUDE_CODE, (p for f in folders for p in _listing(f)), top, horizon)
    if CODEX in agents:
        files = (p for folder in (codex, archived) for p in _walk(folder))
        found += _matching(CODEX, files, top, horizon)
    return sorted(found, key=lambda s: s.mtime, reverse=True)


def _listing(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError:
        return []


def _walk(folder: Path) -> Iterator[Path]:
    for dirpath, _dirs, names in os.walk(folder):
        for name in names:
            yield Path(dirpath) / name


def _matching(agent: str, files: Iterator[Path], top: str, horizon: float) -> list[PastSession]:
    out = []
    for path in files:
        if path.suffix != ".jsonl" or path.is_symlink():
            continue
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        if mtime < horizon:
            continue
        head = _head(path, agent)
        if head is None:
            continue
        session_id, cwd = head
        real = os.path.realpath(cwd) if cwd else ""
        if real == top or real.startswith(top.rstrip(os.sep) + os.sep):
            out.append(PastSession(agent, session_id or path.stem, path, mtime, cwd))
    return out


def _head(path: Path, agent: str) -> tuple[str, str] | None:
    """``(session id, cwd)`` from the first records of a session file, or None."""
    try:  # a regular file only (a FIFO would block), its first bytes only
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, _HEAD_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    for line in data.decode("utf-8", errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if not isinstance(rec, dict):
            continue
        if agent == CODEX:
            payload = rec.get("payload")
            if rec.get("type") == "session_meta" and isinstance(payload, dict):
                return str(payload.get("id") or ""), str(payload.get("cwd") or "")
        elif isinstance(rec.get("cwd"), str):
            return str(rec.get("sessionId") or ""), rec["cwd"]
    return None
