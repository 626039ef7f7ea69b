"""Asking the workspace's engine: a request's result (:func:`engine_result`), or None when
no engine answered (a caller then answers in process); a context block (``--format context``,
recall, briefing) only when it is framed as in process (:func:`framed`). Printing what the
engine answered for a command is the CLI's (:mod:`memcli.cli.via_engine`)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from memcli.errors import ExitCode, MemcliError

__all__ = ["EngineError", "engine_result", "framed"]

#: Seconds during which, after a caller gave up on the workspace's engine (it did not answer
#: in time), the next callers answer in process without asking it, unless a new one started.
BACKOFF_SECS = 30.0


class EngineError(MemcliError):
    """An error the engine reported for a request: its message, hint and exit code."""

    def __init__(self, message: str, hint: str | None, code: int) -> None:
        super().__init__(message, hint=hint)
        self.exit_code = ExitCode(code)


def engine_result(root: Path, op: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    """The result of ``op`` from the engine of the workspace at ``root``; None when no engine
    answered (or ``MEMCLI_ENGINE=off`` says to answer in process); its errors raised."""
    if os.environ.get("MEMCLI_ENGINE", "").lower() in ("off", "0", "no", "false"):
        return None
    from memcli.engine.client import DEFAULT_TIMEOUT, ask

    if _given_up_lately(root):
        return None
    timeout = float(os.environ.get("MEMCLI_ENGINE_TIMEOUT") or DEFAULT_TIMEOUT)
    answer = ask(root, op, payload, timeout=timeout)
    if answer is None or answer.get("mismatch"):
        return None
    if not answer.get("ok"):
        err = answer.get("error") or {}
        raise EngineError(str(err.get("message")), err.get("hint"), int(err.get("code", 3)))
    result: dict[str, Any] = answer["result"]
    if op in _FRAMED_OPS and not (isinstance(result, dict) and framed(result.get("text"))):
        return None  # not the block memcli frames: the hook answers in process
    return result


#: Ops whose answer is a context block for an agent (``{"text": block}``).
_FRAMED_OPS = ("recall", "briefing")


def framed(text: Any) -> bool:
    """Whether ``text`` is "" or one context block as :func:`memcli.search.context.render`
    frames it: a ``<<<BEGIN MEMORY m>>>`` line, a body under a ``## `` title, an
    ``<<<END MEMORY m>>>`` line, ``m`` the first 12 hex digits of the body's SHA-256. What an
    engine answers for a prompt goes to the agent only when it is (the same framing as in
    process, whoever answered)."""
    if text == "":
        return True
    if not isinstance(text, str):
        return False
    import re  # only a framed answer needs it

    found = re.fullmatch(
        r"<<<BEGIN MEMORY ([0-9a-f]{12})>>>\n(## [^\n]*\n.*)<<<END MEMORY \1>>>\n",
        text,
        re.DOTALL,
    )
    if found is None:
        return False
    from memcli.digest import sha256_hex

    return sha256_hex(found.group(2).encode())[:12] == found.group(1)


def _given_up_lately(root: Path) -> bool:
    """Whether a caller gave up on the engine that serves now less than
    :data:`BACKOFF_SECS` ago (a stopped or wedged engine then costs one call its timeout,
    not every call)."""
    from memcli.engine.paths import engine_files, failure_marker

    try:
        failed = os.lstat(failure_marker(root)).st_mtime
        started = engine_files(root)[0].stat().st_mtime  # the socket: made when it started
    except OSError:
        return False
    return failed >= started and time.time() - failed < BACKOFF_SECS
