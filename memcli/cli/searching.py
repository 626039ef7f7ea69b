"""The work of ``memcli search``, without Typer: called by the Typer command and by
:mod:`memcli.cli.fastpath` alike, so both give the same output and exit code."""

from __future__ import annotations

import sys
from typing import Any

import memcli.memory  # noqa: F401  (State.memory's import, done here with the rest)
from memcli.cli import render
from memcli.cli.runtime import State
from memcli.cli.search_args import SearchArgs
from memcli.errors import BadInput, ExitCode
from memcli.search.pipeline import Filters, check_date, settings_options


def run(st: State, query: str | None, args: SearchArgs) -> int:
    """Run a search with the command's options; returns the exit code (1: nothing found)."""
    fmt = _search_format(args)
    filters = Filters(
        sources=tuple(args.source),
        types=tuple(args.type_),
        tags=tuple(args.tag),
        since=check_date(args.since, "--since"),
        until=check_date(args.until, "--until"),
        path_glob=args.path,
    )
    with st.memory() as mem:
        flags = settings_options(mem.settings)
        if args.mmr is not None:
            flags["mmr"] = args.mmr
        if args.mmr_lambda is not None:
            flags["mmr_lambda"] = args.mmr_lambda
            flags["mmr"] = args.mmr is not False  # --mmr-lambda implies --mmr
        flags["explain"] = args.explain
        opts = mem.search_options(
            limit=args.limit,
            min_score=args.min_score,
            decay=args.decay,
            filters=filters,
            strategy=args.strategy,
            **flags,
        )
        budget = args.max_tokens or mem.settings.get("search.max_tokens")
        if args.batch:
            if query is not None:
                raise BadInput("--batch reads queries from stdin; do not also give a QUERY")
            _batch(st, mem, opts)
            return 0
        if query is None:
            raise BadInput("missing QUERY", hint="memcli search 'words to find'")
        result = mem.search(query, opts)
    out = st.out
    if fmt != "json":
        out.warnings(result.warnings)
    if fmt == "json":
        out.json(result.as_dict())
    elif fmt == "context":
        from memcli.search.context import render as render_context

        block = render_context(result.query, result.hits, budget)
        if result.hits and not block.included:
            out.warn(f"no result fits in {budget} tokens; raise --max-tokens")
            return int(ExitCode.NOT_FOUND)
        sys.stdout.write(block.text)
    elif args.jsonl:
        for hit in result.as_dict()["results"]:
            out.json(hit)
    elif args.files_only:
        for p in dict.fromkeys(h.path for h in result.hits):
            out.line(p)
    else:
        render.search_result(out, result)
    return 0 if result.hits else int(ExitCode.NOT_FOUND)


def _search_format(args: SearchArgs) -> str:
    """Resolve --format with --json/--jsonl/--files/--batch; refuse contradictions."""
    fmt, max_tokens = args.fmt, args.max_tokens
    if fmt is not None and fmt not in ("text", "json", "context"):
        raise BadInput(f"--format must be text, json or context, got {fmt!r}")
    if args.as_json and fmt not in (None, "json"):
        raise BadInput(f"--json contradicts --format {fmt}")
    chosen = fmt or ("json" if args.as_json else "text")
    if chosen == "context" and (args.jsonl or args.files_only or args.batch):
        raise BadInput("--format context cannot be combined with --jsonl, --files or --batch")
    if max_tokens is not None:
        if chosen != "context":
            raise BadInput("--max-tokens applies to --format context")
        if max_tokens < 1:
            raise BadInput("--max-tokens must be at least 1")
    return chosen


def _batch(st: Any, mem: Any, opts: Any) -> None:
    """One JSON envelope per stdin line; one process and one index open for all."""
    stale, warnings = mem.sync_before_search()
    for raw in sys.stdin:
        q = raw.rstrip("\n")
        if not q.strip():
            continue
        try:
            result = mem.search(q, opts, sync=False)
        except BadInput as exc:
            st.out.json({"query": q, "error": exc.message, "results": []})
            continue
        result.stale = stale
        result.warnings[:0] = warnings
        st.out.json(result.as_dict())
