"""The ``memcli`` console entry point, tuned for a process that lives a fraction of a second."""

from __future__ import annotations

import gc
import sys

from memcli.cli import fastpath


def main() -> None:
    """Run a search without Typer (:mod:`memcli.cli.fastpath`) where it can, else the full CLI.

    What either needs is imported with the cyclic garbage collector off: start-up creates
    tens of thousands of objects that live as long as the process, and while they load the
    collector would traverse them again and again (a fifth of a search here). They are frozen
    out of later collections once loaded, and the collector runs as usual for the command.
    """
    hook = fastpath.hook(sys.argv[1:])
    if hook is not None:  # an agent's hook: no Typer, and exit 0 whatever happens
        sys.exit(fastpath.run_hook(*hook))
    plain = fastpath.parse(sys.argv[1:])
    gc.disable()
    try:
        if plain is not None:
            from memcli.cli import searching  # noqa: F401  (what fastpath.run calls)
        else:
            # the Typer app: a fast-path search never loads it
            from memcli.cli.app import main as run_cli
    finally:
        gc.freeze()
        gc.enable()
    if plain is not None:
        sys.exit(fastpath.run(plain))
    run_cli()
