"""What every command shares, without Typer: the global flags and the one place where
exceptions become exit codes (used by the Typer app and by :mod:`memcli.cli.fastpath`)."""

from __future__ import annotations

import os
import sys
from typing import Any, NamedTuple

from memcli.cli.output import Output
from memcli.errors import ExitCode, MemcliError


class State(NamedTuple):
    """Global flags, shared by every command."""

    workspace: str | None = None
    quiet: bool = False
    no_color: bool = False
    debug: bool = False

    @property
    def out(self) -> Output:
        return Output(quiet=self.quiet, no_color=self.no_color)

    def memory(
        self,
        overrides: dict[str, Any] | None = None,
        *,
        lenient: bool = False,
        warn_untrusted: bool = True,
    ) -> Any:
        """The workspace's Memory; ``lenient``: a bad setting is a warning on stderr, not an
        error (for commands that read no setting, such as git history). Settings an untrusted
        memcli.toml sets are ignored with one warning (unless ``warn_untrusted`` is off)."""
        from memcli.memory import Memory  # the service layer: not on --help

        mem = Memory.open(self.workspace, overrides, lenient=lenient)
        if lenient:
            self.out.warnings(mem.warnings)
            mem.warnings.clear()
        if warn_untrusted and (mem.settings.ignored or mem.settings.clamped):
            from memcli.config.layers import untrusted_warning  # loaded with the settings

            warning = untrusted_warning(mem.settings)
            if warning:
                self.out.warn(warning)
        return mem


def exit_code_for(exc: BaseException, state: State | None = None) -> int:
    """Report ``exc`` as one line on stderr and return its exit code.

    Library errors carry their code; Ctrl-C is 130; a closed stdout ends quietly with 0;
    anything else is a bug or an OS failure (3). With ``--debug`` (``state.debug``) or
    ``MEMCLI_DEBUG=1`` the traceback of errors other than those two is printed first; the
    exit code is the same either way.
    """
    state = state or State()
    out = Output(no_color=state.no_color)
    if isinstance(exc, KeyboardInterrupt):
        out.error("interrupted")
        return int(ExitCode.INTERRUPTED)
    if isinstance(exc, BrokenPipeError):
        _silence_broken_pipe()
        return 0
    if state.debug or os.environ.get("MEMCLI_DEBUG") == "1":
        import traceback  # only when a traceback is asked for

        traceback.print_exception(exc)
    if isinstance(exc, MemcliError):
        out.error(exc.message, exc.hint)
        return int(exc.exit_code)
    out.error(f"{type(exc).__name__}: {exc}", "run again with --debug for a traceback")
    return int(ExitCode.WORKSPACE)


def _silence_broken_pipe() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass
