"""Reading a file a repository supplies (a config, a prompt, ``.memignore``): a regular file
of bounded size, or an error, never a read until memory runs out or a wait on a FIFO."""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["NotRegular", "TooLarge", "read_capped"]


class NotRegular(OSError):
    """The path is a device, a FIFO, a folder or a socket (a link to one, too)."""


class TooLarge(OSError):
    """The file holds more than the cap."""


def read_capped(path: Path, limit: int) -> bytes:
    """The bytes of the regular file at ``path`` (links followed), at most ``limit`` of them.
    Raises FileNotFoundError, NotRegular, TooLarge or another OSError."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegular(f"{path}: not a regular file")
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(f"{path}: larger than {limit} bytes")
    return data
