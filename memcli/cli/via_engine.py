"""Commands the workspace's engine answered, printed exactly as in process prints them:
search (by the same output forms, :mod:`memcli.cli.search_output`) and add; get, files and
status as data the commands print themselves (:func:`engine_answer`). Each returns None (or
False) when no engine answered: the command then runs in process."""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from memcli.cli import search_output
from memcli.enginelink import engine_result, framed
from memcli.errors import MemcliError

if TYPE_CHECKING:  # types only: the fast path imports this module
    from memcli.cli.runtime import State
    from memcli.cli.search_args import SearchArgs
    from memcli.search.options import SearchRequest

__all__ = ["add_via_engine", "engine_answer", "search_via_engine"]


def _ask(st: State, op: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    """The engine's result for ``op`` in the command's workspace (:func:`engine_result`)."""
    from memcli.notes.workspace import find_workspace

    try:
        root = find_workspace(st.workspace).root
    except MemcliError:
        return None  # the in-process command reports it
    return engine_result(root, op, payload)


def add_via_engine(st: State, kwargs: dict[str, Any], as_json: bool) -> bool:
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


def engine_answer(st: State, op: str, args: dict[str, Any]) -> dict[str, Any] | None:
    """What the workspace's engine answered to ``op`` (``get``, ``files``, ``status``), its
    notices printed as in process; None: the caller answers in process."""
    got = _ask(st, op, args)
    if got is not None:
        _notices(st, got)
    return got


def _notices(st: State, got: dict[str, Any]) -> None:
    for notice in got.get("notices", []):
        st.out.warn(notice)


def search_via_engine(
    st: State, query: str, request: SearchRequest, fmt: str, args: SearchArgs
) -> int | None:
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
    _notices(st, got)
    return search_output.show(st.out, got, fmt, args)
