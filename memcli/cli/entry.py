"""The ``memcli`` console entry point, tuned for a process that lives a fraction of a second."""

from __future__ import annotations

import sys

from memcli.cli import fastpath
from memcli.cli.argv import loading


def main() -> None:
    """Run a search without Typer (:mod:`memcli.cli.fastpath`) where it can, else the full CLI.

    What either needs is imported with the cyclic garbage collector off (:func:`loading`):
    start-up creates tens of thousands of objects that live as long as the process, and while
    they load the collector would traverse them again and again (a fifth of a search here).
    They are frozen out of later collections once loaded, and the collector runs as usual for
    the command. A search loads the service layer the same way, once it knows it searches in
    process (one the engine answers never loads it). A hook runs whole that way: it lives a
    fraction of a second, and what it creates besides its imports is little.
    """
    hook = fastpath.hook(sys.argv[1:])
    if hook is not None:  # an agent's hook: no Typer, and exit 0 whatever happens
        with loading():  # imports and all: a hook makes little garbage and ends at once
            code = fastpath.run_hook(*hook)
        sys.exit(code)
    served = fastpath.mcp(sys.argv[1:])
    if served is not None:  # an MCP client waits for initialize: no Typer either
        sys.exit(fastpath.run_mcp(*served))
    plain = fastpath.parse(sys.argv[1:])
    if plain is not None:
        with loading():
            from memcli.cli import searching  # noqa: F401  (what fastpath.run calls)
        sys.exit(fastpath.run(plain))
    with loading():
        # the Typer app: a fast-path search never loads it
        from memcli.cli.app import main as run_cli
    run_cli()
