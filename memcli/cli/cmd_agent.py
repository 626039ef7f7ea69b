"""``memcli mcp`` and ``memcli agent``: plugging memory into coding agents."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from memcli.cli.app import MemcliTyper, app, state
from memcli.cli.runtime import State
from memcli.errors import BadInput

if TYPE_CHECKING:
    from memcli.agents.claude_plugin import PluginInstall
    from memcli.flush.history import PastSession

JSON = typer.Option(False, "--json", help="Print JSON.")
AGENT = typer.Argument(
    ..., metavar="AGENT", help="claude-code, codex, gemini, opencode, copilot or generic."
)
SCOPE = typer.Option(
    "project", "--scope", help="project (this project's files) or user (your home folder)."
)
PROJECT = typer.Option(
    None,
    "--project",
    metavar="DIR",
    help="The folder the agent runs in (default: the workspace).",
    show_default=False,
)
DRY_RUN = typer.Option(False, "--dry-run", help="Show the changes as a diff; write nothing.")


@app.command()
def mcp(ctx: typer.Context) -> None:
    """Serve memory to an MCP client over stdio (tools: search, context, get, add, flush,
    status). Needs the extra: pip install 'memcli[mcp]'."""
    from memcli.cli.fastpath import run_mcp

    raise typer.Exit(run_mcp(state(ctx).workspace))


agent_app = MemcliTyper(
    help="Coding agents: install memcli's hooks and MCP server, and the hooks themselves.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
)
app.add_typer(agent_app, name="agent")


@agent_app.command("install")
def agent_install(
    ctx: typer.Context,
    agent: str = AGENT,
    scope: str = SCOPE,
    project: Path | None = PROJECT,
    dry_run: bool = DRY_RUN,
    as_json: bool = JSON,
) -> None:
    """Install into an agent: hooks, MCP server and a memory policy (safe to run again)."""
    _install(ctx, agent, scope, project, dry_run, as_json, remove=False)


@agent_app.command("uninstall")
def agent_uninstall(
    ctx: typer.Context,
    agent: str = AGENT,
    scope: str = SCOPE,
    project: Path | None = PROJECT,
    dry_run: bool = DRY_RUN,
    as_json: bool = JSON,
) -> None:
    """Remove exactly what install added; every other setting stays."""
    _install(ctx, agent, scope, project, dry_run, as_json, remove=True)


def _install_warnings(
    agent: str, root: Path, project: Path | None, dry_run: bool, plugged: bool
) -> list[str]:
    """What an install says beside its changes: no MCP server (unless memcli's plugin serves
    one), or another scope's install or the plugin's hooks beside this one."""
    from memcli.agents import claude_plugin as plugin  # agent set-up only
    from memcli.agents import setup
    from memcli.agentsetup import commands, installed

    warnings: list[str] = []
    problem = commands.mcp_problem(commands.program())
    if problem and not plugged:  # the rest works without it: the hooks, the policy
        warnings.append(
            f"the MCP server is not installed: {problem} ({commands.MCP_HINT}, then run this again)"
        )
    if not dry_run:
        where = Path(project).expanduser().resolve() if project is not None else root
        rows = setup.status(root, where) + plugin.rows(where)
        warnings += [w for w in installed.scope_warnings(rows) if f" {agent} " in w]
    return warnings


def _install(
    ctx: typer.Context,
    agent: str,
    scope: str,
    project: Path | None,
    dry_run: bool,
    as_json: bool,
    *,
    remove: bool,
) -> None:
    from memcli.agents import registry  # agent set-up only

    st = state(ctx)
    with st.memory(lenient=True) as mem:
        if agent == "generic":
            _generic(st, mem.ws.root, project, as_json)
            return
        report = mem.agent_install(
            agent, scope=scope, project=project, dry_run=dry_run, remove=remove
        )
        flushing = mem.session_flushing(agent)
        root = mem.ws.root
        earlier = (
            len(mem.import_sessions(agents=(agent,), dry_run=True))
            if not remove and not dry_run and registry.get(agent).saves_sessions
            else 0
        )
    plugged = report.plugin is not None
    warnings = [] if remove else _install_warnings(agent, root, project, dry_run, plugged)
    if as_json:
        st.out.json({**report.as_dict(), "warnings": warnings})
        return
    said = _beside_plugin(report.plugin) if report.plugin is not None and not remove else []
    if dry_run:
        sys.stdout.write(report.diff or "no changes\n")
        _say(st, said, warnings)
        return
    for change in report.as_dict()["files"]:
        st.out.line(f"{change['action']:>9}  {change['path']}")
    done = "uninstalled from" if remove else "installed into"
    st.out.info(f"memcli {done} {agent} ({scope} scope: {_where(agent, scope)})")
    _say(st, said, warnings)
    note = registry.get(agent).install_note(scope) if not remove else None
    if note:
        st.out.info(note)
    if not remove and registry.get(agent).saves_sessions:
        _say_flushing(st, flushing)
    if earlier:
        st.out.info(
            f"{earlier} earlier {agent} session(s) of this project found:"
            f" 'memcli agent import --agent {agent}' saves their facts (--dry-run lists them)"
        )


def _beside_plugin(found: PluginInstall) -> list[str]:
    """The line that says memcli's plugin serves the hooks and the server."""
    from memcli.agents.claude_plugin import beside  # beside memcli's plugin only

    return [beside(found)]


