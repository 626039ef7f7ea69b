"""``memcli config``: every setting with its value and origin; get, set, unset, path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from memcli.cli.app import MemcliTyper, app, handle_errors, state
from memcli.cli.cmd_core import JSON
from memcli.errors import WorkspaceNotFound

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
    from memcli.config import DEFAULTS

    names = [f"{s}.{n}" for s, ns in DEFAULTS.items() for n in ns]
    return [n for n in names if n.startswith(incomplete)]


KEY = typer.Argument(
    ...,
    metavar="KEY",
    help="A setting, e.g. search.limit.",
    shell_complete=_setting_names,
    show_default=False,
)


def _load(ctx: typer.Context, *, need_workspace: bool = False) -> tuple[Any, Any]:
    """(workspace or None, settings). Outside a workspace: defaults, user config and env."""
    from memcli.config import load_settings
    from memcli.notes.workspace import find_workspace

    try:
        ws = find_workspace(state(ctx).workspace)
    except WorkspaceNotFound as exc:
        if need_workspace:
            exc.hint = "run 'memcli init', pass -w DIR, or use --user"
            raise
        ws = None
    return ws, load_settings(ws.root if ws else None)


def _entry(settings: Any, key: str) -> dict[str, Any]:
    from memcli.config import DEFAULTS, env_var, split_key

    section, name = split_key(key)
    return {
        "value": settings.get(key),
        "origin": settings.origin(key),
        "default": DEFAULTS[section][name],
        "env": env_var(key),
    }


def _show(value: Any) -> str:
    """A value as TOML writes it (strings quoted), for the table."""
    import json

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
    st = state(ctx)
    ws, settings = _load(ctx)
    from memcli.config import DEFAULTS, user_config_path

    keys = [f"{s}.{n}" for s, names in DEFAULTS.items() for n in names]
    if as_json:
        user = user_config_path()
        wsfile = ws.root / "memcli.toml" if ws else None
        st.out.json(
            {
                "workspace": str(ws.root) if ws else None,
                "files": {
                    "user": {"path": str(user), "exists": user.is_file()},
                    "workspace": (
                        {"path": str(wsfile), "exists": wsfile.is_file()} if wsfile else None
                    ),
                },
                "settings": {key: _entry(settings, key) for key in keys},
            }
        )
        return
    st.out.table(
        ["setting", "value", "origin"],
        [[key, _show(settings.get(key)), settings.origin(key)] for key in keys],
        title="memcli settings",
    )
    if ws is None:
        st.out.info("no workspace here: workspace settings (memcli.toml) are not shown")


@config_app.command("get")
def config_get(
    ctx: typer.Context,
    key: str = KEY,
    as_json: bool = JSON,
) -> None:
    """Print the value of one setting (JSON: with origin, default and variable)."""
    from memcli.config import split_key

    st = state(ctx)
    split_key(key)
    _, settings = _load(ctx)
    if as_json:
        st.out.json({"key": key, **_entry(settings, key)})
    else:
        st.out.line(_raw(settings.get(key)))


@config_app.command("set")
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
    from memcli.config import check_storable, parse_value, write_setting

    check_storable(key)  # a secret's name is refused before anything else is looked at
    parsed = parse_value(key, value)
    check_storable(key, parsed)
    path, scope = _target(ctx, user)
    changed = write_setting(path, key, parsed)
    _report(ctx, key, path, scope, as_json, {"value": parsed, "changed": changed})


@config_app.command("unset")
def config_unset(
    ctx: typer.Context,
    key: str = KEY,
    user: bool = USER,
    as_json: bool = JSON,
) -> None:
    """Remove one setting from memcli.toml (or --user config.toml), keeping comments."""
    from memcli.config import split_key, write_setting

    split_key(key)
    path, scope = _target(ctx, user)
    changed = write_setting(path, key, remove=True)
    _report(ctx, key, path, scope, as_json, {"changed": changed})


def _target(ctx: typer.Context, user: bool) -> tuple[Path, str]:
    from memcli.config import user_config_path

    if user:
        return user_config_path(), "user"
    ws, _ = _load(ctx, need_workspace=True)
    return ws.root / "memcli.toml", "workspace"


def _report(
    ctx: typer.Context, key: str, path: Path, scope: str, as_json: bool, extra: dict[str, Any]
) -> None:
    """What the file now says, and the value in effect (a layer above may still win)."""
    st = state(ctx)
    _, settings = _load(ctx)
    effective = _entry(settings, key)
    if "value" in extra and effective["origin"] != scope:
        where = effective["env"] if effective["origin"] == "env" else effective["origin"]
        st.out.warn(f"{key} is {_show(effective['value'])} from {where}, which wins over {scope}")
    if as_json:
        st.out.json(
            {
                "key": key,
                **extra,
                "file": str(path),
                "scope": scope,
                "effective": {"value": effective["value"], "origin": effective["origin"]},
            }
        )
        return
    if "value" in extra:
        verb = "set" if extra["changed"] else "already set:"
        st.out.line(f"{verb} {key} = {_show(extra['value'])} in {path}")
    else:
        verb = "removed" if extra["changed"] else "not set in"
        st.out.line(f"{verb} {key} {'from ' if extra['changed'] else ''}{path}")


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
    from memcli.config import user_config_path

    st = state(ctx)
    ws, _ = _load(ctx, need_workspace=workspace)
    paths = {
        "user": str(user_config_path()),
        "workspace": str(ws.root / "memcli.toml") if ws else None,
    }
    if as_json:
        st.out.json(paths)
    elif user or workspace:
        st.out.line(paths["user" if user else "workspace"] or "")
    else:
        st.out.kv([(name, value) for name, value in paths.items()])
