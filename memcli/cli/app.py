"""The Typer application: global options, command registration, error mapping.

Library exceptions become exit codes in exactly one place,
:func:`memcli.cli.runtime.exit_code_for`, which :func:`handle_errors` applies to every command.
"""

from __future__ import annotations

import copy
import functools
import importlib
import inspect
import itertools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from typer.main import get_command_name
from typer.models import ArgumentInfo, OptionInfo

from memcli.cli.argv import (
    GLOBAL_FLAGS,
    GLOBAL_WITH_VALUE,
    bare_model_list,
    command_index,
    hoist_globals,
)
from memcli.cli.output import Output
from memcli.cli.runtime import State, exit_code_for, json_error, wants_json
from memcli.errors import ExitCode

try:  # Typer 0.2x carries its own copy of Click; older ones use Click itself
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover - depends on the Typer release
    from click import exceptions as click_errors  # type: ignore[no-redef]

F = TypeVar("F", bound=Callable[..., Any])

EPILOG = (
    "Exit codes: 0 success; 1 nothing found (search, diff); 2 usage or bad input; "
    "3 workspace, index or git problem; 4 embedding/LLM provider failure; 130 interrupted."
)


def state(ctx: typer.Context) -> State:
    obj = ctx.find_root().obj
    return obj if isinstance(obj, State) else State()


class MemcliTyper(typer.Typer):
    """A Typer whose commands all map library errors to exit codes."""

    def command(self, *args: Any, **kwargs: Any) -> Callable[[F], F]:
        register = super().command(*args, **kwargs)

        def decorator(fn: F) -> F:
            name_placeholders(fn)
            register(handle_errors(fn))
            return fn

        return decorator


#: The placeholder of an option's value where its name does not say it well.
METAVARS = {
    "--to": "FILE", "--ns": "NAME", "--tag": "TAG", "--source": "NAME", "--since": "DATE",
    "--until": "DATE", "--path": "GLOB", "--min-score": "SCORE", "--mmr-lambda": "X",
    "--local-model": "MODEL", "--model-path": "DIR", "--prompt-file": "FILE",
}  # fmt: skip


def name_placeholders(fn: Callable[..., Any]) -> None:
    """Give every value of ``fn``'s options and arguments one kind of placeholder, upper
    case (``-n N``, ``--since DATE``, ``TEXT``): Typer's own are mixed (``<str>``,
    ``{text}``). A placeholder the command sets itself is kept."""
    for param in inspect.signature(fn).parameters.values():
        info = param.default
        if not isinstance(info, (OptionInfo, ArgumentInfo)) or info.metavar:
            continue
        if isinstance(info, ArgumentInfo):
            many = "list" in str(param.annotation)
            info.metavar = param.name.upper() + ("..." if many else "")
            continue
        annotation = str(param.annotation)
        if "bool" in annotation:
            continue
        long = next((d for d in info.param_decls or () if d.startswith("--")), "")
        kind = "N" if "int" in annotation else "X" if "float" in annotation else None
        info.metavar = METAVARS.get(long) or kind or long.lstrip("-").upper().replace("-", "_")


#: Commands whose JSON is a stream of events, each with ``event``: an error ends it as one.
EVENT_STREAMS = {"watch"}


