"""``memcli doctor``: check the installation, settings, providers, index, hooks and cache."""

from __future__ import annotations

import typer

from memcli.cli import render
from memcli.cli.app import app, state
from memcli.cli.cmd_core import JSON

#: doctor's exit status when a check found a problem (like grep's "no match": not an error).
NEEDS_ATTENTION = 1


@app.command()
def doctor(
    ctx: typer.Context,
    offline: bool = typer.Option(
        False, "--offline", help="Do not contact the embedding or LLM server."
    ),
    timeout: float = typer.Option(
        3.0, "--timeout", metavar="SECONDS", help="How long to wait for each provider."
    ),
    as_json: bool = JSON,
) -> None:
    """Check SQLite (FTS5, sqlite-vec), settings, providers, the index, hooks and the cache.

    Exits 1 when something needs attention; each problem comes with a hint.
    """
    from memcli.memory import Memory  # the service layer: not on --help

    st = state(ctx)
    report = Memory.doctor(st.workspace, network=not offline, timeout=timeout)
    if as_json:
        st.out.json(report.as_dict())
    else:
        render.doctor_report(st.out, report)
    if report.problems:
        raise typer.Exit(NEEDS_ATTENTION)
