"""Where a workspace's engine listens: a Unix socket in the user's runtime folder, named from
the workspace (so the length limit of a socket path never bites), with its lock beside it."""

from __future__ import annotations

import hashlib
import os
import tempfile
import warnings
from pathlib import Path

__all__ = ["engine_files"]

#: Longest socket path used (the system limit is 104 to 108 bytes).
MAX_SOCKET_PATH = 100


def runtime_dir() -> Path:
    """``$MEMCLI_RUNTIME_DIR``, else the platform's runtime folder for memcli (a folder of
    the temporary directory when that one's path would be too long)."""
    chosen = os.environ.get("MEMCLI_RUNTIME_DIR")
    if chosen:
        return Path(chosen)
    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset
        warnings.simplefilter("ignore")
        import platformdirs

        return Path(platformdirs.user_runtime_dir("memcli"))


def engine_files(root: Path) -> tuple[Path, Path]:
    """(socket, lock file) of the engine of the workspace at ``root``."""
    name = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    folder = runtime_dir()
    if len(str(folder / f"{name}.sock")) > MAX_SOCKET_PATH:
        folder = Path(tempfile.gettempdir()) / f"memcli-{os.getuid()}"
    return folder / f"{name}.sock", folder / f"{name}.lock"


def failure_marker(root: Path) -> Path:
    """The file a client writes when the engine of the workspace at ``root`` did not answer
    it (its time: when; its text: what)."""
    return root / ".memcli" / "engine.failed"