def _say(st: State, said: list[str], warnings: list[str]) -> None:
    for line in said:
        st.out.info(line)
    for line in warnings:
        st.out.warn(line)


def _say_flushing(st: State, flushing: dict[str, Any]) -> None:
    """One line: what saves sessions as facts, and how to turn it off; or why nothing does."""
    if flushing["backend"] == "agent":
        from memcli.providers.agentcli import BACKENDS  # names only

        used = ", ".join(f"{name} ({BACKENDS[name].program})" for name in flushing["agents"])
        st.out.info(
            f"sessions are saved as facts by the agent's own model and login: {used};"
            " turn off: memcli config set --user agent.own_model false"
        )
    elif flushing["on"]:
        st.out.info(f"sessions are saved at compaction and at their end ({flushing['model']})")
    else:
        st.out.warn(f"{flushing['why']}; set one to save them: memcli config set llm.model ...")


def _where(agent: str, scope: str) -> str:
    """Which sessions the install reaches, truthfully."""
    if scope == "user":
        return "every project; each finds its own workspace"
    return "this project"


def _generic(st: State, root: Path, project: Path | None, as_json: bool) -> None:
    """The MCP server entry and the policy text, for any other MCP client."""
    from memcli.agentsetup.commands import program
    from memcli.agentsetup.edits import policy_text

    prog = program()  # any client, started in any folder: this workspace, named
    entry = {
        "mcpServers": {"memcli": {"command": prog[0], "args": [*prog[1:], "-w", str(root), "mcp"]}}
    }
    if as_json:
        st.out.json({**entry, "policy": policy_text()})
        return
    import json

    st.out.line("MCP server (add to your client's MCP settings):")
    st.out.line(json.dumps(entry, indent=2))
    st.out.line()
    st.out.line("Memory policy (add to the agent's instructions file):")
    st.out.line(policy_text().rstrip("\n"))


@agent_app.command("status")
def agent_status(ctx: typer.Context, project: Path | None = PROJECT, as_json: bool = JSON) -> None:
    """Where memcli is installed, whether the hooks work here, and their latest errors."""
    from memcli.agentsetup.installed import scope_warnings, server_problems  # agent set-up only

    st = state(ctx)
    with st.memory(lenient=True) as mem:
        report = mem.agent_status(project)
    installed = report["installed"]
    warnings = server_problems(installed) + scope_warnings(installed)
    if as_json:
        st.out.json({**report, "warnings": warnings})
        return
    rows = [
        [
            r["agent"],
            r["scope"] if r.get("plugin", {"enabled": True})["enabled"] else "plugin (off)",
            ", ".join(r["hooks"]) or "-",
            ("cannot start" if r.get("mcp_problem") else "yes") if r["mcp"] else "no",
            "yes" if r["policy"] else "no",
        ]
        for r in installed
    ]
    st.out.table(["agent", "scope", "hooks", "mcp", "policy"], rows, title=report["workspace"])
    for line in warnings:
        st.out.warn(line)
    check = report["check"]
    if check["ok"]:
        n = check["briefing_entries"]
        st.out.info(f"hooks work here: the briefing holds {n} entr{'y' if n == 1 else 'ies'}")
    else:
        st.out.warn(f"hooks fail here: {check['error']}")
    _say_flushing(st, report["flush"])
    for line in report["errors"][-5:]:
        st.out.warn(f"logged: {line}")


