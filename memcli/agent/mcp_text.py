"""What a model reads from memcli's MCP tools: text only, worded for a model. A context
block (:class:`memcli.operations.ContextAnswer`: the framed, quoted block ``memcli search
--format context`` prints) followed by the ids of the facts it cites with their states, the
lines ``get`` read in the same frame, and arguments that fail validation explained in one
line by parameter name (never a command-line flag, never the SDK's validation report)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from memcli.operations import ContextAnswer, HitCited

__all__ = ["context_text", "explain_invalid", "lines_text", "one_line"]


def one_line(text: str) -> str:
    return " ".join(text.split())


def _bounds(spec: dict[str, Any]) -> tuple[Any, Any]:
    """(minimum, maximum) of a parameter's JSON schema (either may be None)."""
    for option in [spec, *spec.get("anyOf", [])]:
        if "minimum" in option or "maximum" in option:
            return option.get("minimum"), option.get("maximum")
    return None, None


def explain_invalid(exc: ValidationError, schema: dict[str, Any] | None) -> str:
    """One line saying what is wrong with a call's arguments, by parameter name: what a
    model needs to call again, without pydantic's report (its types and links)."""
    props = (schema or {}).get("properties", {})
    said: list[str] = []
    for err in exc.errors():
        names = [str(p) for p in err["loc"] if isinstance(p, str) and p in props]
        name = names[0] if names else ".".join(str(p) for p in err["loc"]) or "arguments"
        kind = err["type"]
        if kind == "missing":
            text = f"{name} is required"
        elif kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
            low, high = _bounds(props.get(name, {}))
            if low is not None and high is not None:
                text = f"{name} must be between {low} and {high}"
            elif low is not None:
                text = f"{name} must be at least {low}"
            else:
                text = f"{name} must be at most {high}"
        elif kind == "literal_error":
            text = f"{name} must be one of {err.get('ctx', {}).get('expected', '')}"
        elif kind.startswith("int_"):
            text = f"{name} must be a whole number"
        elif kind.startswith("bool_"):
            text = f"{name} must be true or false"
        elif kind in ("string_type", "list_type") or kind.endswith("_type"):
            text = f"{name} must be {_expected(props.get(name, {}))}"
        else:
            text = f"{name}: {err['msg']}"
        if text not in said:
            said.append(text)
    return one_line("; ".join(said) or "invalid arguments")


def _expected(spec: dict[str, Any]) -> str:
    kinds = {o.get("type") for o in [spec, *spec.get("anyOf", [])]} - {None, "null"}
    if kinds == {"string", "array"}:
        return "a string or a list of strings"
    return {"string": "a string", "array": "a list of strings", "integer": "a whole number"}.get(
        next(iter(kinds), ""), "of another type"
    )


def context_text(ctx: ContextAnswer) -> str:
    """The framed context block of a search, then the ids of the facts it cites (for
    supersede, forget and confirm) with each one's state, and what the search warned about."""
    if not ctx["found"]:
        out = f"No memories match {ctx['query']!r}.\n"
    else:
        out = ctx["text"]
        ids = []
        for hit in ctx["hits"]:
            shown = [
                s
                for s in ctx["sections"]
                if s["path"] == hit["path"]
                and s["start_line"] <= hit["end_line"]
                and hit["start_line"] <= s["end_line"]
            ]
            if not shown or not hit["ids"]:
                continue
            cited = f"{shown[0]['path']}:{shown[0]['start_line']}-{shown[0]['end_line']}"
            ids.append(f"`{cited}` {_marked_ids(hit)}")
        if ids:
            out += "Fact ids (for supersede, forget, confirm): " + "; ".join(ids) + "\n"
        if ctx["left_out"]:
            out += f"{ctx['left_out']} more result(s) did not fit in max_tokens.\n"
    notes = list(ctx["warnings"])
    if ctx["overflow"]:
        notes.append(f"no result fits in {ctx['budget']} tokens; raise max_tokens")
    if ctx["stale"]:
        notes.append("the index may miss the latest edits (stale)")
    out += "".join(f"Warning: {one_line(n)}\n" for n in notes)
    return out


def _marked_ids(hit: HitCited) -> str:
    """A hit's fact ids, each followed by its state when it is not active (``include_inactive``
    shows superseded, retracted and expired facts): the states the search found, per fact."""
    return " ".join(
        i if st == "active" else f"{i} ({st})"
        for i, st in zip(hit["ids"], hit["states"], strict=True)
    )


def lines_text(data: dict[str, Any]) -> str:
    """The lines ``get`` read (:meth:`memcli.service.datatypes.GetResult.as_dict`), framed as
    quoted data like a search's block, with the ids of the facts among them."""
    from memcli.search.context import Quote, render

    if not data["text"].strip():
        return f"{data['path']}:{data['start_line']}-{data['end_line']} is blank.\n"
    quote = Quote(data["path"], data["start_line"], data["end_line"], data["text"])
    title = f"Lines of {data['path']}"
    out: str = render("", [quote], 10_000_000, title=title).text
    if data["ids"]:
        out += "Fact ids (for supersede, forget, confirm): " + " ".join(data["ids"]) + "\n"
    return out
