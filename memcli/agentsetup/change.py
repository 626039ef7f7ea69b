"""One planned file change of ``memcli agent install``: a file as it is and as it would be."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, NamedTuple


class Change(NamedTuple):
    """One file as it is and as it would be (None: absent)."""

    path: Path
    before: str | None
    after: str | None
    undo: bool = False  # uninstall: the file's record is dropped once written

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        """A unified diff; a last line without its newline is marked as git marks it, so the
        next file's header starts a line of its own."""
        a = (self.before or "").splitlines(keepends=True)
        b = (self.after or "").splitlines(keepends=True)
        name = str(self.path)
        lines = difflib.unified_diff(
            a,
            b,
            fromfile=name if self.before is not None else "/dev/null",
            tofile=name if self.after is not None else "/dev/null",
        )
        return "".join(
            line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
            for line in lines
        )

    def as_dict(self) -> dict[str, Any]:
        action = (
            "unchanged"
            if not self.changed
            else "create"
            if self.before is None
            else "remove"
            if self.after is None
            else "update"
        )
        return {"path": str(self.path), "action": action}