@agent_app.command("hook")
def agent_hook(
    ctx: typer.Context,
    event: str = typer.Argument(
        ..., metavar="EVENT", help="session-start, prompt, pre-compact, session-end or file."
    ),
) -> None:
    """Run one hook: read the agent's JSON payload on stdin, print the agent's JSON.
    Always exits 0; failures go to .memcli/agent.log."""
    from memcli.cli.fastpath import run_hook  # the same function the fast path runs

    run_hook(state(ctx).workspace, event)


@agent_app.command("flush-session")
def agent_flush_session(
    ctx: typer.Context,
    session_id: str = typer.Option("", "--session-id", help="The agent's session id."),
    transcript: Path | None = typer.Option(
        None, "--transcript", help="The session's transcript file."
    ),
    event: str = typer.Option("manual", "--event", help="What asked for it (for the log)."),
    due: bool = typer.Option(
        False,
        "--due",
        help="Then flush the sessions due: those whose flush failed, and this project's"
        " recent sessions of the agents never flushed.",
    ),
    as_json: bool = JSON,
) -> None:
    """Flush the turns of a session's transcript not flushed before (what the pre-compact
    and session-end hooks start in the background), and with --due the sessions due."""
    from memcli.agent.hook_runner import run_due_flushes, run_session_flush

    st = state(ctx)
    if not due and not (session_id and transcript is not None):
        raise BadInput(
            "give --session-id and --transcript, or --due", hint="memcli agent flush-session --help"
        )
    hook = event != "manual"  # started by a hook: failures are in agent.log, stamped
    done = []
    # one Memory (one settings load, one index) for the session and every session due
    with st.memory(lenient=True) as mem:
        try:
            if session_id and transcript is not None:
                done.append(run_session_flush(mem, session_id, str(transcript), event))
            if due:
                done += run_due_flushes(mem, event, current=session_id or None)
        except Exception:
            if hook:
                raise typer.Exit(0) from None
            raise
    if as_json:
        st.out.json([d.as_dict() for d in done] if due else done[0].as_dict())
        return
    for d in done:
        written = len(d.result.written) if d.result is not None else 0
        who = f"{d.session_id}: " if due else ""
        st.out.line(f"{who}{d.new_turns} new of {d.turns} turns; {written} fact(s) written")


@agent_app.command("import")
def agent_import(
    ctx: typer.Context,
    agent: str = typer.Option(
        "all",
        "--agent",
        help="Whose sessions: claude-code, codex, gemini, opencode or all.",
        show_default=True,
    ),
    days: int = typer.Option(30, "--days", help="Sessions changed within this many days."),
    max_sessions: int = typer.Option(
        50, "--max-sessions", help="At most this many sessions, the newest first."
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="List the sessions it would read; read and send nothing."
    ),
    as_json: bool = JSON,
) -> None:
    """Save the facts of this project's past agent sessions (Claude Code's, Codex's and
    Gemini CLI's session folders, OpenCode's database; sessions run here or below), newest
    first. A session is never
    saved twice (hooks and imports share one record), so a stopped import goes on where it
    stopped; --dry-run lists what it would read."""
    from memcli.agents.registry import names  # names only

    agents = names() if agent == "all" else (agent,)
    if agent != "all" and agent not in names():
        raise BadInput(f"unknown agent {agent!r}", hint=f"--agent {', '.join(names())} or all")
    st = state(ctx)
    with st.memory(lenient=True) as mem, st.out.progress("importing") as progress:

        def step(n: int, total: int, _session: PastSession) -> None:
            if progress is not None:
                progress(n - 1, total)

        rows = mem.import_sessions(
            agents=agents, days=days, limit=max_sessions, dry_run=dry_run, progress=step
        )
    if as_json:
        st.out.json({"dry_run": dry_run, "sessions": rows})
        return
    for row in rows:
        head = f"{row['modified']}  {row['agent']:<11}  {row['session_id']}"
        if dry_run:
            st.out.line(f"{head}  {row['cwd']}")
        elif "error" in row:
            st.out.line(f"{head}  failed: {row['error']}")
        else:
            st.out.line(f"{head}  {row['new_turns']} new turns, {row['written']} fact(s)")
    saved = sum(row.get("written", 0) for row in rows)
    what = "would read" if dry_run else f"read ({saved} fact(s) saved)"
    st.out.info(f"{len(rows)} session(s) {what}")
