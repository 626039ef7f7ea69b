"""ProcessLock.wait, the one wait for a lock file: timeout, a stop request, one notice."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from memcli.errors import LockTimeout
from memcli.locks import ProcessLock


def test_a_free_lock_is_taken_at_once_and_no_notice_is_given(tmp_path: Path) -> None:
    lock = ProcessLock(tmp_path / "x.lock")
    notices: list[int | None] = []
    assert lock.wait(stop=threading.Event(), on_wait=notices.append, notice_after=0)
    assert lock.held and notices == []
    assert lock.holder_pid() == os.getpid()
    lock.release()


def test_timeout_names_the_holder(tmp_path: Path) -> None:
    held = ProcessLock(tmp_path / "x.lock").acquire(1)
    try:
        with pytest.raises(LockTimeout) as err:
            ProcessLock(tmp_path / "x.lock", "the test").wait(0.05)
        assert err.value.message == (
            f"timed out after 0.05s waiting for the lock on the test (held by pid {os.getpid()})"
        )
    finally:
        held.release()


def test_stop_ends_the_wait_and_the_notice_comes_once(tmp_path: Path) -> None:
    held = ProcessLock(tmp_path / "x.lock").acquire(1)
    stop = threading.Event()
    notices: list[int | None] = []

    def notice(pid: int | None) -> None:
        notices.append(pid)
        threading.Timer(0.3, stop.set).start()  # keep waiting a while after the notice

    waiter = ProcessLock(tmp_path / "x.lock")
    started = time.monotonic()
    try:
        assert waiter.wait(stop=stop, on_wait=notice, notice_after=0.05) is False
    finally:
        held.release()
    assert notices == [os.getpid()]
    assert time.monotonic() - started < 5
    assert not waiter.held


def test_the_wait_ends_when_the_holder_lets_go(tmp_path: Path) -> None:
    held = ProcessLock(tmp_path / "x.lock").acquire(1)
    threading.Timer(0.1, held.release).start()
    waiter = ProcessLock(tmp_path / "x.lock")
    assert waiter.wait(stop=threading.Event())
    assert waiter.held
    waiter.release()
