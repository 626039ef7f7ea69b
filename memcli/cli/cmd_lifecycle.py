"""``memcli supersede``, ``forget``, ``confirm`` and ``review``: keeping memory true."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from memcli.cli.app import app, state
from memcli.cli.runtime import State

if TYPE_CHECKING:
    from memcli.memory import Memory
    from memcli.service.lifecycle import LifecycleResult

JSON = typer.Option(False, "--json", help="Print JSON.")
DRY_RUN = typer.Option(False, "--dry-run", help="Show what would be written; write nothing.")
COMMIT = typer.Option(False, "--commit", help="git commit the files changed, telling the story.")
REF = typer.Argument(..., metavar="FACT", help="A fact id (search --json 'ids') or PATH:LINE.")


@app.command()
def supersede(
    ctx: typer.Context,
    fact: str = REF,
    text: str = typer.Argument(..., help="The fact as it is now."),
    type_: str | None = typer.Option(None, "--type", "-t", help="Entry type (default: the old)."),
    tag: list[str] | None = typer.Option(
        None, "--tag", "--tags", help="Tag (default: the old ones)."
    ),
    dry_run: bool = DRY_RUN,
    commit: bool = COMMIT,
    as_json: bool = JSON,
) -> None:
    """Replace a fact: write the new one and mark the old one superseded by it."""
    st = state(ctx)
    with st.memory() as mem:
        result = mem.supersede(
            fact, text, type=type_, tags=tag or None, dry_run=dry_run, commit=commit
        )
        _done(st, mem, result, as_json)


@app.command()
def forget(
    ctx: typer.Context,
    fact: str = REF,
    reason: str = typer.Option(..., "--reason", help="Why it is wrong or no longer true."),
    purge: bool = typer.Option(
        False, "--purge", help="Also remove its text from the files (git history keeps it)."
    ),
    dry_run: bool = DRY_RUN,
    commit: bool = COMMIT,
    as_json: bool = JSON,
) -> None:
    """Retract a fact: searches leave it out from now on; it stays in the file, marked."""
    st = state(ctx)
    with st.memory() as mem:
        result = mem.forget(fact, reason=reason, purge=purge, dry_run=dry_run, commit=commit)
        _done(st, mem, result, as_json)


@app.command()
def confirm(
    ctx: typer.Context,
    fact: str = REF,
    by: str | None = typer.Option(None, "--by", help="Who vouches for it."),
    dry_run: bool = DRY_RUN,
    commit: bool = COMMIT,
    as_json: bool = JSON,
) -> None:
    """Vouch for a fact: it ranks higher, and a review of it is closed."""
    st = state(ctx)
    with st.memory() as mem:
        result = mem.confirm(fact, by=by, dry_run=dry_run, commit=commit)
        _done(st, mem, result, as_json)


@app.command()
def review(ctx: typer.Context, as_json: bool = JSON) -> None:
    """Facts that need a decision (conflicts, instruction-like, expired), with the commands
    that settle them. Exit 1 when there are none."""
    st = state(ctx)
    with st.memory() as mem:
        items = mem.review()
        st.out.warnings(mem.warnings)
    if as_json:
        st.out.json({"facts": items})
    else:
        for item in items:
            st.out.line(f"{item['id'] or '-'}  {item['path']}:{item['line']}  {item['why']}")
            st.out.line(f"  {item['text']}")
            st.out.line(f"  settle: {' | '.join(item['commands'])}")
        if not items:
            st.out.info("nothing to review")
    if not items:
        raise typer.Exit(1)


def _done(st: State, mem: Memory, result: LifecycleResult, as_json: bool) -> None:
    st.out.warnings([*result.warnings, *mem.warnings])
    if as_json:
        st.out.json(result.as_dict())
        return
    fact = result.fact
    if not result.changed:
        st.out.info(f"fact {fact.id} already {result.action}; nothing written")
        return
    verb = "would mark" if result.dry_run else "marked"
    st.out.line(f"{verb} {fact.id} ({fact.path}:{fact.line}) {result.action}")
    for line in result.lines:
        st.out.line(f"  {line.strip()}")
    if result.successor is not None and not result.dry_run:
        new = result.successor
        st.out.line(f"new fact {new['id']} at {new['path']}:{new['line']}")
    if result.commit:
        st.out.line(f"committed {result.commit[:10]}")
