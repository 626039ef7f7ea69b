"""``memcli search`` without Typer, for the call agents make most.

Importing Typer and Click costs about 55 ms, a fifth of a search at 10k files. When the
arguments are the plain form of a search (global ``-w DIR``/``-q``/``--no-color``/``--debug``,
then ``search`` with ``--json`` and ``-n N``/``--limit N`` and one query), they are parsed
here and :func:`memcli.cli.searching.run` is called directly, the function the Typer command
calls too. Anything else (help, any other option, a value Click would reject, a query that
starts with '-') returns None and goes to the full CLI. ``tests/test_fastpath.py`` runs both
ways on the same arguments and requires the same output and exit code.
"""

from __future__ import annotations

from typing import Any

GLOBAL_FLAGS = {"-q": "quiet", "--quiet": "quiet", "--no-color": "no_color", "--debug": "debug"}
GLOBAL_VALUES = {"-w": "workspace", "--workspace": "workspace"}
SEARCH_FLAGS = {"--json": "as_json"}
SEARCH_COUNTS = {"-n": "limit", "--limit": "limit"}


def parse(args: list[str]) -> tuple[dict[str, Any], str, dict[str, Any]] | None:
    """(global flags, query, search options) of a plain search, else None."""
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
    query: str | None = None
    options: dict[str, Any] = {}
    rest = args[i + 1 :]
    j = 0
    while j < len(rest):
        arg = rest[j]
        name, value = arg, None
        if arg.startswith("--limit="):
            name, value = arg.split("=", 1)
        if arg in SEARCH_FLAGS:
            options[SEARCH_FLAGS[arg]] = True
        elif name in SEARCH_COUNTS:
            if value is None:
                j += 1
                if j >= len(rest):
                    return None
                value = rest[j]
            if not (value.isascii() and value.isdigit()):
                return None  # Click's own conversion and message
            options[SEARCH_COUNTS[name]] = int(value)
        elif arg.startswith("-") or query is not None:
            return None
        else:
            query = arg
        j += 1
    if query is None:
        return None
    return flags, query, options


def run(plain: tuple[dict[str, Any], str, dict[str, Any]]) -> int:
    """Run a search :func:`parse` accepted; returns its exit code."""
    from memcli.cli import searching
    from memcli.cli.runtime import State, exit_code_for

    flags, query, options = plain
    try:
        return searching.run(State(**flags), query, **options)
    except (KeyboardInterrupt, Exception) as exc:
        return exit_code_for(exc)
