"""What every run does before its command: the global options (``-w DIR``, ``-q``,
``--no-color``, ``--debug``) wherever they are given, and imports made with the collector off.

Click reads the app's options only before the command name; people and agents write them after
it too (``memcli search -w DIR words``). :func:`hoist_globals` moves them in front, for the fast
path and the Typer app alike. Nothing after ``--`` moves, and a name the command declares itself
(``watch -q``) stays with the command. :func:`loading` is the entry point's
(:mod:`memcli.cli.entry`), here so that the in-process search (:mod:`memcli.cli.searching`)
uses it without importing the entry point. Only a few standard modules: every run loads this.
"""

from __future__ import annotations

import gc
from collections.abc import Collection, Iterator
from contextlib import contextmanager

GLOBAL_WITH_VALUE = ("-w", "--workspace")
GLOBAL_FLAGS = ("-q", "--quiet", "--no-color", "--debug")


def command_index(args: list[str]) -> int | None:
    """Where the command name is, when the global options before it are plain."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in GLOBAL_WITH_VALUE:
            i += 2
        elif arg in GLOBAL_FLAGS or arg.startswith("--workspace="):
            i += 1
        elif arg.startswith("-"):
            return None  # --help, --version, "-qw DIR", a typo: the whole app answers
        else:
            return i
    return None


def hoist_globals(args: list[str], owned: Collection[str] = ()) -> list[str]:
    """``args`` with the global options found after the command moved before it; ``owned``:
    option names the command declares itself, left where they are."""
    at = command_index(args)
    if at is None:
        return args
    before, after = args[: at + 1], args[at + 1 :]
    moved: list[str] = []
    kept: list[str] = []
    i = 0
    while i < len(after):
        arg = after[i]
        if arg == "--":
            kept.extend(after[i:])
            break
        if arg in owned or arg.split("=", 1)[0] in owned:
            kept.append(arg)
        elif arg in GLOBAL_WITH_VALUE and i + 1 < len(after):
            moved += after[i : i + 2]
            i += 1
        elif arg in GLOBAL_FLAGS or arg.startswith("--workspace="):
            moved.append(arg)
        else:
            kept.append(arg)
        i += 1
    if not moved:
        return args
    return before[:at] + moved + before[at:] + kept


def bare_model_list(args: list[str]) -> list[str]:
    """``init ... --local-model`` without a name (last, or before another option) asks for the
    list of models: ``--local-model list``."""
    at = command_index(args)
    if at is None or args[at] != "init":
        return args
    out = list(args)
    for i in range(len(out) - 1, at, -1):
        if out[i] == "--local-model" and (i + 1 == len(out) or out[i + 1].startswith("-")):
            out.insert(i + 1, "list")
    return out


@contextmanager
def loading() -> Iterator[None]:
    """Imports made with the cyclic garbage collector off, their objects frozen out of later
    collections once loaded (see :func:`memcli.cli.entry.main`)."""
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()
