"""What every command shares, without Typer: the global flags and the one place where
exceptions become exit codes (used by the Typer app and by :mod:`memcli.cli.fastpath`)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, NamedTuple

from memcli.cli.output import Output
from memcli.errors import ExitCode, MemcliError

if TYPE_CHECKING:  # the service layer: not on --help
    from memcli.memory import Memory


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
    ) -> Memory:
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


def exit_code_for(
    exc: BaseException, state: State | None = None, *, as_json: bool = False, event: bool = False
) -> int:
    """Report ``exc`` as one line on stderr and return its exit code.

    Library errors carry their code; Ctrl-C is 130; a closed stdout ends quietly with 0;
    anything else is a bug or an OS failure (3). With ``--debug`` (``state.debug``) or
    ``MEMCLI_DEBUG=1`` the traceback of errors other than those two is printed first; the
    exit code is the same either way. ``as_json`` (the command was asked for JSON): the
    error is also a JSON document on stdout (:func:`json_error`; ``event``: one of a stream
    of events, ``watch --json``'s), so a pipe into ``jq`` reads it; not an interruption,
    which the user asked for.
    """
    state = state or State()
    out = Output(no_color=state.no_color)
    if isinstance(exc, BrokenPipeError):
        _silence_broken_pipe()
        return 0
    if isinstance(exc, KeyboardInterrupt):
        message, hint, code = "interrupted", None, int(ExitCode.INTERRUPTED)
    else:
        if state.debug or os.environ.get("MEMCLI_DEBUG") == "1":
            import traceback  # only when a traceback is asked for

            traceback.print_exception(exc)
        if isinstance(exc, MemcliError):
            (message, hint), code = exc.worded(flag_name), int(exc.exit_code)
        else:
            message = f"{type(exc).__name__}: {exc}"
            hint, code = "run again with --debug for a traceback", int(ExitCode.WORKSPACE)
    out.error(message, hint)
    if as_json and not isinstance(exc, KeyboardInterrupt):
        json_error(message, hint, code, event)
    return code


#: The flags whose name is not the field's with dashes (``max_tokens``: ``--max-tokens``).
_FLAG_NAMES = {"debounce_ms": "--debounce"}


def flag_name(field: str) -> str:
    """How the CLI names a request's field in an error: the search option's names
    (``-n/--limit``), else ``--`` and the field's name with dashes."""
    from memcli.search.request_fields import REQUEST_FIELDS, flag_of  # plain data

    for declared in REQUEST_FIELDS:
        if declared.name == field:
            return flag_of(declared)
    return _FLAG_NAMES.get(field) or "--" + field.replace("_", "-")


def json_error(message: str, hint: str | None, code: int, event: bool = False) -> None:
    """An error as the JSON document a ``--json`` command prints on stdout:
    ``{"error": {"message", "hint", "exit_code"}}`` (one line; stderr has it too), with
    ``"event": "error"`` as well in a stream of events (``event``)."""
    doc: dict[str, Any] = {"error": {"message": message, "hint": hint, "exit_code": code}}
    if event:
        doc = {"event": "error", **doc}
    try:
        Output().json(doc)
    except BrokenPipeError:
        _silence_broken_pipe()


#: The options that ask a command for JSON on stdout (their parameter names).
JSON_OPTIONS = ("as_json", "jsonl", "batch")


def wants_json(options: dict[str, Any]) -> bool:
    """Whether a command's options (parameter name -> value) ask for JSON on stdout:
    ``--json``, ``--jsonl``, ``--batch`` or ``--format json``/``jsonl``."""
    formats = (options.get("fmt"), options.get("format"))
    return any(options.get(name) for name in JSON_OPTIONS) or bool({"json", "jsonl"} & set(formats))


def _silence_broken_pipe() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass
