"""Inter-process locks on lock files (``flock``), holding the owner's pid.

A lock dies with its process, so a ``kill -9`` never leaves a stale lock.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from memcli.errors import AlreadyRunning, LockTimeout

try:
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX
    fcntl = None  # type: ignore[assignment]


class ProcessLock:
    """An exclusive lock on ``path``; ``acquire`` polls until ``timeout`` seconds."""

    def __init__(self, path: Path, what: str = "the index") -> None:
        self.path = path
        self.what = what
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        """Take the lock if free; never waits."""
        if self._fd is not None:
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return True

    def acquire(self, timeout: float = 30.0) -> ProcessLock:
        """Wait for the lock; raise LockTimeout naming the holder after ``timeout``."""
        deadline = time.monotonic() + timeout
        delay = 0.005
        while not self.try_acquire():
            if time.monotonic() >= deadline:
                pid = self.holder_pid()
                who = f" (held by pid {pid})" if pid else ""
                raise LockTimeout(
                    f"timed out after {timeout:g}s waiting for the lock on {self.what}{who}",
                    hint="another memcli process is writing; try again",
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.1)
        return self

    def acquire_or_fail(self) -> ProcessLock:
        """Take the lock now or raise AlreadyRunning naming the holder's pid."""
        if not self.try_acquire():
            pid = self.holder_pid()
            raise AlreadyRunning(
                f"{self.what} is already in use by pid {pid or '?'}",
                hint="stop that process first",
            )
        return self

    @contextmanager
    def released(self, timeout: float) -> Iterator[None]:
        """Let other processes take the lock for the block (a slow call that needs no lock);
        held again after it, waiting up to ``timeout`` (LockTimeout past that)."""
        if self._fd is None:
            yield
            return
        self.release()
        try:
            yield
        finally:
            self.acquire(timeout)

    def holder_pid(self) -> int | None:
        try:
            text = self.path.read_text().strip()
            return int(text) if text else None
        except (OSError, ValueError):
            return None

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def __enter__(self) -> ProcessLock:
        return self.acquire()

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
