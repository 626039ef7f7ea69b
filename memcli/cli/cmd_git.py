"""Git commands: diff (what was learned), log, hooks install|uninstall|status, sync.

Each parses its arguments, calls one method of the git service (memcli.service.git) and
renders the result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from memcli.cli import render
from memcli.cli.app import MemcliTyper, app, state
from memcli.cli.output import Output
from memcli.errors import ExitCode

if TYPE_CHECKING:
    from memcli.cli.runtime import State
    from memcli.git.diff import DiffResult, FactLine
    from memcli.git.hooks import HooksReport

JSON = typer.Option(False, "--json", help="Print JSON (stable field names, see docs/json.md).")


# -- diff -----------------------------------------------------------------------------
@app.command()
def diff(
    ctx: typer.Context,
    rev_range: str | None = typer.Argument(
        None,
        help="A..B, A...B, or REV (REV against the work tree). Default: the work tree "
        "(staged, unstaged and untracked memory files) against HEAD.",
        show_default=False,
    ),
    since: str | None = typer.Option(
        None,
        "--since",
        metavar="DATE",
        help="From the last commit before DATE (YYYY-MM-DD, yesterday, 7d, '2 weeks ago').",
    ),
    stat: bool = typer.Option(False, "--stat", help="Only counts per file."),
    as_json: bool = JSON,
) -> None:
    """Facts added and removed under memory/ (exit 1 when nothing changed)."""
    from memcli.service.datatypes import DiffOptions  # with the service: not on --help

    st = state(ctx)
    with st.memory(lenient=True) as mem:
        result = mem.diff(DiffOptions(rev_range, since))
    if as_json:
        st.out.json(result.as_dict())
    elif stat:
        _render_stat(st.out, result)
    else:
        _render_diff(st.out, result)
    if not result.changed:
        raise typer.Exit(int(ExitCode.NOT_FOUND))


def _label(result: DiffResult) -> str:
    new = result.new if result.new == "worktree" else result.new[:10]
    if not result.old:
        return f"{new}, no commit before it"
    return f"{result.old[:10]}..{new}"


def _render_stat(out: Output, result: DiffResult) -> None:
    def n(items: list[FactLine], kind: str) -> int:
        return sum(1 for x in items if x.kind == kind)

    rows = [
        [
            f.path,
            f.status,
            f"+{n(f.added, 'fact')}",
            f"-{n(f.removed, 'fact')}",
            f"+{n(f.added, 'line')} -{n(f.removed, 'line')}",
        ]
        for f in result.files
    ]
    if rows:
        out.table(
            ["path", "status", "facts added", "facts removed", "other lines"],
            rows,
            right=["facts added", "facts removed", "other lines"],
        )
    _render_totals(out, result)


def _render_diff(out: Output, result: DiffResult) -> None:
    for f in result.files:
        name = f"{f.old_path} -> {f.path}" if f.old_path else f.path
        out.styled(f"{name} ({f.status})  +{len(f.added)} -{len(f.removed)}", "bold")
        if f.binary:
            out.line("  (binary file)")
            continue
        rows = [_fact_row("-", x) for x in f.removed] + [_fact_row("+", x) for x in f.added]
        if rows:
            out.table(["", "line", "type", "fact", "tags"], rows, right=["line"])
        out.line()
    _render_totals(out, result)


def _fact_row(sign: str, fact: FactLine) -> list[Any]:
    kind = fact.type or ("(line)" if fact.kind == "line" else "")
    if fact.kind == "status":  # superseded, forgotten, confirmed...: the fact itself stays
        return ["~", fact.line, kind, f"{fact.text}  [{fact.event}]", ""]
    return [sign, fact.line, kind, fact.text, " ".join(f"#{t}" for t in fact.tags)]


def _render_totals(out: Output, result: DiffResult) -> None:
    t = result.totals
    if not t["files"]:
        out.info(f"no memory changes in {_label(result)}")
        return
    files = f"{t['files']} file{'s' if t['files'] != 1 else ''}"
    facts = f"+{t['added']} -{t['removed']} facts"
    lines = (
        f", +{t['lines_added']} -{t['lines_removed']} other lines"
        if (t["lines_added"] or t["lines_removed"])
        else ""
    )
    if t["changed"]:
        lines += f", {t['changed']} changed (superseded, forgotten, confirmed...)"
    out.styled(f"{files} changed: {facts}{lines} ({_label(result)})", "dim")


# -- log ------------------------------------------------------------------------------
@app.command()
def log(
    ctx: typer.Context,
    rev: str | None = typer.Argument(None, help="Start from this revision (default HEAD)."),
    limit: int = typer.Option(20, "--limit", "-n", help="Number of commits."),
    since: str | None = typer.Option(
        None, "--since", metavar="DATE", help="Only commits since DATE (as diff --since)."
    ),
    as_json: bool = JSON,
) -> None:
    """Commits that touched memory/, with the number of facts each added and removed."""
    from memcli.service.datatypes import LogOptions  # with the service: not on --help

    st = state(ctx)
    with st.memory(lenient=True) as mem:
        commits = mem.log(LogOptions(rev, limit, since))
    if as_json:
        st.out.json({"commits": [c.as_dict() for c in commits]})
        return
    if not commits:
        st.out.info("no commits touched memory/")
        return
    st.out.table(
        ["commit", "date", "author", "added", "removed", "changed", "subject"],
        [
            [
                c.sha[:10],
                c.date[:16].replace("T", " "),
                c.author,
                f"+{c.added}",
                f"-{c.removed}",
                f"~{c.changed}",
                c.subject,
            ]
            for c in commits
        ],
        right=["added", "removed", "changed"],
    )


# -- hooks ----------------------------------------------------------------------------
hooks_app = MemcliTyper(
    help="Git hooks that re-index after commit, merge, checkout and rewrite.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
)
app.add_typer(hooks_app, name="hooks")


@hooks_app.command("install")
def hooks_install(ctx: typer.Context, as_json: bool = JSON) -> None:
    """Install the hooks (chaining any hook already there); safe to run again."""
    st = state(ctx)
    with st.memory(lenient=True) as mem:
        report = mem.hooks_install()
    _render_hooks(st, report, as_json)


@hooks_app.command("uninstall")
def hooks_uninstall(ctx: typer.Context, as_json: bool = JSON) -> None:
    """Remove the hooks and restore the hooks they chained."""
    st = state(ctx)
    with st.memory(lenient=True) as mem:
        report = mem.hooks_uninstall()
    _render_hooks(st, report, as_json)


@hooks_app.command("status")
def hooks_status(ctx: typer.Context, as_json: bool = JSON) -> None:
    """Which hooks are installed, chained, missing or someone else's."""
    st = state(ctx)
    with st.memory(lenient=True) as mem:
        report = mem.hooks_status()
    _render_hooks(st, report, as_json)


