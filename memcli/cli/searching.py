"""The work of ``memcli search``, without Typer: called by the Typer command and by
:mod:`memcli.cli.fastpath` alike, so both give the same output and exit code.

A search the workspace's engine answers does not load the service layer: it is imported only
by the in-process search. Whoever answered, :mod:`memcli.cli.search_output` prints it."""

from __future__ import annotations

import sys
from pathlib import Path

from memcli.cli import search_output
from memcli.cli.argv import loading
from memcli.cli.runtime import State
from memcli.cli.search_args import SearchArgs
from memcli.errors import BadInput


def run(st: State, query: str | None, args: SearchArgs) -> int:
    """Run a search with the command's options; returns the exit code (1: nothing found)."""
    fmt = _search_format(args)
    request = args.request()  # checks the dates before the workspace is looked for
    if query is not None and not args.batch:
        from memcli.cli.via_engine import search_via_engine  # a socket: no heavy imports

        code = search_via_engine(st, query, request, fmt, args)
        if code is not None:
            return code
    with loading():
        import memcli.memory  # noqa: F401  (State.memory's: the service layer, in process only)
    with st.memory() as mem:
        if mem.settings.get("engine.autostart"):
            _autostart(mem.ws.root)
        opts = mem.search_options(request)
        if args.batch:
            if query is not None:
                raise BadInput("--batch reads queries from stdin; do not also give a QUERY")
            for answer in mem.search_batch(sys.stdin, opts):
                search_output.json_document(st.out, answer.as_dict())
            return 0
        if query is None:
            raise BadInput("missing QUERY", hint="memcli search 'words to find'")
        if fmt == "context":
            return search_output.show(
                st.out, mem.context(query, opts, args.max_tokens).view(), fmt, args
            )
        result = mem.search(query, opts)
    return search_output.show(st.out, result.view(), fmt, args)


def _autostart(root: Path) -> None:
    """Start the workspace's engine in the background for the next searches (no wait),
    unless its socket is there (an engine starting, or one that did not answer)."""
    import subprocess

    from memcli.enginelink import engine_files

    if engine_files(root)[0].exists():
        return

    args = [sys.executable, "-m", "memcli", "-q", "-w", str(root), "serve", "--detach"]
    subprocess.Popen(
        args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _search_format(args: SearchArgs) -> str:
    """Resolve --format with --json/--jsonl/--files/--batch; refuse contradictions."""
    fmt, max_tokens = args.fmt, args.max_tokens
    if fmt is not None and fmt not in ("text", "json", "context"):
        raise BadInput(f"--format must be text, json or context, got {fmt!r}")
    if args.as_json and fmt not in (None, "json"):
        raise BadInput(f"--json contradicts --format {fmt}")
    chosen = fmt or ("json" if args.as_json else "text")
    shapes = [
        name
        for name, given in (
            ("--json", args.as_json or fmt == "json"),
            ("--jsonl", args.jsonl),
            ("--files", args.files_only),
            ("--batch", args.batch),
        )
        if given
    ]
    if len(shapes) > 1 and shapes != ["--json", "--batch"]:  # a batch answers in JSON lines
        raise BadInput(f"{' and '.join(shapes)} cannot be combined: choose one output form")
    if chosen == "context" and (args.jsonl or args.files_only or args.batch):
        raise BadInput("--format context cannot be combined with --jsonl, --files or --batch")
    if max_tokens is not None:
        if chosen != "context":
            raise BadInput("--max-tokens applies to --format context")
        if max_tokens < 1:
            raise BadInput("--max-tokens must be at least 1")
    return chosen
