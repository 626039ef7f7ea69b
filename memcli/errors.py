"""Exit codes and the typed exceptions the library raises.

Every exception carries its exit code; the CLI maps them in exactly one place
(``memcli.cli.runtime.exit_code_for``).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes (documented in --help, the docs and the man page)."""

    SUCCESS = 0
    NOT_FOUND = 1  # search or diff found nothing (like grep / git diff --exit-code)
    USAGE = 2  # usage error or bad input
    WORKSPACE = 3  # workspace, index, lock or git problem
    PROVIDER = 4  # embedding or LLM provider failure that cannot degrade
    INTERRUPTED = 130  # Ctrl-C


class MemcliError(Exception):
    """Base class: a one-line message, an optional hint and an exit code.

    An error about what a caller gave names the request's fields, never an adapter's
    spelling of them: ``fields`` lists them, and the message and hint mark each as
    ``{name}``. :attr:`message` and :attr:`hint` say the field names as they are (the
    library's words: its parameters); :meth:`worded` lets an adapter name them its own way
    (the CLI ``--to``, the MCP server its tool's parameter)."""

    exit_code: ExitCode = ExitCode.WORKSPACE

    def __init__(
        self, message: str, hint: str | None = None, *, fields: tuple[str, ...] = ()
    ) -> None:
        self.fields = tuple(fields)
        self.template = message
        self.hint_template = hint
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """The message, each field named as the library names it."""
        return self.worded(str)[0]

    @message.setter
    def message(self, text: str) -> None:
        self.template = text

    @property
    def hint(self) -> str | None:
        """The hint (None: none), each field named as the library names it."""
        return self.worded(str)[1]

    @hint.setter
    def hint(self, text: str | None) -> None:
        self.hint_template = text

    def worded(self, name: Callable[[str], str]) -> tuple[str, str | None]:
        """(message, hint) with each field named ``name(field)``."""
        hint = self.hint_template
        return (
            _named(self.template, self.fields, name),
            None if hint is None else _named(hint, self.fields, name),
        )


def _named(text: str, fields: tuple[str, ...], name: Callable[[str], str]) -> str:
    """``text`` with each ``{field}`` of ``fields`` replaced by ``name(field)``."""
    for field in fields:
        text = text.replace("{" + field + "}", name(field))
    return text


class BadInput(MemcliError):
    """The user gave input that cannot be used."""

    exit_code = ExitCode.USAGE


class PathOutsideWorkspace(BadInput):
    """A user path resolves outside the workspace."""


class ConfigError(BadInput):
    """A setting is unknown or has a value of the wrong type."""


class WorkspaceNotFound(MemcliError):
    """No workspace could be found from the current directory."""


class IndexProblem(MemcliError):
    """The index cannot be opened, migrated or repaired."""


class LockTimeout(MemcliError):
    """Another process holds a lock for too long."""


class AlreadyRunning(MemcliError):
    """Another process already does this job (e.g. a second watcher)."""


class GitError(MemcliError):
    """A git operation failed or the workspace is not a git repository."""


class ProviderError(MemcliError):
    """An embedding or LLM provider failed (down, timeout, auth, garbage)."""

    exit_code = ExitCode.PROVIDER


class WriteFailed(MemcliError):
    """A file could not be written (disk full, read-only, no permission); what is on disk is
    as it was before the write."""


def os_cause(exc: OSError) -> str:
    """Why a write failed, in words a user acts on: ``disk full``, ``read-only``..."""
    import errno  # only a failing write needs the names

    detail = exc.strerror or str(exc)
    causes = {
        errno.ENOSPC: "disk full",
        errno.EDQUOT: "disk quota exceeded",
        errno.EFBIG: "disk full",  # the file size limit of this process (ulimit -f)
        errno.EROFS: "read-only",
        errno.EACCES: "read-only",
        errno.EPERM: "read-only",
    }
    cause = causes.get(exc.errno or 0)
    return f"{cause} ({detail})" if cause else detail