def _render_hooks(st: State, report: HooksReport, as_json: bool) -> None:
    st.out.warnings(report.warnings)
    if as_json:
        st.out.json(report.as_dict())
        return
    rows = [[h.name, h.state, "yes" if h.chained else "no", h.action or "-"] for h in report.hooks]
    st.out.table(["hook", "state", "chains", "action"], rows, title=report.hooks_dir)
    st.out.info(f"hooks folder: {report.hooks_dir}; errors are logged to {report.log}")


# -- sync -----------------------------------------------------------------------------
@app.command()
def sync(
    ctx: typer.Context,
    strategy: str | None = typer.Option(
        None, "--strategy", help="rebase or merge (default: setting git.sync_strategy)."
    ),
    no_push: bool = typer.Option(False, "--no-push", help="Pull and re-index, do not push."),
    no_commit: bool = typer.Option(
        False, "--no-commit", help="Refuse to run with uncommitted memory changes."
    ),
    as_json: bool = JSON,
) -> None:
    """Share memory through the upstream remote: commit memory, pull, re-index, push."""
    from memcli.service.datatypes import SyncOptions  # with the service: not on --help

    st = state(ctx)
    with st.memory() as mem:
        synced = mem.sync(SyncOptions(strategy, commit=not no_commit, push=not no_push))
    result, report = synced.sync, synced.index
    st.out.warnings(synced.warnings)
    if as_json:
        st.out.json(synced.as_dict())
        return
    render.sync_result(st.out, result, report, pushing=not no_push)
