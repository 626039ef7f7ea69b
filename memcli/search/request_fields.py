"""The fields of a search request, declared once: each with its kind, its ``memcli search``
option names and help, the setting whose bounds check its value, and how the MCP ``search``
tool offers it to a model (its parameter names and descriptions, and the kind it takes there).

:class:`memcli.search.options.SearchRequest` holds exactly these fields (a test keeps them
equal), its :meth:`~memcli.search.options.SearchRequest.checked` checks the bounded ones, its
payload for the workspace's engine is made of them, and the service sends each to its search
option or filter (``Memory.search_options``); the CLI builds the request part of its
options (:mod:`memcli.cli.search_args`) and the request itself from them, and the MCP server
its ``search`` tool's parameters (:mod:`memcli.agent.mcp_search`). Plain data, no imports:
``memcli --help`` reads it.
"""

from typing import NamedTuple


class RequestField(NamedTuple):
    """One field of a search request."""

    name: str  # the SearchRequest field
    kind: str  # int, float, str, list (repeatable), switch (--x/--no-x), flag
    cli: tuple[str, ...]  # the options of memcli search (a switch: the on and the off name)
    help: str
    setting: str | None = None  # the setting whose bounds a value must keep
    #: The MCP search tool's (parameter, description) pairs for this field, worded for a
    #: model; several: the values of all are taken together (aliases); none: not offered.
    mcp: tuple[tuple[str, str], ...] = ()
    #: The kind the MCP tool takes when not the field's own: ``str`` for a list field that
    #: takes one value there (a one-item list).
    mcp_kind: str | None = None
    #: The :class:`~memcli.search.options.Filters` field it fills; None: the
    #: :class:`~memcli.search.options.SearchOptions` field of its own name.
    filter: str | None = None


#: Every field of a search request, in the order ``memcli search --help`` lists them.
REQUEST_FIELDS: tuple[RequestField, ...] = (
    RequestField(
        "limit",
        "int",
        ("--limit", "-n"),
        "Number of results.",
        "search.limit",
        mcp=(("limit", "Results at most (1-1000)."),),
    ),
    RequestField(
        "min_score",
        "float",
        ("--min-score",),
        "Drop results whose final score (after decay) is below (0..1).",
        "search.min_score",
    ),
    RequestField(
        "source",
        "list",
        ("--source",),
        "Only this namespace (repeatable).",
        mcp=(("namespace", "Only this namespace (memory/NAME/)."),),
        mcp_kind="str",
        filter="sources",
    ),
    RequestField(
        "type",
        "list",
        ("--type",),
        "Only entries of this type.",
        mcp=(("type", "Only entries of these types (decision...)."),),
        filter="types",
    ),
    RequestField(
        "tag",
        "list",
        ("--tag", "--tags"),
        "Only entries with this tag.",
        mcp=(
            ("tag", "Tags: one word each (a string or a list)."),
            ("tags", "The same as tags (either name works)."),
        ),
        filter="tags",
    ),
    RequestField(
        "since",
        "str",
        ("--since",),
        "Only files dated on/after a date: 2026-11-20, yesterday, 7d, '2 weeks ago'.",
        mcp=(
            (
                "since",
                "Only files dated on or after this day: YYYY-MM-DD, yesterday, 7d, '2 weeks ago'.",
            ),
        ),
        filter="since",
    ),
    RequestField(
        "until",
        "str",
        ("--until",),
        "Only files dated on/before a date (as --since).",
        filter="until",
    ),
    RequestField(
        "path",
        "str",
        ("--path",),
        "Only these paths: a shell glob (coder/*, *.md, memory/2026-11-*) or a folder prefix,"
        " from the workspace or from memory/.",
        filter="path_glob",
    ),
    RequestField(
        "decay",
        "switch",
        ("--decay", "--no-decay"),
        "Temporal decay: older dated files score lower (MEMORY.md, undated files exempt).",
    ),
    RequestField(
        "strategy",
        "str",
        ("--strategy",),
        "keyword, vector or hybrid (default auto: hybrid when an embedding model is set).",
        mcp=(("mode", "keyword, vector, hybrid (default: auto)."),),
    ),
    RequestField(
        "mmr",
        "switch",
        ("--mmr", "--no-mmr"),
        "Diversify results (MMR): near-duplicates do not crowd out.",
    ),
    RequestField(
        "mmr_lambda",
        "float",
        ("--mmr-lambda",),
        "MMR trade-off 0..1: 1 = relevance only, lower = more diverse (implies --mmr).",
        "search.mmr_lambda",
    ),
    RequestField(
        "include_inactive",
        "flag",
        ("--include-inactive",),
        "Also superseded, retracted and expired facts (flagged).",
        mcp=(("include_inactive", "Also superseded, retracted and expired facts (flagged)."),),
        filter="include_inactive",
    ),
    RequestField(
        "explain",
        "flag",
        ("--explain",),
        "Show how each score came to be (JSON: 'explain' per result).",
    ),
)


#: The MCP search tool's parameters (after ``query``), in the order it lists them.
MCP_ORDER: tuple[str, ...] = (
    "limit",
    "type",
    "tag",
    "tags",
    "namespace",
    "since",
    "mode",
    "include_inactive",
)


def flag_of(field: RequestField) -> str:
    """How an error names the option: its short and long names, ``-n/--limit``."""
    return "/".join(sorted(field.cli, key=len))
