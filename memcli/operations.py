"""The operations the adapters expose, declared once: each with its name, its typed request
and result, whether it only reads, and which adapters offer it (the CLI, the workspace's
engine, the MCP server).

The engine answers exactly the operations declared for it, each request decoded into its
type (:func:`decoded`; a field it does not know: the caller answers in process) and each
write on the engine's one writing thread; the CLI and the MCP server send requests of these
types (:func:`payload`); the MCP server's tools are the operations declared for it, and its
read-only ones those declared read-only. ``tests/test_operations.py`` fails when an engine
request or an MCP tool is not in this table, or the table lists one they do not offer.

The requests are NamedTuples and the results TypedDicts (the JSON an engine sends): cheap to
import on a search that the engine answers, which never imports the service.
"""

# No `from __future__ import annotations`: NamedTuple and TypedDict read their annotations.
from typing import Any, NamedTuple, TypedDict

__all__ = [
    "CLI",
    "ENGINE",
    "MCP",
    "OPERATIONS",
    "Operation",
    "by_name",
    "context_of",
    "decoded",
    "exposed",
    "payload",
]

CLI, ENGINE, MCP = "cli", "engine", "mcp"


# -- requests ---------------------------------------------------------------------------------
class SearchAsk(NamedTuple):
    """A search: the query, the request's declared fields
    (:meth:`memcli.search.options.SearchRequest.payload`), the output form and, for
    ``context``, the block's token budget."""

    query: str
    request: dict[str, Any]
    fmt: str = "json"
    max_tokens: int | None = None


class ContextAsk(NamedTuple):
    """The context block a model reads for a query (the MCP ``search`` and ``context``
    tools); ``request``: a search request's payload, None: the settings' own."""

    query: str
    request: dict[str, Any] | None = None
    max_tokens: int | None = None


class AddAsk(NamedTuple):
    """A fact to add, with ``Memory.add``'s options."""

    text: str
    to: str | None = None
    evergreen: bool = False
    namespace: str | None = None
    type: str | None = None
    tags: tuple[str, ...] = ()
    redact: bool = True
    commit: bool = False
    expires: str | None = None


class GetAsk(NamedTuple):
    """Lines by citation; ``cwd``: the folder a relative path is read from (None: the
    workspace)."""

    location: str
    cwd: str | None = None


class NoArgs(NamedTuple):
    """An operation that takes nothing (files, status, briefing)."""


class RecallAsk(NamedTuple):
    """An agent's prompt, and its session (what recall gave it before)."""

    prompt: str
    session: str | None = None


class FileContextAsk(NamedTuple):
    """The files a tool call of an agent read or edited, its session (what it was given
    before) and the folder relative paths are read from."""

    paths: tuple[str, ...]
    session: str | None = None
    cwd: str | None = None


class FactAsk(NamedTuple):
    """One fact, by id or PATH:LINE (confirm)."""

    fact: str


class SupersedeAsk(NamedTuple):
    fact: str
    text: str


class ForgetAsk(NamedTuple):
    fact: str
    reason: str


class FlushAsk(NamedTuple):
    """A conversation's text, or the path of a conversation file."""

    transcript: str = ""
    path: str = ""


# -- results: the JSON an engine answers ------------------------------------------------------
class Noticed(TypedDict):
    """The warnings an untrusted ``memcli.toml`` gives in process, printed the same."""

    notices: list[str]


class SearchAnswer(Noticed, total=False):
    """``SearchResult.view()`` (``result``, ``scores``, ``stems``) or ``Context.view()``
    (``context``)."""

    result: dict[str, Any]
    scores: list[float]
    stems: list[list[str] | None]
    context: dict[str, Any]


class AddAnswer(Noticed):
    result: dict[str, Any]  # AddResult.as_dict()
    warnings: list[str]
    shown: dict[str, Any]  # what the text form prints besides: the entry, the commit


class GetAnswer(Noticed):
    result: dict[str, Any]  # GetResult.as_dict()
    lines: Any


class FilesAnswer(Noticed):
    result: list[dict[str, Any]]
    warnings: list[str]


class StatusAnswer(Noticed):
    result: dict[str, Any]


class BlockAnswer(TypedDict):
    """A framed context block for an agent's hook ("" when nothing is recalled)."""

    text: str


class GivenAnswer(BlockAnswer):
    """A framed context block for an agent's hook and the text of each entry it quotes: the
    engine records none of them as given to the session, the hook does once it has the
    answer (a hook that stopped waiting for it answers in process and gives them itself)."""

    given: list[str]


