"""The fields of a search request, declared once: each with its kind, its ``memcli search``
option names and help, and the setting whose bounds check its value.

:class:`memcli.search.options.SearchRequest` holds exactly these fields (a test keeps them
equal), its :meth:`~memcli.search.options.SearchRequest.checked` checks the bounded ones, and
the CLI builds the request part of its options (:mod:`memcli.cli.search_args`) and the request
itself from them. Plain data, no imports: ``memcli --help`` reads it.
"""

from typing import NamedTuple


class RequestField(NamedTuple):
    """One field of a search request."""

    name: str  # the SearchRequest field
    kind: str  # int, float, str, list (repeatable), switch (--x/--no-x), flag
    cli: tuple[str, ...]  # the options of memcli search (a switch: the on and the off name)
    help: str
    setting: str | None = None  # the setting whose bounds a value must keep


#: Every field of a search request, in the order ``memcli search --help`` lists them.
REQUEST_FIELDS: tuple[RequestField, ...] = (
    RequestField("limit", "int", ("--limit", "-n"), "Number of results.", "search.limit"),
    RequestField(
        "min_score",
        "float",
        ("--min-score",),
        "Drop results whose final score (after decay) is below (0..1).",
        "search.min_score",
    ),
    RequestField("source", "list", ("--source",), "Only this namespace (repeatable)."),
    RequestField("type", "list", ("--type",), "Only entries of this type."),
    RequestField("tag", "list", ("--tag", "--tags"), "Only entries with this tag."),
    RequestField("since", "str", ("--since",), "Only files dated on/after."),
    RequestField("until", "str", ("--until",), "Only files dated on/before."),
    RequestField(
        "path",
        "str",
        ("--path",),
        "Only these paths: a shell glob (coder/*, *.md, memory/2026-11-*) or a folder prefix,"
        " from the workspace or from memory/.",
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
    ),
    RequestField(
        "explain",
        "flag",
        ("--explain",),
        "Show how each score came to be (JSON: 'explain' per result).",
    ),
)


def flag_of(field: RequestField) -> str:
    """How an error names the option: its short and long names, ``-n/--limit``."""
    return "/".join(sorted(field.cli, key=len))
