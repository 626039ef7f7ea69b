"""Commands the workspace's engine answered, printed exactly as in process prints them:
search (by the same output forms, :mod:`memcli.cli.search_output`) and add; get, files and
status as data the commands print themselves (:func:`engine_answer`). Each sends a request of
the operations' table (:mod:`memcli.operations`) and returns None (or False) when no engine
answered: the command then runs in process."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import memcli.cli.search_output as search_output
import memcli.operations as operations
from memcli.enginelink import engine_result, framed
from memcli.errors import MemcliError

if TYPE_CHECKING:  # types only: the fast path imports this module
    from memcli.cli.runtime import State
    from memcli.cli.search_args import SearchArgs
    from memcli.search.options import SearchRequest

__all__ = ["add_via_engine", "engine_answer", "search_via_engine"]


class Added(NamedTuple):
    """What ``memcli add`` prints of a fact the engine added (:func:`render.add_result`)."""

    added: bool
    path: str
    line: int
    entry: str
    duplicate_of: str | None
    redactions: list[str]
    commit: str | None


def _ask(st: State, op: str, asked: Any) -> dict[str, Any] | None:
    """The engine's result for ``op`` (its request ``asked``) in the command's workspace
    (:func:`engine_result`)."""
    from memcli.notes.workspace import find_workspace

    try:
        root = find_workspace(st.workspace).root
    except MemcliError:
        return None  # the in-process command reports it
    return engine_result(root, op, operations.payload(asked))


def add_via_engine(st: State, asked: operations.AddAsk, as_json: bool) -> bool:
    """Whether the workspace's engine added the fact (output printed as ``memcli add``
    prints it); False: the caller adds in process."""
    got = _ask(st, "add", asked)
    if got is None:
        return False
    _notices(st, got)
    st.out.warnings(got["warnings"])
    data = got["result"]
    if as_json:
        st.out.json(data)
    else:
        import memcli.cli.render as render  # the renderer: only for what is printed

        shown = got["shown"]
        render.add_result(
            st.out,
            Added(
                data["added"],
                data["path"],
                data["line"],
                shown["entry"],
                data["duplicate_of"],
                data["redactions"],
                shown["commit"],
            ),
        )
    return True


def engine_answer(st: State, op: str, asked: Any) -> dict[str, Any] | None:
    """What the workspace's engine answered to ``op`` (``get``, ``files``, ``status``; its
    request ``asked``), its notices printed as in process; None: the caller answers in
    process."""
    got = _ask(st, op, asked)
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
    asked = operations.SearchAsk(query, request.payload(), fmt, args.max_tokens)
    got = _ask(st, "search", asked)
    if got is None:
        return None
    ctx = got.get("context")
    if fmt == "context" and not (isinstance(ctx, dict) and framed(ctx.get("text"))):
        return None  # not the block memcli frames: the caller searches in process
    _notices(st, got)
    return search_output.show(st.out, got, fmt, args)
