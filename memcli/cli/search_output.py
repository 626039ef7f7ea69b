"""``memcli search``'s output forms, one function each, whoever answered the search: a search
in process and the workspace's engine both hand over the same view of it
(:meth:`memcli.search.results.SearchResult.view`,
:meth:`memcli.service.search_answers.Context.view`). JSON (``--json``, and each query of
``--batch``), JSON lines (``--jsonl``), paths (``--files``), the context block (``--format
context``) here; the plain text and the terminal's table in :mod:`memcli.cli.search_text`,
loaded only when one of them is printed."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from memcli.cli.output import Output
from memcli.errors import ExitCode

if TYPE_CHECKING:
    from memcli.cli.search_args import SearchArgs

__all__ = ["context_block", "files", "json_document", "json_lines", "show"]


def show(out: Output, view: dict[str, Any], fmt: str, args: SearchArgs) -> int:
    """Print ``view`` in the form ``fmt`` (text, json or context) and the options ``args``
    (a :class:`memcli.cli.search_args.SearchArgs`) chose; the exit code (1: nothing found)."""
    if fmt == "context":
        return context_block(out, view["context"])
    data = view["result"]
    if fmt == "json":
        json_document(out, data)
    else:
        out.warnings(data["warnings"])
        if args.jsonl:
            json_lines(out, data)
        elif args.files_only:
            files(out, data)
        else:
            from memcli.cli import search_text

            # a table on a styled terminal unless --format text asks for the plain form
            search_text.hits(out, view, table=args.fmt is None and out.rich_terminal)
    return 0 if data["results"] else int(ExitCode.NOT_FOUND)


def json_document(out: Output, data: dict[str, Any]) -> None:
    """The result's JSON, one document (``--json``; one line per query of ``--batch``)."""
    out.json(data)


def json_lines(out: Output, data: dict[str, Any]) -> None:
    """Each hit's JSON on a line of its own (``--jsonl``)."""
    for hit in data["results"]:
        out.json(hit)


def files(out: Output, data: dict[str, Any]) -> None:
    """The paths of the files with hits, each once, best first (``--files``)."""
    for path in dict.fromkeys(h["path"] for h in data["results"]):
        out.line(path)


def context_block(out: Output, ctx: dict[str, Any]) -> int:
    """The context block (``--format context``) after the search's warnings; nothing but a
    warning when no result fits the budget. The exit code (1: nothing found or nothing fit)."""
    out.warnings(ctx["warnings"])
    if ctx["overflow"]:
        out.warn(ctx["overflow"])
        return int(ExitCode.NOT_FOUND)
    sys.stdout.write(ctx["text"])
    return 0 if ctx["found"] else int(ExitCode.NOT_FOUND)
