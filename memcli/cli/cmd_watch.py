"""``memcli watch``: re-index memory files as they change."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import typer

from memcli.cli.app import app, state
from memcli.cli.output import Output

SHOWN_PATHS = 5  # a human sync line names at most this many files


@app.command()
def watch(
    ctx: typer.Context,
    as_json: bool = typer.Option(
        False, "--json", help="One JSON event per line on stdout (ready, sync, ..., stopped)."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No per-sync lines on stderr."),
    debounce: int | None = typer.Option(
        None,
        "--debounce",
        metavar="MS",
        help="Wait until files are quiet this long before indexing [setting watch.debounce_ms].",
        show_default=False,
    ),
    serve: bool = typer.Option(
        False,
        "--serve",
        help="Also answer the CLI's requests as the workspace's engine (memcli serve), with no"
        " idle timeout: one process for both.",
    ),
) -> None:
    """Re-index memory files as they change, until Ctrl-C (one watcher per workspace)."""
    # imported when the command runs: --help and the other commands do not load the service
    from memcli.service.datatypes import WatchOptions

    st = state(ctx)
    opts = WatchOptions(debounce_ms=debounce)
    out = Output(quiet=st.quiet or quiet, no_color=st.no_color)
    emit = out.json if as_json else (lambda event: _human(out, event))
    with st.memory() as mem:
        if not serve:
            mem.watch(opts, emit)
            return
        root = mem.ws.root
    from memcli.engine.server import serve as run_engine

    run_engine(root, 0, watch=True, on_event=emit, debounce_ms=opts.debounce_ms)


def _human(out: Output, event: dict[str, Any]) -> None:
    """One stderr line per event; errors always, the rest unless quiet."""
    kind = event["event"]
    clock = _clock(event.get("time"))
    if kind == "error":
        out.error(f"{event['message']} (retrying in {event['retry_in']:g}s)")
        return
    if kind == "warning":
        out.warn(event["message"])
    elif kind == "ready":
        out.warnings(event["warnings"])
        where = ", ".join(f"{p}/" for p in event["watching"])
        out.info(
            f"{clock} watching {where} in {event['workspace']} "
            f"(debounce {event['debounce_ms']} ms); Ctrl-C to stop"
        )
    elif kind == "sync":
        out.warnings(event["warnings"])
        if event["added"] or event["updated"] or event["removed"]:
            out.info(f"{clock} {_sync_line(event)}")
    elif kind == "stopped":
        out.info(f"{clock} stopped after {event['syncs']} sync(s)")


def _sync_line(event: dict[str, Any]) -> str:
    counts = ", ".join(f"{event[k]} {k}" for k in ("added", "updated", "removed") if event[k])
    paths = event["paths"]
    shown = ", ".join(paths[:SHOWN_PATHS])
    more = len(paths) - SHOWN_PATHS
    if more > 0:
        shown += f" and {more} more"
    initial = "initial sync: " if event.get("initial") else ""
    return f"{initial}{counts} in {event['seconds']:.2f}s: {shown}"


def _clock(stamp: str | None) -> str:
    if not stamp:
        return ""
    try:
        return datetime.fromisoformat(stamp).strftime("%H:%M:%S")
    except ValueError:
        return stamp
