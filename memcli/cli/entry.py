"""The ``memcli`` console entry point, tuned for a process that lives a fraction of a second."""

from __future__ import annotations

import gc


def main() -> None:
    """Import the CLI with the cyclic garbage collector off, then run it.

    Start-up creates tens of thousands of objects that live as long as the process; while
    they load, the collector would traverse them again and again (a fifth of a search here).
    They are frozen out of later collections once loaded, and the collector runs as usual
    for the command itself.
    """
    gc.disable()
    try:
        from memcli.cli.app import main as run
    finally:
        gc.freeze()
        gc.enable()
    run()
