"""Inter-process locks (``flock``): lock files holding the owner's pid, and appends to a file.

A lock dies with its process, so a ``kill -9`` never leaves a stale lock. Every wait for a
lock file goes through :meth:`ProcessLock.wait`.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from memcli.errors import AlreadyRunning, LockTimeout, WriteFailed, os_cause
from memcli.statedir import open_state, read_text

try:
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX
    fcntl = None  # type: ignore[assignment]

#: Seconds of waiting after which :meth:`ProcessLock.wait` calls its ``on_wait``.
LOCK_NOTICE_S = 2.0
_POLL_FIRST_S = 0.005  # a wait polls after 5 ms, then twice as long each time...
_POLL_MAX_S = 0.1  # ...up to every 100 ms


def lock_file(fd: int) -> None:
    """Lock an open file exclusively, blocking until no other process holds it.

    For locks on the data file itself (appends to a memory file), where :class:`ProcessLock`
    does not fit: its lock file holds the owner's pid, which cannot be written into a memory
    file. A blocking ``flock`` needs no polling (the kernel wakes the waiter when the holder
    closes the file), the lock is held for one short check-and-append, and it dies with its
    process, so no timeout or notice is needed. Closing ``fd`` releases it.
    """
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)


def _lock_fd(path: Path) -> int | None:
    """A descriptor of the lock file to ``flock`` (made when missing; read-only when it
    cannot be written); None when it can be neither made nor opened (a read-only folder)."""
    try:
        return open_state(path, os.O_RDWR | os.O_CREAT)
    except PermissionError:
        pass
    except OSError as exc:
        if exc.errno != errno.EROFS:
            raise
    try:
        return open_state(path, os.O_RDONLY)
    except OSError:
        return None


@contextmanager
def shared(path: Path) -> Iterator[None]:
    """Hold a shared lock on the lock file ``path`` for the block: any number of holders at
    once, none while :func:`exclusive` holds it (a blocking ``flock``: the kernel wakes the
    waiter). Every write to a memory file holds it (:mod:`memcli.notes.entries`)."""
    fd = _lock_fd(path)
    if fd is None:  # a read-only .memcli: nobody can take it exclusive either
        yield
        return
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)  # closing releases the lock


@contextmanager
def exclusive(path: Path, timeout: float, what: str = "the memory files") -> Iterator[None]:
    """Hold ``path`` exclusively for the block, once every :func:`shared` holder is done
    (waiting with back-off, LockTimeout after ``timeout`` seconds): while git rewrites
    memory files, no memcli process writes one."""
    fd = _lock_fd(path)
    if fd is None:
        yield
        return
    try:
        started, delay = time.monotonic(), _POLL_FIRST_S
        while fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() - started >= timeout:
                    raise LockTimeout(
                        f"timed out after {timeout:g}s waiting for writes to {what} to finish",
                        hint="another memcli process is writing; try again",
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, _POLL_MAX_S)
        yield
    finally:
        os.close(fd)


class ProcessLock:
    """An exclusive lock on ``path``; :meth:`wait` is the one way to wait for it."""

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
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = open_state(self.path, os.O_RDWR | os.O_CREAT)  # a planted link: replaced
        except OSError as exc:  # a read-only folder or file system, a full disk
            raise WriteFailed(f"cannot take the lock {self.path}: {os_cause(exc)}") from None
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                return False
        try:  # the holder's pid, for a message naming it; a full disk only loses that
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError:
            pass
        self._fd = fd
        return True

    def wait(
        self,
        timeout: float | None = None,
        *,
        stop: threading.Event | None = None,
        on_wait: Callable[[int | None], None] | None = None,
        notice_after: float = LOCK_NOTICE_S,
    ) -> bool:
        """Wait for the lock, polling with back-off: True once it is held, False when ``stop``
        is set first.

        ``timeout`` (None: no limit) raises LockTimeout naming the holder. ``on_wait(pid)`` is
        called once, with the holder's pid (None when unknown), after ``notice_after``
        seconds of waiting.
        """
        started = time.monotonic()
        delay = _POLL_FIRST_S
        noticed = False
        while not self.try_acquire():
            waited = time.monotonic() - started
            if timeout is not None and waited >= timeout:
                pid = self.holder_pid()
                who = f" (held by pid {pid})" if pid else ""
                raise LockTimeout(
                    f"timed out after {timeout:g}s waiting for the lock on {self.what}{who}",
                    hint="another memcli process is writing; try again",
                )
            if on_wait is not None and not noticed and waited >= notice_after:
                noticed = True
                on_wait(self.holder_pid())
            if stop is None:
                time.sleep(delay)
            elif stop.wait(delay):
                return False
            delay = min(delay * 2, _POLL_MAX_S)
        return True

    def acquire(self, timeout: float = 30.0) -> ProcessLock:
        """Wait for the lock (see :meth:`wait`); raise LockTimeout naming the holder after
        ``timeout`` seconds."""
        self.wait(timeout)
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
            text = read_text(self.path, 64).strip()
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
