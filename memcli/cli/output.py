"""The one module that writes to the terminal: JSON, Rich tables or plain text.

stdout carries data only. Tables are Rich on a terminal and tab-separated
text when piped. Warnings and errors go to stderr; progress bars only when
stderr is a terminal. Rich is imported only when something is drawn with it.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any


class Output:
    """Renders command results according to the global output flags."""

    def __init__(self, *, quiet: bool = False, no_color: bool = False, console: Any = None) -> None:
        self.quiet = quiet
        self.no_color = no_color or bool(os.environ.get("NO_COLOR"))  # no-color.org: non-empty
        self.console = console  # a Rich Console standing for a terminal stdout (tests)

    # -- streams ------------------------------------------------------------
    @property
    def stdout_tty(self) -> bool:
        return self.console is not None or sys.stdout.isatty()

    @property
    def rich_terminal(self) -> bool:
        """stdout is a terminal: scored results are drawn as Rich tables (piped output keeps
        the plain forms; NO_COLOR and --no-color take the colour away, not the layout, as
        no-color.org asks)."""
        return self.stdout_tty

    @property
    def width(self) -> int:
        """The width of the terminal stdout is (Rich's reading of it)."""
        return int(self._console().width)

    @property
    def stderr_tty(self) -> bool:
        return sys.stderr.isatty()

    def _console(self, stderr: bool = False) -> Any:
        if self.console is not None and not stderr:
            return self.console
        from rich.console import Console  # Rich: not on --help or plain output

        return Console(
            stderr=stderr,
            no_color=self.no_color,
            color_system=None if self.no_color else "auto",  # NO_COLOR: no styles either
            highlight=False,
            soft_wrap=not stderr,
        )

    # -- data ---------------------------------------------------------------
    def json(self, obj: Any) -> None:
        """One JSON document (or JSON line) on stdout; on a terminal, the control characters
        and bidi controls JSON lets through raw are written as ``\\uXXXX`` escapes (the same
        JSON value)."""
        text = json.dumps(obj, ensure_ascii=False, default=str)
        if self.stdout_tty:
            text = _control().sub(lambda m: f"\\u{ord(m.group()):04x}", text)
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    def line(self, text: str = "") -> None:
        """A line of data on stdout, never styled (control characters shown escaped on a tty)."""
        stream = self.console.file if self.console is not None else sys.stdout
        stream.write((_safe(text) if self.stdout_tty else text) + "\n")

    def table(
        self,
        columns: Sequence[str],
        rows: Sequence[Sequence[Any]],
        *,
        title: str | None = None,
        right: Sequence[str] = (),
        header: bool = True,
    ) -> None:
        """A Rich table on a terminal, tab-separated lines (with a header) when piped."""
        cells = [["" if v is None else _safe(str(v)) for v in row] for row in rows]
        if not self.stdout_tty:
            self.line("\t".join(columns))
            for row in cells:
                self.line("\t".join(c.replace("\t", " ").replace("\n", " ") for c in row))
            return
        from rich.table import Table  # Rich: only a table needs it

        table = Table(title=title, title_justify="left", header_style="bold", show_header=header)
        for col in columns:
            table.add_column(col, justify="right" if col in right else "left", overflow="fold")
        for row in cells:
            table.add_row(*(_escape(c) for c in row))
        self._console().print(table)

    def kv(self, pairs: Sequence[tuple[str, Any]], *, title: str | None = None) -> None:
        """Key/value listing: a two-column table on a terminal, ``key: value`` lines when
        piped."""
        if not self.rich_terminal:
            for key, value in pairs:
                self.line(f"{key}: {_plain(value)}")
            return
        self.table(["", ""], [(k, _plain(v)) for k, v in pairs], title=title, header=False)

    def rich(self, renderable: Any) -> None:
        """A Rich renderable (a table built by :mod:`memcli.cli.render`) on the terminal."""
        self._console().print(renderable)

    def styled(self, text: str, style: str = "") -> None:
        """A human-readable line on stdout, styled only on a terminal."""
        if not self.stdout_tty:
            self.line(text)
            return
        self._console().print(_escape(_safe(text)), style=style or None)

    # -- diagnostics (stderr) -------------------------------------------------
    def info(self, text: str) -> None:
        if not self.quiet:
            self._err(text, "dim")

    def warn(self, text: str) -> None:
        if not self.quiet:
            self._err(f"Warning: {text}", "yellow")

    def warnings(self, items: Sequence[str]) -> None:
        for item in items:
            self.warn(item)

    def error(self, text: str, hint: str | None = None) -> None:
        """One line ``Error: ...`` (plus a hint line), always shown."""
        self._err(f"Error: {text}", "bold red")
        if hint:
            self._err(f"Hint: {hint}", "")

    def _err(self, text: str, style: str) -> None:
        if self.stderr_tty and not self.no_color:
            self._console(stderr=True).print(_escape(_safe(text)), style=style or None)
        else:
            sys.stderr.write((_safe(text) if self.stderr_tty else text) + "\n")
            sys.stderr.flush()

    @contextmanager
    def progress(self, label: str) -> Iterator[Callable[[int, int], None] | None]:
        """A progress bar on stderr when it is a terminal; yields a (done, total) callback."""
        if self.quiet or not self.stderr_tty:
            yield None
            return
        # Rich: only a progress bar needs it
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        with Progress(
            TextColumn(label),
            BarColumn(),
            MofNCompleteColumn(),
            console=self._console(stderr=True),
            transient=True,
        ) as bar:
            task = bar.add_task(label, total=None)

            def update(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            yield update


@functools.cache
def _control() -> re.Pattern[str]:
    """Compiled on first use: not on every start-up."""
    return re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _shown(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _safe(text: str) -> str:
    """Show terminal control characters (ESC, BEL, C1...) as ``\\xNN`` and the bidi
    embeddings, overrides and isolates (U+202A-202E, U+2066-2069) as ``\\uXXXX``, so memory
    text and file names can never drive the reader's terminal (clear it, set its title, write
    the clipboard) nor make a line read differently from what it holds (Trojan Source)."""
    if text.isprintable():  # the common case, in C: none of them is printable
        return text
    return _control().sub(_shown, text)


safe_text = _safe  # for the renderer: memory text drawn in a Rich cell


def _escape(text: str) -> str:
    from rich.markup import escape  # Rich: only coloured output needs it

    return escape(text)


def _plain(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) if value else "-"
    if value is None:
        return "-"
    return str(value)
