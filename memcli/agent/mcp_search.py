"""The MCP ``search`` tool's parameters, made from the search request's declaration
(:data:`~memcli.search.request_fields.REQUEST_FIELDS`): the fields it offers a model, under
their MCP names and descriptions, typed by their kind, bounded and limited to the choices of
their setting; and the request a call's arguments make."""

from __future__ import annotations

import inspect
from typing import Annotated, Any, Literal

from pydantic import Field

from memcli.config.registry import Setting, lookup
from memcli.search.options import SETTING_OF, SearchRequest
from memcli.search.request_fields import MCP_ORDER, REQUEST_FIELDS, RequestField

__all__ = ["Strings", "parameter_name", "parameters", "request_of", "strings"]

#: A parameter that takes a string or a list of strings.
Strings = str | list[str] | None


def _setting(field: RequestField) -> Setting | None:
    """The setting that bounds ``field``'s values: its own, else the search option's of its
    name (``strategy``: ``search.strategy``'s choices)."""
    key = field.setting or SETTING_OF.get(field.name)
    return lookup(key) if key else None


def _type(field: RequestField) -> tuple[Any, Any]:
    """The type of a parameter that sets ``field``, and its default."""
    kind = field.mcp_kind or field.kind
    if kind == "flag":
        return bool, False
    if kind == "list":
        return Strings, None
    if kind == "switch":
        return bool | None, None
    setting = _setting(field)
    if kind == "str" and setting is not None and setting.choices:
        return Literal[setting.choices] | None, None
    one: Any = {"int": int, "float": float, "str": str}[kind]
    return one | None, None


def _bounds(field: RequestField) -> dict[str, Any]:
    """The bounds of a number parameter, its setting's (``limit``: 1 to 1000)."""
    setting = _setting(field)
    if field.kind not in ("int", "float") or setting is None:
        return {}
    given = {"ge": setting.low, "le": setting.high, "gt": setting.above}
    return {k: v for k, v in given.items() if v is not None}


def _offered() -> dict[str, tuple[RequestField, str]]:
    """Each parameter of the tool: the field it sets and its description."""
    return {name: (f, about) for f in REQUEST_FIELDS for name, about in f.mcp}


def parameters() -> list[inspect.Parameter]:
    """The search tool's parameters after ``query``, in :data:`MCP_ORDER`."""
    offered = _offered()
    out = []
    for name in MCP_ORDER:
        field, about = offered[name]
        kind, default = _type(field)
        annotation: Any = Annotated[kind, Field(description=about, **_bounds(field))]
        place = inspect.Parameter.POSITIONAL_OR_KEYWORD
        out.append(inspect.Parameter(name, place, default=default, annotation=annotation))
    return out


def strings(*values: str | list[str] | None) -> tuple[str, ...]:
    """One list from parameters that take a string or a list of strings (``tag`` and
    ``tags`` alike), in order, without repeats."""
    out: list[str] = []
    for value in values:
        for item in [value] if isinstance(value, str) else value or []:
            if item not in out:
                out.append(item)
    return tuple(out)


def request_of(given: dict[str, Any]) -> SearchRequest:
    """The request that the search tool's arguments ``given`` make (by parameter name)."""
    values: dict[str, Any] = {}
    for field in REQUEST_FIELDS:
        if not field.mcp:
            continue
        got = [given.get(name) for name, _ in field.mcp]
        if field.kind != "list":
            values[field.name] = got[0]
        elif field.mcp_kind == "str":  # one value: a one-item list
            values[field.name] = (got[0],) if got[0] else ()
        else:
            values[field.name] = strings(*got)
    return SearchRequest(**values)


def parameter_name(field: str) -> str:
    """How the MCP tools name a request's field in an error (:meth:`MemcliError.worded`):
    the search tool's parameter that sets it (``source``: ``namespace``), else the field's
    own name, which is the parameter's of every other tool."""
    for declared in REQUEST_FIELDS:
        if declared.name == field and declared.mcp:
            return declared.mcp[0][0]
    return field