class HitCited(TypedDict):
    """A hit of a context block, as a model is told of it: its lines, the ids of the facts
    it shows with each one's state ("" active, superseded, retracted, ...)."""

    path: str
    start_line: int
    end_line: int
    ids: list[str]
    states: list[str]
    flags: list[str]


class ContextAnswer(TypedDict):
    """A context block as the MCP tools word it: the block, the hits it cites, what the
    search warned about, and why nothing fit (``overflow``)."""

    query: str
    text: str
    found: bool
    hits: list[HitCited]
    sections: list[dict[str, Any]]
    left_out: int
    warnings: list[str]
    overflow: bool
    budget: int
    stale: bool | None


class Changed(TypedDict):
    """A lifecycle change or a flush: the result's ``as_dict()``."""

    result: dict[str, Any]


# -- the table ---------------------------------------------------------------------------------
class Operation(NamedTuple):
    """One operation: its request and result types, whether it only reads the workspace,
    and which adapters expose it."""

    name: str
    request: type
    result: type
    read_only: bool
    adapters: tuple[str, ...]


#: Every operation an adapter exposes over a process boundary (the engine's socket, MCP),
#: and the CLI command that does the same.
OPERATIONS: tuple[Operation, ...] = (
    Operation("search", SearchAsk, SearchAnswer, True, (CLI, ENGINE)),
    Operation("context", ContextAsk, ContextAnswer, True, (ENGINE, MCP)),
    Operation("get", GetAsk, GetAnswer, True, (CLI, ENGINE, MCP)),
    Operation("files", NoArgs, FilesAnswer, True, (CLI, ENGINE)),
    Operation("status", NoArgs, StatusAnswer, True, (CLI, ENGINE, MCP)),
    Operation("recall", RecallAsk, GivenAnswer, True, (ENGINE,)),
    Operation("briefing", NoArgs, BlockAnswer, True, (ENGINE,)),
    Operation("file_context", FileContextAsk, GivenAnswer, True, (ENGINE,)),
    Operation("add", AddAsk, AddAnswer, False, (CLI, ENGINE, MCP)),
    Operation("supersede", SupersedeAsk, Changed, False, (CLI, ENGINE, MCP)),
    Operation("forget", ForgetAsk, Changed, False, (CLI, ENGINE, MCP)),
    Operation("confirm", FactAsk, Changed, False, (CLI, ENGINE, MCP)),
    Operation("flush", FlushAsk, Changed, False, (CLI, MCP)),
)

_BY_NAME = {op.name: op for op in OPERATIONS}


def by_name(name: str) -> Operation:
    """The operation called ``name`` (KeyError: none is)."""
    return _BY_NAME[name]


def exposed(adapter: str) -> tuple[Operation, ...]:
    """The operations ``adapter`` (``cli``, ``engine``, ``mcp``) exposes."""
    return tuple(op for op in OPERATIONS if adapter in op.adapters)


def payload(request: Any) -> dict[str, Any]:
    """A request as the JSON an engine reads (a NamedTuple of the table's)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in request._asdict().items()}


def decoded(op: Operation, args: dict[str, Any]) -> Any:
    """``args`` as ``op``'s request (TypeError: a field it does not have, or a missing one);
    lists become the tuples its fields hold."""
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in args.items()}
    return op.request(**values)


def context_of(mem: Any, asked: ContextAsk) -> ContextAnswer:
    """The :class:`ContextAnswer` of ``asked`` on the workspace's Memory ``mem``: the engine's
    and the MCP server's in process alike."""
    from memcli.search.options import SearchRequest

    request = SearchRequest.from_payload(asked.request) if asked.request is not None else None
    ctx = mem.context(asked.query, mem.search_options(request), asked.max_tokens)
    result, block = ctx.result, ctx.block
    return {
        "query": result.query,
        "text": block.text,
        "found": bool(result.hits),
        "hits": [
            {
                "path": h.path,
                "start_line": h.start_line,
                "end_line": h.end_line,
                "ids": list(h.ids),
                "states": list(h.id_states),
                "flags": list(h.flags),
            }
            for h in result.hits
        ],
        "sections": [s.as_dict() for s in block.sections],
        "left_out": block.left_out,
        "warnings": list(result.warnings),
        "overflow": ctx.overflow is not None,
        "budget": ctx.budget,
        "stale": result.stale,
    }
