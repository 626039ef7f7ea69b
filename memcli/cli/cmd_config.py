"""``memcli config``: every setting with its value and origin; get, set, unset, path."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import typer

from memcli.cli.app import MemcliTyper, app, handle_errors, state
from memcli.cli.cmd_core import JSON
from memcli.cli.output import Output
from memcli.cli.runtime import State

if TYPE_CHECKING:
    from memcli.config.operations import SettingChange, SettingEntry
    from memcli.config.trust import TrustState
    from memcli.memory import Memory

config_app = MemcliTyper(
    help="Show every setting with its value and origin (no subcommand), or get, set, unset "
    "one. Layers, later wins: default < user config.toml < workspace memcli.toml < "
    "environment (MEMCLI_SECTION_KEY) < command-line flag.",
    no_args_is_help=False,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
)
app.add_typer(config_app, name="config")

USER = typer.Option(
    False, "--user", help="The user config.toml instead of the workspace memcli.toml."
)


def _setting_names(ctx: Any, param: Any, incomplete: str) -> list[str]:
    """Shell completion of KEY: every setting name."""
    from memcli.config import SETTINGS  # the registry: not loaded on --help

    return [s.key for s in SETTINGS if s.key.startswith(incomplete)]


KEY = typer.Argument(
    ...,
    metavar="KEY",
    help="A setting, e.g. search.limit.",
    shell_complete=_setting_names,
    show_default=False,
)


@contextmanager
def _memory(st: State) -> Iterator[Memory | None]:
    """The workspace's Memory, through which every config operation on a workspace goes;
    None outside one (the user config alone: ``--user``, or a listing of it). Opened leniently
    and its warnings left unsaid: a bad setting is what ``memcli config`` shows and fixes."""
    from memcli.config.operations import find  # config code: not on --help or search

    if find(st.workspace) is None:
        yield None
        return
    from memcli.memory import Memory  # the service layer: not on --help

    with Memory.open(st.workspace, lenient=True) as mem:
        yield mem


def _show(value: Any) -> str:
    """A value as TOML writes it (strings quoted), for the table."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _raw(value: Any) -> str:
    """A value for scripts (``config get``): strings bare, lists as a TOML array."""
    return value if isinstance(value, str) else _show(value)


@config_app.callback(invoke_without_command=True)
@handle_errors
def config_show(ctx: typer.Context, as_json: bool = JSON) -> None:
    """Every setting with its value and origin (default, user, workspace, env, flag)."""
    if ctx.invoked_subcommand is not None:
        return
    from memcli.config.operations import list_settings  # config code: not on --help or search

    st = state(ctx)
    with _memory(st) as mem:
        listing = mem.config_list() if mem is not None else list_settings(st.workspace)
    if as_json:
        st.out.json(listing.as_dict())
        return
    st.out.table(
        ["setting", "value", "origin"],
        [[e.key, _show(e.value), _origin(e)] for e in listing.entries],
        title="memcli settings",
    )
    if listing.workspace is None:
        st.out.info("no workspace here: workspace settings (memcli.toml) are not shown")
    elif listing.trust is not None and listing.trust.ignored:
        st.out.info("memcli.toml is not trusted: review it, then run 'memcli trust'")


def _origin(entry: SettingEntry) -> str:
    """Where a value came from, and the untrusted workspace value it stands in for."""
    if entry.ignored is None:
        return str(entry.origin)
    return f"{entry.origin}; workspace {_show(entry.ignored)} ignored (untrusted)"


@config_app.command("get")
def config_get(
    ctx: typer.Context,
    key: str = KEY,
    as_json: bool = JSON,
) -> None:
    """Print the value of one setting (JSON: with origin, default and variable)."""
    from memcli.config.operations import get_setting  # config code: not on --help or search

    st = state(ctx)
    with _memory(st) as mem:
        entry = mem.config_get(key) if mem is not None else get_setting(key, st.workspace)
    if as_json:
        st.out.json({"key": key, **entry.as_dict()})
    else:
        st.out.line(_raw(entry.value))
        if entry.ignored is not None:
            st.out.warn(
                f"memcli.toml sets {key} = {_show(entry.ignored)}, ignored: the file is not "
                "trusted (memcli trust)"
            )


# "-1" is a value to check against the setting's range, not an unknown option
@config_app.command("set", context_settings={"ignore_unknown_options": True})
def config_set(
    ctx: typer.Context,
    key: str = KEY,
    value: str = typer.Argument(
        ...,
        metavar="VALUE",
        help="The new value; lists take a TOML array or comma-separated items.",
    ),
    user: bool = USER,
    as_json: bool = JSON,
) -> None:
    """Write one setting to memcli.toml (or --user config.toml), keeping comments. No secrets."""
    from memcli.config.operations import set_setting  # config code: not on --help or search

    st = state(ctx)
    with _memory(st) as mem:
        if mem is not None:
            change = mem.config_set(key, value, user=user)
        else:
            change = set_setting(key, value, st.workspace, user=user)
    _report(ctx, change, as_json)


