"""Commands answered by the engine: search and add printed exactly as in process prints them;
get, files and status as data the commands print themselves (:func:`engine_answer`); and, for
an agent's hooks, recall and briefing (:func:`engine_result`). A context block from an engine
(``--format context``, recall, briefing) is used only when it is framed as in process
(:func:`framed`); otherwise the caller answers in process."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from memcli.errors import ExitCode, MemcliError

__all__ = ["add_via_engine", "engine_answer", "engine_result", "framed", "search_via_engine"]

#: Seconds during which, after a caller gave up on the workspace's engine (it did not answer
#: in time), the next callers answer in process without asking it, unless a new one started.
BACKOFF_SECS = 30.0


class EngineError(MemcliError):
    """An error the engine reported for a request: its message, hint and exit code."""

    def __init__(self, message: str, hint: str | None, code: int) -> None:
        super().__init__(message, hint=hint)
        self.exit_code = ExitCode(code)


def _ask(st: Any, op: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    """The engine's result for ``op`` in the command's workspace (:func:`engine_result`)."""
    from memcli.notes.workspace import find_workspace

    try:
        root = find_workspace(st.workspace).root
    except MemcliError:
        return None  # the in-process command reports it
    return engine_result(root, op, payload)


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


def add_via_engine(st: Any, kwargs: dict[str, Any], as_json: bool) -> bool:
    """Whether the workspace's engine added the fact (output printed as ``memcli add``
    prints it); False: the caller adds in process."""
    got = _ask(st, "add", kwargs)
    if got is None:
        return False
    _notices(st, got)
    st.out.warnings(got["warnings"])
    data = got["result"]
    if as_json:
        st.out.json(data)
    else:
        from memcli.cli import render

        render.add_result(st.out, SimpleNamespace(**{**data, **got["shown"]}))
    return True


def engine_answer(st: Any, op: str, args: dict[str, Any]) -> dict[str, Any] | None:
    """What the workspace's engine answered to ``op`` (``get``, ``files``, ``status``), its
    notices printed as in process; None: the caller answers in process."""
    got = _ask(st, op, args)
    if got is not None:
        _notices(st, got)
    return got


def _notices(st: Any, got: dict[str, Any]) -> None:
    for notice in got.get("notices", []):
        st.out.warn(notice)


def search_via_engine(st: Any, query: str, request: Any, fmt: str, args: Any) -> int | None:
    """The exit code of a search the workspace's engine answered (output printed), or None
    when no engine answered (the caller searches in process)."""
    payload = {
        "query": query,
        "request": {
            k: list(v) if isinstance(v, tuple) else v for k, v in request._asdict().items()
        },
        "fmt": fmt,
        "max_tokens": args.max_tokens,
    }
    got = _ask(st, "search", payload)
    if got is None:
        return None
    ctx = got.get("context")
    if fmt == "context" and not (isinstance(ctx, dict) and framed(ctx.get("text"))):
        return None  # not the block memcli frames: the caller searches in process
    return _print(st, got, fmt, args)


def _print(st: Any, got: dict[str, Any], fmt: str, args: Any) -> int:
    out = st.out
    _notices(st, got)
    if fmt == "context":
        ctx = got["context"]
        out.warnings(ctx["warnings"])
        if ctx["overflow"]:
            out.warn(ctx["overflow"])
            return int(ExitCode.NOT_FOUND)
        sys.stdout.write(ctx["text"])
        return 0 if ctx["found"] else int(ExitCode.NOT_FOUND)
    data = got["result"]
    found = 0 if data["results"] else int(ExitCode.NOT_FOUND)
    if fmt == "json":
        out.json(data)
        return found
    out.warnings(data["warnings"])
    if args.jsonl:
        for hit in data["results"]:
            out.json(hit)
    elif args.files_only:
        for p in dict.fromkeys(h["path"] for h in data["results"]):
            out.line(p)
    else:
        from memcli.cli import render

        hits = [
            SimpleNamespace(
                **{"explain": None, **h, "score": score},
                terms=SimpleNamespace(stems=stems) if stems is not None else None,
            )
            for h, score, stems in zip(data["results"], got["scores"], got["stems"], strict=True)
        ]
        table = args.fmt is None and out.rich_terminal  # as memcli.cli.searching decides
        render.search_result(out, SimpleNamespace(**{**data, "hits": hits}), table=table)
    return found
