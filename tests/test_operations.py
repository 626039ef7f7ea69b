# ruff: noqa: F811 - the tests take test_engine's fixtures by the names imported
"""The operations are declared once (memcli.operations): the engine answers exactly those
declared for it, the MCP server offers exactly those declared for MCP, with real processes
(an engine started by ``memcli serve``, the MCP SDK's own client against ``memcli mcp``)."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")  # memcli[mcp]; `make test` installs it

from mcp.client.session import ClientSession

import memcli.operations as operations
from memcli.agent.mcp_workspace import IN_PROCESS
from memcli.agents.base import READ_ONLY_TOOLS
from memcli.engine.engine import Engine
from memcli.enginelink import ask
from tests.conftest import Cli
from tests.test_engine import engine, run, ws  # noqa: F401 (engine and ws: fixtures)
from tests.test_mcp import session, text_of


def _requests(root: Path) -> int:
    info = json.loads(run(root, "serve", "--status", "--json").stdout)["engine"]
    return int(info["requests"])


def test_the_table_names_each_operation_once_with_its_types() -> None:
    names = [op.name for op in operations.OPERATIONS]
    assert len(names) == len(set(names))
    for op in operations.OPERATIONS:
        assert set(op.adapters) <= {operations.CLI, operations.ENGINE, operations.MCP}
        assert hasattr(op.request, "_fields"), op  # a NamedTuple: its fields are the payload
        assert hasattr(op.result, "__annotations__"), op
        request = op.request(*[f"x{i}" for i in range(_required(op.request))])
        assert operations.decoded(op, json.loads(json.dumps(operations.payload(request)))) == (
            request
        )


def _required(request: type) -> int:
    return sum(
        1
        for p in inspect.signature(request).parameters.values()
        if p.default is inspect.Parameter.empty
    )


def test_every_request_handler_of_the_engine_is_a_declared_operation() -> None:
    """A handler of a request type of the table (``_<op>(self, asked: <Request>)``) is
    there because the table declares the operation for the engine, with that request."""
    requests = {
        t.__name__
        for t in vars(operations).values()
        if isinstance(t, type) and hasattr(t, "_fields")
    }
    handlers = {}
    for name, member in vars(Engine).items():
        params = list(inspect.signature(member).parameters.values())[1:] if callable(member) else []
        if name.startswith("_") and len(params) == 1 and str(params[0].annotation) in requests:
            handlers[name[1:]] = str(params[0].annotation)
    declared = {op.name: op.request.__name__ for op in operations.exposed(operations.ENGINE)}
    assert handlers == declared


@pytest.mark.slow
def test_the_mcp_tools_are_the_operations_declared_for_mcp(ws: Path) -> None:
    """The tools a client lists (search: the context operation with a search request's
    parameters) and which of them only read, as the table declares them; each answered in
    process when no engine serves."""

    async def body(s: ClientSession) -> Any:
        return (await s.list_tools()).tools

    tools = {t.name: t for t in session(ws, body)}
    mcp = {op.name: op for op in operations.exposed(operations.MCP)}
    assert set(tools) == {"search", *mcp}
    for name, op in mcp.items():
        assert tools[name].annotations.read_only_hint is op.read_only, name
    assert tools["search"].annotations.read_only_hint is True
    assert set(READ_ONLY_TOOLS) == {n for n, t in tools.items() if t.annotations.read_only_hint}
    assert set(IN_PROCESS) == {n for n in mcp if operations.ENGINE in mcp[n].adapters}


@pytest.mark.slow
def test_the_engine_answers_each_declared_operation_and_no_other(engine: Path) -> None:
    asked = {
        "search": operations.SearchAsk("valkey", {}),
        "context": operations.ContextAsk("valkey"),
        "get": operations.GetAsk("memory"),
        "files": operations.NoArgs(),
        "status": operations.NoArgs(),
        "recall": operations.RecallAsk("what do we use for the session cache?"),
        "briefing": operations.NoArgs(),
        "file_context": operations.FileContextAsk(("memory/notes.md",)),
        "confirm": operations.FactAsk("nothing-like-this"),
    }
    for op in operations.exposed(operations.ENGINE):
        if op.name in asked:
            answer = ask(engine, op.name, operations.payload(asked[op.name]), timeout=30)
            assert answer is not None and "mismatch" not in answer, (op.name, answer)
    assert {op.name for op in operations.exposed(operations.ENGINE)} >= set(asked)
    # an operation the table does not declare for the engine, or a field its request lacks
    assert ask(engine, "flush", {"transcript": "x"}, timeout=30) is None
    assert ask(engine, "purge", {}, timeout=30) is None
    assert ask(engine, "get", {"location": "memory", "sideways": 1}, timeout=30) is None


@pytest.mark.slow
def test_the_mcp_server_answers_through_the_workspaces_engine(engine: Path) -> None:
    """One warm process per workspace: with an engine serving it, each tool the table
    declares for the engine is answered there; what it answers reads as in process."""
    before = _requests(engine)

    async def body(s: ClientSession) -> dict[str, str]:
        out = {}
        added = await s.call_tool("add", {"text": "The release train leaves on Thursdays."})
        out["add"] = text_of(added)
        out["search"] = text_of(await s.call_tool("search", {"query": "release train"}))
        out["context"] = text_of(await s.call_tool("context", {"query": "session cache"}))
        out["status"] = text_of(await s.call_tool("status", {}))
        blank = await s.call_tool("forget", {"fact": "memory/x.md:1", "reason": " "})
        out["error"] = text_of(blank) if blank.is_error else ""
        return out

    said = session(engine, body)
    assert said["add"].startswith("remembered as fact ")
    assert "release train leaves on Thursdays" in said["search"]
    assert "Fact ids (for supersede, forget, confirm):" in said["search"]
    assert "Valkey" in said["context"]
    assert '"pid"' in said["status"] and '"watching"' in said["status"]  # the engine's status
    # the engine's error, worded with the tool's parameter
    assert said["error"].endswith(": forget needs a reason (reason: why it is wrong)")
    # add, search, context and forget went there (a status leaves the count as it is)
    assert _requests(engine) - before == 4


@pytest.mark.slow
def test_the_context_answer_carries_each_facts_state_from_the_search(
    engine: Path, cli: Cli
) -> None:
    """The state of each fact a hit shows comes from the search (``Hit.id_states``, beside
    ``ids``), not from parsing the snippet's text again; in process and from the engine the
    same answer."""
    from memcli.memory import Memory

    old = cli("search", "session cache", "--json").json()["results"][0]["ids"][0]
    assert cli("supersede", old, "Use Valkey 8 for the session cache.").exit_code == 0
    asked = operations.ContextAsk("session cache", {"include_inactive": True})
    with Memory.open(str(engine)) as mem:
        answer = operations.context_of(mem, asked)
    served = ask(engine, "context", operations.payload(asked), timeout=30)
    assert served is not None and served["result"] == answer
    states = {i: s for h in answer["hits"] for i, s in zip(h["ids"], h["states"], strict=True)}
    assert states[old] == "superseded"
    assert "active" in states.values()
    assert all(len(h["ids"]) == len(h["states"]) for h in answer["hits"])
