"""``memcli doctor``: check the installation, settings, providers, index, hooks and cache."""

from __future__ import annotations

import typer

from memcli.cli.app import app, state
from memcli.cli.cmd_core import JSON
from memcli.errors import BadInput

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
    from memcli.doctor import run_doctor

    st = state(ctx)
    if timeout <= 0:
        raise BadInput("--timeout must be more than 0 seconds")
    report = run_doctor(st.workspace, network=not offline, timeout=timeout)
    if as_json:
        st.out.json(report.as_dict())
    else:
        out = st.out
        out.table(
            ["check", "status", "summary"],
            [[c.name, c.status, c.summary] for c in report.checks],
            title="memcli doctor",
        )
        for c in report.checks:
            if c.hint and c.status != "ok":
                out.line(f"{c.name}: {c.hint}")
        n = len(report.problems)
        if n:
            out.styled(
                f"{n} problem{'s' if n != 1 else ''} need{'s' if n == 1 else ''} attention",
                "bold red",
            )
        else:
            out.styled("no problems found", "green")
    if report.problems:
        raise typer.Exit(NEEDS_ATTENTION)
