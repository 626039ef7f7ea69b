"""The ``memcli`` console entry point, tuned for a process that lives a fraction of a second."""

from __future__ import annotations

import gc
import sys


def main() -> None:
    """Run a plain search without Typer (:mod:`memcli.cli.fastpath`), else the full CLI.

    The CLI is imported with the cyclic garbage collector off: start-up creates tens of
    thousands of objects that live as long as the process, and while they load the collector
    would traverse them again and again (a fifth of a search here). They are frozen out of
    later collections once loaded, and the collector runs as usual for the command itself.
    """
    from memcli.cli import fastpath

    code = fastpath.run(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    gc.disable()
    try:
        from memcli.cli.app import main as run
    finally:
        gc.freeze()
        gc.enable()
    run()