def handle_errors(fn: F) -> F:
    """Turn MemcliError (and Ctrl-C, and surprises) into one-line errors and exit codes
    (:func:`memcli.cli.runtime.exit_code_for`)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort):
            raise
        except (KeyboardInterrupt, Exception) as exc:
            ctx = kwargs.get("ctx")  # every command takes the Typer context as ``ctx``
            code = exit_code_for(
                exc,
                state(ctx) if ctx else None,
                as_json=wants_json(kwargs),
                event=fn.__name__ in EVENT_STREAMS,
            )
            raise typer.Exit(code) from None

    return wrapper  # type: ignore[return-value]


app = MemcliTyper(
    name="memcli",
    help="Persistent, searchable memory for agents and people: Markdown in git, indexed in SQLite.",
    epilog=EPILOG,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        from memcli.version import __version__  # only --version prints it

        print(f"memcli {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    ctx: typer.Context,
    workspace: str | None = typer.Option(
        None,
        "--workspace",
        "-w",
        help="Workspace folder (default: $MEMCLI_WORKSPACE or search upwards).",
        show_default=False,
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No warnings or progress on stderr."),
    no_color: bool = typer.Option(False, "--no-color", help="No colour (also: NO_COLOR)."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks on errors."),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """memcli: persistent, searchable memory for agents and people."""
    ctx.obj = State(workspace=workspace, quiet=quiet, no_color=no_color, debug=debug)


#: Command modules, imported in this order (the order of commands in --help).
COMMAND_MODULES = (
    "cmd_core", "cmd_lifecycle", "cmd_watch", "cmd_flush", "cmd_git", "cmd_agent",
    "cmd_serve", "cmd_config", "cmd_doctor",
)  # fmt: skip


def _register() -> None:
    """Commands register themselves on import of their module."""
    for name in COMMAND_MODULES:
        importlib.import_module(f"memcli.cli.{name}")


_register()


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: global options are read wherever they are given
    (:func:`memcli.cli.argv.hoist_globals`) and a usage error is one line plus a hint (exit 2)."""
    args = sys.argv[1:] if argv is None else list(argv)
    one = _app_for(args)
    args = bare_model_list(hoist_globals(args, _owned_options(one)))
    try:
        code = one(args=args, prog_name="memcli", standalone_mode=False)
    except KeyboardInterrupt as exc:  # outside any command (while parsing)
        sys.exit(exit_code_for(exc))
    except click_errors.NoArgsIsHelpError as exc:  # bare ``memcli``: the help
        exc.show()
        sys.exit(exc.exit_code)
    except click_errors.UsageError as exc:
        sys.exit(_usage_error(exc, asks_json(args)))
    except click_errors.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except typer.Abort:
        Output().error("aborted")
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


def _usage_error(exc: click_errors.UsageError, as_json: bool = False) -> int:
    """Report a usage error as one line and a hint naming the command's help (with
    ``as_json``, on stdout as JSON too); returns 2."""
    where = exc.ctx.command_path if exc.ctx is not None else "memcli"
    message = " ".join(exc.format_message().split())
    hint = f"{where} -h shows the usage"
    Output().error(message, hint)
    if as_json:
        json_error(message, hint, int(ExitCode.USAGE))
    return int(ExitCode.USAGE)


def asks_json(args: list[str]) -> bool:
    """Whether the command line asks for JSON on stdout (``--json``, ``--jsonl``,
    ``--batch``, ``--format json``), before any ``--``: read from the words themselves,
    for a usage error Click raised before the command's options were known."""
    words = args[: args.index("--")] if "--" in args else args
    if {"--json", "--jsonl", "--batch", "--format=json", "--format=jsonl"} & set(words):
        return True
    return any(a == "--format" and b in ("json", "jsonl") for a, b in itertools.pairwise(words))


def _owned_options(one: typer.Typer) -> set[str]:
    """The global option names the one command being run declares itself (``watch -q``):
    those stay with the command."""
    if one is app or len(one.registered_commands) != 1:
        return set()
    callback = one.registered_commands[0].callback
    if callback is None:
        return set()
    names: set[str] = set()
    for param in inspect.signature(callback).parameters.values():
        if isinstance(param.default, OptionInfo):
            names.update(str(d) for d in param.default.param_decls or ())
    return names & set(GLOBAL_FLAGS + GLOBAL_WITH_VALUE)


def _app_for(args: list[str]) -> typer.Typer:
    """The app with only the command being run registered.

    Typer builds a Click command (signature, type hints, parameters) for every registered
    command on each run, about 20 ms for all of them; a run needs one. Help, completion and
    unknown commands get the whole app, so their output is unchanged.
    """
    at = command_index(args)
    if at is None:
        return app
    name = args[at]
    commands = [
        c
        for c in app.registered_commands
        if (c.name or get_command_name(c.callback.__name__ if c.callback else "")) == name
    ]
    groups = [g for g in app.registered_groups if g.name == name]
    if len(commands) + len(groups) != 1:
        return app
    one = copy.copy(app)
    one.registered_commands = commands
    one.registered_groups = groups
    return one
