"""flush: extract durable facts from a conversation with an LLM and append the new ones."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from memcli.cli.app import app, state
from memcli.cli.cmd_core import JSON
from memcli.cli.output import Output
from memcli.errors import BadInput

if TYPE_CHECKING:
    from memcli.flush.facts import FlushResult


@app.command()
def flush(
    ctx: typer.Context,
    file: str | None = typer.Argument(
        None,
        metavar="[FILE|-]",
        help="Conversation: JSON messages, JSON Lines or a transcript; '-' or none: stdin.",
    ),
    ns: str | None = typer.Option(None, "--ns", help="Namespace: memory/NS/YYYY-MM-DD.md."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Show the facts that would be written; write nothing."
    ),
    prompt_file: Path | None = typer.Option(
        None,
        "--prompt-file",
        help="Instructions for the model (default: llm.prompt_file or built in).",
    ),
    commit: bool = typer.Option(False, "--commit", help="git commit the memory file afterwards."),
    as_json: bool = JSON,
) -> None:
    """Extract durable facts from a conversation (LLM), skip known ones, append the rest."""
    # imported when the command runs: --help and the other commands do not load the service
    from memcli.flush.source import read_conversation
    from memcli.service.datatypes import FlushOptions  # with the service: not on --help

    st = state(ctx)
    # read before the workspace is opened: a missing file is reported first, as always
    if file is None or file == "-":
        text = _read_stdin(tty_is_error=file is None)
    else:
        text = read_conversation(file)
    opts = FlushOptions(
        text=text,
        namespace=ns,
        dry_run=dry_run,
        commit=commit,
        prompt_file=prompt_file.resolve() if prompt_file else None,  # relative to cwd
    )
    with st.memory() as mem:
        result = mem.flush(opts)
    st.out.warnings(result.warnings)
    if as_json:
        st.out.json(result.as_dict())
    else:
        _render(st.out, result)


def _read_stdin(*, tty_is_error: bool) -> str:
    """The conversation piped to standard input (a terminal there is no conversation)."""
    if tty_is_error and getattr(sys.stdin, "isatty", lambda: False)():
        raise BadInput(
            "no conversation given",
            hint="memcli flush FILE, or pipe it: memcli flush - < conversation.json",
        )
    try:
        return str(sys.stdin.read())
    except UnicodeDecodeError:
        raise BadInput("standard input is not valid UTF-8 text") from None


def _render(out: Output, r: FlushResult) -> None:
    rows = [
        [
            "would write" if r.dry_run else "written",
            o.fact.type or "",
            o.fact.text,
            " ".join(f"#{t}" for t in o.fact.tags),
            f"line {o.line}" if o.line else "",
        ]
        for o in r.written
    ] + [
        [
            "skipped",
            o.fact.type or "",
            o.fact.text,
            " ".join(f"#{t}" for t in o.fact.tags),
            f"{o.reason}" + (f" of {o.duplicate_of}" if o.duplicate_of else ""),
        ]
        for o in r.skipped
    ]
    if rows:
        out.table(["status", "type", "fact", "tags", "note"], rows)
    out.styled(r.message, "green" if r.written else "yellow")
    if r.written and not r.dry_run:
        out.info(f"under '{r.heading}'")
    if r.commit:
        out.info(f"committed {r.commit[:12]}")
    for kind in r.redactions:
        out.info(f"redacted a secret ({kind})")