@config_app.command("unset")
def config_unset(
    ctx: typer.Context,
    key: str = KEY,
    user: bool = USER,
    as_json: bool = JSON,
) -> None:
    """Remove one setting from memcli.toml (or --user config.toml), keeping comments."""
    from memcli.config.operations import unset_setting  # config code: not on --help or search

    st = state(ctx)
    with _memory(st) as mem:
        if mem is not None:
            change = mem.config_unset(key, user=user)
        else:
            change = unset_setting(key, st.workspace, user=user)
    _report(ctx, change, as_json)


def _report(ctx: typer.Context, change: SettingChange, as_json: bool) -> None:
    """What the file now says, and the value in effect (a layer above may still win)."""
    st = state(ctx)
    effective = change.effective
    if change.shadowed:
        where = effective.env if effective.origin == "env" else effective.origin
        st.out.warn(
            f"{change.key} is {_show(effective.value)} from {where}, which wins over {change.scope}"
        )
    if as_json:
        st.out.json(change.as_dict())
        return
    if change.is_set:
        verb = "set" if change.changed else "already set:"
        st.out.line(f"{verb} {change.key} = {_show(change.value)} in {change.file}")
    else:
        verb = "removed" if change.changed else "not set in"
        st.out.line(f"{verb} {change.key} {'from ' if change.changed else ''}{change.file}")


@config_app.command("path")
def config_path(
    ctx: typer.Context,
    user: bool = typer.Option(False, "--user", help="Print only the user config file."),
    workspace: bool = typer.Option(
        False, "--workspace", help="Print only the workspace memcli.toml."
    ),
    as_json: bool = JSON,
) -> None:
    """The config files memcli reads (they need not exist)."""
    from memcli.config.operations import config_paths  # config code: not on --help or search

    st = state(ctx)
    with _memory(st) as mem:
        found = mem.config_paths() if mem is not None else None
    paths = (found or config_paths(st.workspace, require_workspace=workspace)).as_dict()
    if as_json:
        st.out.json(paths)
    elif user or workspace:
        st.out.line(paths["user" if user else "workspace"] or "")
    else:
        st.out.kv([(name, value) for name, value in paths.items()])


@app.command("trust")
def trust_cmd(
    ctx: typer.Context,
    show: bool = typer.Option(False, "--show", help="Show the trust state; change nothing."),
    revoke: bool = typer.Option(False, "--revoke", help="Forget the trust in this memcli.toml."),
    list_all: bool = typer.Option(
        False, "--list", help="Every trusted memcli.toml recorded in the user config."
    ),
    as_json: bool = JSON,
) -> None:
    """Trust this workspace's memcli.toml as it is now. Until then the settings in it that
    reach outside the workspace or spend a credential (embedding/llm model, api_base,
    api_key_env, llm.prompt_file) are ignored; a changed file needs trusting again. Your user
    config and environment always apply."""
    from memcli.errors import BadInput  # errors only: the trust code loads with the call

    st = state(ctx)
    if show + revoke + list_all > 1:
        raise BadInput("--show, --revoke and --list cannot be combined")
    if list_all:
        from memcli.config.trust import list_trusted  # trust code: not on --help or search

        records = list_trusted()
        if as_json:
            st.out.json({"trusted": [r.as_dict() for r in records]})
        elif records:
            st.out.table(
                ["file", "state", "sha256"], [[r.file, r.state, r.sha256] for r in records]
            )
        else:
            st.out.info("no trusted memcli.toml")
        return
    with st.memory(lenient=True, warn_untrusted=False) as mem:
        trust_state = mem.trust_state() if show else mem.revoke_trust() if revoke else mem.trust()
    if as_json:
        st.out.json(trust_state.as_dict())
        return
    _trust_report(st.out, trust_state, "show" if show else "revoke" if revoke else "trust")


def _trust_report(out: Output, ts: TrustState, action: str) -> None:
    """The state of a memcli.toml in words, and the settings needing trust it sets."""
    short = (ts.sha256 or "")[:19]
    if action == "trust":
        verb = "trusted" if ts.changed else "already trusted:"
        out.line(f"{verb} {ts.file} ({short})")
    elif action == "revoke":
        out.line(f"{'revoked trust in' if ts.changed else 'was not trusted:'} {ts.file}")
    else:
        words = {
            "trusted": f"trusted ({short})",
            "changed": "changed since it was trusted: its settings below are ignored",
            "untrusted": "not trusted: its settings below are ignored",
            "no-file": "does not exist",
        }
        out.line(f"{ts.file}: {words[ts.state]}")
    if len(ts.covers) > 1:  # the files its settings name are trusted with it
        out.line(f"  trust covers {', '.join(ts.covers)}")
    for key, value in ts.sets.items():
        out.line(f"  {key} = {_show(value)}")
    if action == "trust" and not ts.sets:
        out.info("it sets nothing that needs trust: its settings applied already")
    if action == "show" and ts.state in ("untrusted", "changed") and ts.sets:
        out.info("review the file, then run 'memcli trust' to use them")
