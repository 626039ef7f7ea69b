"""The options of ``memcli search``, declared once.

:data:`OPTIONS` names every option of ``memcli search``: its field of :class:`SearchArgs`,
its kind, its command-line names and its help. The Typer command (:mod:`memcli.cli.cmd_core`)
builds its parameters from it and the fast path (:mod:`memcli.cli.fastpath`) its option table,
so the two parsers cannot drift apart. :class:`SearchArgs` is what
:func:`memcli.cli.searching.run` takes. No Typer and no dataclasses here: the fast path imports
this on every search.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

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


#: Every option of ``memcli search``, in the order ``--help`` lists them.
OPTIONS: tuple[Option, ...] = (
    Option("limit", "int", ("--limit", "-n"), "Number of results."),
    Option(
        "min_score",
        "float",
        ("--min-score",),
        "Drop results whose final score (after decay) is below (0..1).",
    ),
    Option("source", "list", ("--source",), "Only this namespace (repeatable)."),
    Option("type_", "list", ("--type",), "Only entries of this type."),
    Option("tag", "list", ("--tag", "--tags"), "Only entries with this tag."),
    Option("since", "str", ("--since",), "Only files dated on/after."),
    Option("until", "str", ("--until",), "Only files dated on/before."),
    Option(
        "path",
        "str",
        ("--path",),
        "Only these paths: a shell glob (coder/*, *.md, memory/2026-11-*) or a folder prefix,"
        " from the workspace or from memory/.",
    ),
    Option(
        "decay",
        "switch",
        ("--decay", "--no-decay"),
        "Temporal decay: older dated files score lower (MEMORY.md, undated files exempt).",
    ),
    Option(
        "strategy",
        "str",
        ("--strategy",),
        "keyword, vector or hybrid (default auto: hybrid when an embedding model is set).",
    ),
    Option(
        "mmr",
        "switch",
        ("--mmr", "--no-mmr"),
        "Diversify results (MMR): near-duplicates do not crowd out.",
    ),
    Option(
        "mmr_lambda",
        "float",
        ("--mmr-lambda",),
        "MMR trade-off 0..1: 1 = relevance only, lower = more diverse (implies --mmr).",
    ),
    Option(
        "include_inactive",
        "flag",
        ("--include-inactive",),
        "Also superseded, retracted and expired facts (flagged).",
    ),
    Option(
        "explain",
        "flag",
        ("--explain",),
        "Show how each score came to be (JSON: 'explain' per result).",
    ),
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

        return SearchRequest(
            limit=self.limit,
            min_score=self.min_score,
            source=list(self.source),
            type=list(self.type_),
            tag=list(self.tag),
            since=self.since,
            until=self.until,
            path=self.path,
            decay=self.decay,
            strategy=self.strategy,
            mmr=self.mmr,
            mmr_lambda=self.mmr_lambda,
            include_inactive=self.include_inactive,
            explain=self.explain,
        ).checked()
