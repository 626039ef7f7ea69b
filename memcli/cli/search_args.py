"""The options of ``memcli search``, declared once.

:data:`OPTIONS` names every option of ``memcli search``: its field of :class:`SearchArgs`,
its kind, its command-line names and its help; those of the request come from the request's
own declaration (:mod:`memcli.search.request_fields`). The Typer command
(:mod:`memcli.cli.cmd_core`) builds its parameters from it and the fast path
(:mod:`memcli.cli.fastpath`) its option table, so the two parsers cannot drift apart.
:class:`SearchArgs` is what :func:`memcli.cli.searching.run` takes. No Typer and no
dataclasses here: the fast path imports this on every search.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from memcli.search.request_fields import REQUEST_FIELDS

if TYPE_CHECKING:  # loaded with the search itself, not when --help builds the options
    from memcli.search.options import SearchRequest

# Kinds of option: ``flag``: True when given; ``switch``: ``--x/--no-x``, None when neither is
# given; ``int``/``float``/``str``: one value, None when not given; ``list``: repeatable.
JSON_HELP = "Print JSON (stable field names, see docs/json.md)."


class Option(NamedTuple):
    """One option of ``memcli search``: the :class:`SearchArgs` field it fills, its kind,
    its command-line names (a switch: the on and the off name) and its help."""

    field: str
    kind: str
    names: tuple[str, ...]
    help: str


def _attr(name: str) -> str:
    """The :class:`SearchArgs` field of a request field (``type`` is a builtin's name)."""
    return "type_" if name == "type" else name


#: Every option of ``memcli search``, in the order ``--help`` lists them: the request's
#: (declared once, :data:`~memcli.search.request_fields.REQUEST_FIELDS`), then the output's.
OPTIONS: tuple[Option, ...] = (
    *(Option(_attr(f.name), f.kind, f.cli, f.help) for f in REQUEST_FIELDS),
    Option("fmt", "str", ("--format",), "text, json or context (one Markdown block for a prompt)."),
    Option(
        "max_tokens",
        "int",
        ("--max-tokens",),
        "Token budget of --format context (estimate: characters / 4).",
    ),
    Option("as_json", "flag", ("--json",), JSON_HELP),
    Option("jsonl", "flag", ("--jsonl",), "One JSON result per line."),
    Option("files_only", "flag", ("--files",), "Only the paths of matching files."),
    Option("batch", "flag", ("--batch",), "Queries from stdin, one JSON per line."),
)


class SearchArgs(NamedTuple):
    """The values of the options of ``memcli search`` (fields named in :data:`OPTIONS`)."""

    limit: int | None = None
    min_score: float | None = None
    source: Sequence[str] = ()
    type_: Sequence[str] = ()
    tag: Sequence[str] = ()
    since: str | None = None
    until: str | None = None
    path: str | None = None
    decay: bool | None = None
    strategy: str | None = None
    mmr: bool | None = None
    mmr_lambda: float | None = None
    include_inactive: bool = False
    explain: bool = False
    fmt: str | None = None
    max_tokens: int | None = None
    as_json: bool = False
    jsonl: bool = False
    files_only: bool = False
    batch: bool = False

    def request(self) -> SearchRequest:
        """What these options ask of the service (the output options stay with the CLI)."""
        from memcli.search.options import SearchRequest  # not on --help

        given = {f.name: getattr(self, _attr(f.name)) for f in REQUEST_FIELDS}
        lists = {f.name: list(given[f.name]) for f in REQUEST_FIELDS if f.kind == "list"}
        return SearchRequest(**{**given, **lists}).checked()
