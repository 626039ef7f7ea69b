"""A search request is declared once (memcli.search.request_fields): the request, its checks
and the CLI's options all come from that one tuple."""

from __future__ import annotations

import json

import pytest

from memcli.cli.search_args import OPTIONS, SearchArgs
from memcli.errors import BadInput
from memcli.search.options import SearchRequest
from memcli.search.request_fields import REQUEST_FIELDS


def test_the_request_holds_exactly_the_declared_fields() -> None:
    assert SearchRequest._fields == tuple(f.name for f in REQUEST_FIELDS)


def test_the_cli_offers_each_field_with_its_declared_names_and_help() -> None:
    by_names = {o.names: o for o in OPTIONS}
    for f in REQUEST_FIELDS:
        option = by_names[f.cli]
        assert (option.kind, option.help) == (f.kind, f.help)
        assert option.field in SearchArgs._fields


def test_cli_values_reach_the_request_field_by_field() -> None:
    args = SearchArgs(limit=3, type_=("decision",), tag=("db",), mmr=False, explain=True)
    request = args.request()
    assert (request.limit, request.type, request.tag) == (3, ["decision"], ["db"])
    assert (request.mmr, request.explain, request.strategy) == (False, True, None)


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ({"limit": 0}, "-n/--limit"),
        ({"min_score": 2.0}, "--min-score"),
        ({"mmr_lambda": -1.0}, "--mmr-lambda"),
    ],
)
def test_a_bounded_field_is_checked_against_its_setting(given: dict, named: str) -> None:
    with pytest.raises(BadInput, match=named):
        SearchRequest(**given).checked()


def test_the_engine_payload_is_the_declared_fields_as_json() -> None:
    request = SearchArgs(limit=3, tag=("db",), since="2026-01-02", mmr=False).request()
    payload = request.payload()
    assert list(payload) == [f.name for f in REQUEST_FIELDS]
    assert json.loads(json.dumps(payload)) == payload
    assert SearchRequest.from_payload(payload) == request
    assert SearchRequest.from_payload({"limit": 2}) == SearchRequest(limit=2)


def test_the_engine_refuses_a_payload_field_not_declared() -> None:
    with pytest.raises(ValueError, match="colour"):
        SearchRequest.from_payload({"limit": 2, "colour": "red"})
