"""The MCP search tool's parameters come from the search request's declaration
(memcli.search.request_fields): their names, descriptions, types and bounds, and the request a
call makes (memcli.agent.mcp_search)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("mcp")  # memcli[mcp]; `make test` installs it

from memcli.agent import mcp_server
from memcli.agent.mcp_search import parameter_name, request_of
from memcli.config.registry import lookup
from memcli.errors import BadInput
from memcli.search.options import SearchRequest
from memcli.search.request_fields import MCP_ORDER, REQUEST_FIELDS


@pytest.fixture(scope="module")
def schema() -> Any:
    engine = mcp_server.Engine(None)
    try:
        tool = mcp_server.build_server(engine)._tool_manager.get_tool("search")
        assert tool is not None
        return tool.parameters
    finally:
        engine.close()


def test_the_tool_offers_the_declared_fields_with_their_descriptions(schema: Any) -> None:
    declared = {name: about for f in REQUEST_FIELDS for name, about in f.mcp}
    props = schema["properties"]
    assert list(props) == ["query", *MCP_ORDER]
    assert set(MCP_ORDER) == set(declared)
    assert {n: p["description"] for n, p in props.items() if n != "query"} == declared
    assert schema["required"] == ["query"]


def test_bounds_and_choices_are_the_settings(schema: Any) -> None:
    props = schema["properties"]
    limit = lookup("search.limit")
    number = props["limit"]["anyOf"][0]
    assert (number["minimum"], number["maximum"]) == (limit.low, limit.high)
    assert props["mode"]["anyOf"][0]["enum"] == list(lookup("search.strategy").choices)


def test_each_offered_field_reaches_the_request() -> None:
    given = {
        "limit": 3,
        "type": "decision",
        "tag": "db",
        "tags": ["infra", "db"],
        "namespace": "ops",
        "since": "2026-01-02",
        "mode": "keyword",
        "include_inactive": True,
    }
    assert request_of(given) == SearchRequest(
        limit=3,
        type=("decision",),
        tag=("db", "infra"),
        source=("ops",),
        since="2026-01-02",
        strategy="keyword",
        include_inactive=True,
    )
    offered = {f.name for f in REQUEST_FIELDS if f.mcp}
    unset = request_of(dict.fromkeys(MCP_ORDER))
    assert all(unset._asdict()[n] in (None, (), False) for n in offered)
    assert request_of({"namespace": ""}).source == ()


def test_errors_name_an_offered_field_as_its_parameter() -> None:
    """An error about a request's field names the search tool's parameter that sets it."""
    for f in REQUEST_FIELDS:
        if f.mcp:
            exc = BadInput("{" + f.name + "} is wrong", fields=(f.name,))
            assert exc.worded(parameter_name) == (f"{f.mcp[0][0]} is wrong", None)
    assert parameter_name("max_tokens") == "max_tokens"
