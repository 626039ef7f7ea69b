"""The options of ``memcli search``, declared once.

:class:`SearchArgs` is what :func:`memcli.cli.searching.run` takes. Each field carries its
command-line names, its kind and its help; the Typer command (:mod:`memcli.cli.cmd_core`)
builds its parameters from them and the fast path (:mod:`memcli.cli.fastpath`) its option
table, so the two parsers cannot drift apart. No Typer here: the fast path imports this.
"""

from __future__ import annotations

from dataclasses import Field, dataclass, field, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the service loads with the search itself, not when --help builds options
    from memcli.service.searching import SearchRequest

# Kinds of option: ``flag``: True when given; ``switch``: ``--x/--no-x``, None when neither is
# given; ``int``/``float``/``str``: one value, None when not given; ``list``: repeatable.
JSON_HELP = "Print JSON (stable field names, see README)."


def _opt(kind: str, *names: str, help: str) -> Any:  # noqa: A002 (Typer's own word)
    default: Any = False if kind == "flag" else None
    if kind == "list":
        return field(default_factory=list, metadata={"names": names, "kind": kind, "help": help})
    return field(default=default, metadata={"names": names, "kind": kind, "help": help})


@dataclass
class SearchArgs:
    """Every option of ``memcli search``, in the order ``--help`` lists them."""

    limit: int | None = _opt("int", "--limit", "-n", help="Number of results.")
    min_score: float | None = _opt(
        "float",
        "--min-score",
        help="Drop results whose final score (after decay) is below (0..1).",
    )
    source: list[str] = _opt("list", "--source", help="Only this namespace (repeatable).")
    type_: list[str] = _opt("list", "--type", help="Only entries of this type.")
    tag: list[str] = _opt("list", "--tag", help="Only entries with this tag.")
    since: str | None = _opt("str", "--since", help="Only files dated on/after.")
    until: str | None = _opt("str", "--until", help="Only files dated on/before.")
    path: str | None = _opt("str", "--path", help="Only paths matching this glob.")
    decay: bool | None = _opt(
        "switch",
        "--decay",
        "--no-decay",
        help="Temporal decay: older dated files score lower (MEMORY.md, undated files exempt).",
    )
    strategy: str | None = _opt(
        "str",
        "--strategy",
        help="keyword, vector or hybrid (default auto: hybrid when an embedding model is set).",
    )
    mmr: bool | None = _opt(
        "switch",
        "--mmr",
        "--no-mmr",
        help="Diversify results (MMR): near-duplicates do not crowd out.",
    )
    mmr_lambda: float | None = _opt(
        "float",
        "--mmr-lambda",
        help="MMR trade-off 0..1: 1 = relevance only, lower = more diverse (implies --mmr).",
    )
    explain: bool = _opt(
        "flag", "--explain", help="Show how each score came to be (JSON: 'explain' per result)."
    )
    fmt: str | None = _opt(
        "str", "--format", help="text, json or context (one Markdown block for a prompt)."
    )
    max_tokens: int | None = _opt(
        "int", "--max-tokens", help="Token budget of --format context (estimate: characters / 4)."
    )
    as_json: bool = _opt("flag", "--json", help=JSON_HELP)
    jsonl: bool = _opt("flag", "--jsonl", help="One JSON result per line.")
    files_only: bool = _opt("flag", "--files", help="Only the paths of matching files.")
    batch: bool = _opt("flag", "--batch", help="Queries from stdin, one JSON per line.")

    def request(self) -> SearchRequest:
        """What these options ask of the service (the output options stay with the CLI)."""
        from memcli.service.searching import SearchRequest  # the service layer: not on --help

        return SearchRequest(
            limit=self.limit,
            min_score=self.min_score,
            source=self.source,
            type=self.type_,
            tag=self.tag,
            since=self.since,
            until=self.until,
            path=self.path,
            decay=self.decay,
            strategy=self.strategy,
            mmr=self.mmr,
            mmr_lambda=self.mmr_lambda,
            explain=self.explain,
        )


def options() -> tuple[Field[Any], ...]:
    """The fields of :class:`SearchArgs`, each with ``metadata`` names, kind and help."""
    return fields(SearchArgs)
