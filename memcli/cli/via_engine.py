"""Commands the workspace's engine answered, printed exactly as in process prints them:
search and add; get, files and status as data the commands print themselves
(:func:`engine_answer`). Each returns None (or False) when no engine answered: the command then
runs in process."""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

from memcli.enginelink import engine_result, framed
from memcli.errors import ExitCode, MemcliError

__all__ = ["add_via_engine", "engine_answer", "search_via_engine"]


def _ask(st: Any, op: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    """The engine's result for ``op`` in the command's workspace (:func:`engine_result`)."""
    from memcli.notes.workspace import find_workspace

    try:
        root = find_workspace(st.workspace).root
    except MemcliError:
        return None  # the in-process command reports it
    return engine_result(root, op, payload)


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
        from memcli.cli import render  # the renderer: only for what is printed

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
        "request": request.payload(),
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
