"""A search request is declared once (memcli.search.request_fields): the request, its checks
and the CLI's options all come from that one tuple."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memcli.cli.search_args import OPTIONS, SearchArgs
from memcli.errors import BadInput
from memcli.search.options import Filters, SearchRequest
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
    """The error names the field; the CLI words it as the option's names."""
    from memcli.cli.runtime import flag_name

    with pytest.raises(BadInput) as got:
        SearchRequest(**given).checked()
    [field] = given
    assert got.value.fields == (field,) and got.value.message.startswith(f"{field} must be")
    assert got.value.worded(flag_name)[0].startswith(f"{named} must be")


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


def test_each_field_reaches_its_search_option_or_filter(workspace: Path) -> None:
    from memcli.memory import Memory

    values: dict[str, Any] = {
        "limit": 7,
        "min_score": 0.2,
        "source": ["ns"],
        "type": ["decision"],
        "tag": ["infra"],
        "since": "2026-01-02",
        "until": "2026-02-03",
        "path": "memory/*",
        "decay": True,
        "strategy": "keyword",
        "mmr": True,
        "mmr_lambda": 0.4,
        "include_inactive": True,
        "explain": True,
    }
    assert set(values) == {f.name for f in REQUEST_FIELDS}
    with Memory.open(workspace) as mem:
        opts = mem.search_options(SearchRequest(**values))
        plain = mem.search_options(SearchRequest())
    assert opts.filters == Filters(
        ("ns",), ("decision",), ("infra",), "2026-01-02", "2026-02-03", "memory/*", True
    )
    assert (opts.limit, opts.min_score, opts.decay, opts.strategy) == (7, 0.2, True, "keyword")
    assert (opts.mmr, opts.mmr_lambda, opts.explain) == (True, 0.4, True)
    for field in REQUEST_FIELDS:
        name = field.filter or field.name
        where = opts.filters if field.filter else opts
        want = tuple(values[field.name]) if field.kind == "list" else values[field.name]
        assert getattr(where, name) == want, field.name
        assert getattr(plain.filters if field.filter else plain, name) != want, field.name
