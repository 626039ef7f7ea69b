"""``memcli search`` without Typer, for the call agents make most.

Importing Typer and Click costs about 55 ms, a fifth of a search at 10k files. When the
arguments are a search (global ``-w DIR``/``-q``/``--no-color``/``--debug``, then ``search``
with any of its options and one query, or ``--batch``), they are parsed here and
:func:`memcli.cli.searching.run` is called directly, the function the Typer command calls
too. Anything else returns None and goes to the full CLI: help, another command, an unknown
option, ``--``, a short option with its value attached, a value Click might read otherwise
(one starting with '-', a number not plainly written), a query word that starts with '-'.
Global options after ``search`` count as before it, and the words of an unquoted query are
joined with spaces, as the Typer command does. ``tests/test_fastpath.py`` checks the option
table against the Click command and runs both ways on the same arguments, requiring the same
output and exit code.
"""

from __future__ import annotations

from typing import Any

GLOBAL_FLAGS = {"-q": "quiet", "--quiet": "quiet", "--no-color": "no_color", "--debug": "debug"}
GLOBAL_VALUES = {"-w": "workspace", "--workspace": "workspace"}
_FLAG_VALUES = {"flag": True, "on": True, "off": False}


def search_options() -> dict[str, tuple[str, str]]:
    """Every option name of ``search``: (field of SearchArgs, kind), from its one declaration
    (:mod:`memcli.cli.search_args`). ``on``/``off``: the two names of a switch."""
    from memcli.cli.search_args import OPTIONS  # only once the command is known to be search

    table: dict[str, tuple[str, str]] = {}
    for field, kind, names, _ in OPTIONS:
        if kind == "switch":
            table[names[0]], table[names[1]] = (field, "on"), (field, "off")
        else:
            table.update((name, (field, kind)) for name in names)
    return table


def _convert(kind: str, value: str) -> Any:
    """The value Click would make of ``value``, or None where Click might differ (its own
    conversion and message then decide)."""
    if value.startswith("-"):
        return None  # an option name where a value was expected, or a negative number
    if kind == "int":
        return int(value) if value.isascii() and value.isdigit() else None
    if kind == "float":  # digits with at most one point: "0.5", "1", ".25", "2."
        digits = value.replace(".", "", 1)
        return float(value) if digits.isascii() and digits.isdigit() else None
    return value


def parse(args: list[str]) -> tuple[dict[str, Any], str | None, dict[str, Any]] | None:
    """(global flags, query, search options) of a search in a form parsed here, else None.
    Global options may follow the command; the words of an unquoted query are joined."""
    from memcli.cli.argv import hoist_globals  # no imports of its own

    args = hoist_globals(args)
    flags: dict[str, Any] = {}
    i = 0
    while True:
        if i >= len(args):
            return None
        arg = args[i]
        if arg in GLOBAL_FLAGS:
            flags[GLOBAL_FLAGS[arg]] = True
        elif arg in GLOBAL_VALUES and i + 1 < len(args):
            i += 1
            flags[GLOBAL_VALUES[arg]] = args[i]
        elif arg.startswith("--workspace="):
            flags["workspace"] = arg.split("=", 1)[1]
        elif arg == "search":
            break
        else:
            return None
        i += 1
    words: list[str] = []
    options: dict[str, Any] = {}
    known = search_options()
    rest = args[i + 1 :]
    j = 0
    while j < len(rest):
        arg = rest[j]
        j += 1
        if not arg.startswith("-"):
            words.append(arg)
            continue
        name, eq, attached = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name not in known:
            return None  # help, "--", a short option with its value attached, a typo...
        dest, kind = known[name]
        if kind in _FLAG_VALUES:
            if eq:
                return None  # a flag given a value: Click's error
            options[dest] = _FLAG_VALUES[kind]
            continue
        if not eq:
            if j >= len(rest):
                return None
            attached = rest[j]
            j += 1
        value = _convert(kind, attached)
        if value is None:
            return None
        if kind == "list":
            options.setdefault(dest, []).append(value)
        else:
            options[dest] = value
    if not words and not options.get("batch"):
        return None
    return flags, " ".join(words) if words else None, options


def run(plain: tuple[dict[str, Any], str | None, dict[str, Any]]) -> int:
    """Run a search :func:`parse` accepted; returns its exit code."""
    from memcli.cli import searching  # parse() stays cheap: only a search run loads these
    from memcli.cli.runtime import State, exit_code_for, wants_json
    from memcli.cli.search_args import SearchArgs

    flags, query, options = plain
    state = State(**flags)
    try:
        return searching.run(state, query, SearchArgs(**options))
    except (KeyboardInterrupt, Exception) as exc:
        return exit_code_for(exc, state, as_json=wants_json(options))


def _command(args: list[str]) -> tuple[str | None, list[str]] | None:
    """(workspace, the command's words) when ``args`` are global flags (``-w DIR`` and the
    plain switches, anywhere) and a command, else None."""
    from memcli.cli.argv import hoist_globals  # no imports of its own

    args = hoist_globals(args)
    workspace: str | None = None
    i = 0
    while i < len(args) and args[i].startswith("-"):
        arg = args[i]
        if arg in GLOBAL_VALUES and i + 1 < len(args):
            workspace = args[i + 1]
            i += 1
        elif arg.startswith("--workspace="):
            workspace = arg.split("=", 1)[1]
        elif arg not in GLOBAL_FLAGS:
            return None
        i += 1
    return workspace, args[i:]


def hook(args: list[str]) -> tuple[str | None, str] | None:
    """(workspace, event) when ``args`` are ``[-w DIR] agent hook EVENT`` (global flags
    allowed anywhere), which runs without Typer: an agent runs it on every prompt."""
    parsed = _command(args)
    if parsed is None:
        return None
    workspace, rest = parsed
    if len(rest) != 3 or rest[:2] != ["agent", "hook"] or rest[2].startswith("-"):
        return None
    return workspace, rest[2]


def mcp(args: list[str]) -> tuple[str | None] | None:
    """(workspace,) when ``args`` are ``[-w DIR] mcp``, which runs without Typer: a client
    waits for its answer to ``initialize`` (:mod:`memcli.agent.mcp_front`)."""
    parsed = _command(args)
    if parsed is None or parsed[1] != ["mcp"]:
        return None
    return (parsed[0],)


def run_mcp(workspace: str | None) -> int:
    """Serve MCP over stdio (:func:`memcli.agent.mcp_front.serve`), or exit 2 when the SDK
    is not installed."""
    import sys
    from importlib.util import find_spec

    if find_spec("mcp") is None:
        sys.stderr.write(
            "Error: memcli mcp needs the MCP SDK (mcp is missing)\n"
            "Hint: pip install 'memcli[mcp]' (in a checkout: make extras)\n"
        )
        return 2
    from memcli.agent.mcp_front import serve

    return serve(workspace)


def run_hook(workspace: str | None, event: str) -> int:
    """Run a hook :func:`hook` accepted: print its JSON, exit 0 whatever happened."""
    import sys

    from memcli.agent.hook_runner import run_hook as run

    data = sys.stdin.buffer.read() if not sys.stdin.isatty() else b""
    text = run(event, data.decode("utf-8", errors="replace"), workspace)
    if text:
        sys.stdout.write(text + "\n")
    return 0
