"""Parsing files in a child Python process while this one writes to SQLite (bulk loads)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Generator
from typing import Any

from memcli.index.parsing import Parsed, parse_file, receive, send
from memcli.notes.scan import FoundFile

_PARSE_CHUNK = 32  # files per message to the parse process
_PARSE_WINDOW = 8  # messages sent to the child and not yet answered
#: Messages answered and not yet written (a queue in this process): the child parses this far
#: ahead while the writer's statements run, instead of waiting for the writer to read.
_PARSE_AHEAD = 64
#: Files parsed in this process while the child starts (about as many as it parses in the
#: time Python takes to start and import the parser): the writer does not wait for its first
#: answer.
_PARSE_HERE = 256
_PIPE_BYTES = 1 << 20  # answers the child may write ahead of us (Linux; else 64 KiB)
#: The child's program: it imports only the parsing module (its start-up cost is measured).
_PARSE_WORKER = "from memcli.index.parsing import parse_worker; parse_worker()"


class _Reader(threading.Thread):
    """Feeds the child its messages and reads its answers, on a thread of its own: SQLite
    lets go of the interpreter while it writes, so the child's answers are taken (and more
    files sent) while the writer's statements run. Without it the child stalled whenever the
    pipe filled during a write, and the writer waited on the child in turn.

    The messages are shared out: the child gets the next one each time it answers, and the
    writer, when the message it needs next is not parsed yet, takes the next one nobody has
    (:meth:`claim`) and parses it itself instead of waiting. The two processes then share
    the parsing by how fast each goes: a 10k-file load whose writer waited on the child for a
    third of its time has both cores busy to the end."""

    def __init__(self, proc: subprocess.Popen[bytes], jobs: list[list[tuple[str, str]]]) -> None:
        super().__init__(name="memcli-parse-reader", daemon=True)
        self.proc = proc
        self.jobs = jobs
        self.next = 0  # the first message nobody has claimed
        self.sent: deque[int] = deque()  # messages with the child, oldest first
        self.answers: dict[int, list[Parsed]] = {}  # parsed, not yet taken
        self.taken = 0  # messages the writer has taken (the index of the one it needs next)
        self.failed = False  # the child died or answered garbage: the rest is parsed here
        self.done = False  # no more answers will come (all read, failed or stopped)
        self.stopping = False
        self.cond = threading.Condition()

    def _send(self) -> None:
        """Claim the next message for the child and send it (without the lock held)."""
        with self.cond:
            k = self.claim()
            if k is None:
                return
            self.sent.append(k)
        send(self.proc.stdin, self.jobs[k])

    def claim(self) -> int | None:
        """The next message nobody has, now this caller's (called with the lock held)."""
        if self.next >= len(self.jobs):
            return None
        self.next += 1
        return self.next - 1

    def run(self) -> None:
        proc = self.proc
        assert proc.stdin is not None and proc.stdout is not None
        try:
            for _ in range(_PARSE_WINDOW):
                self._send()
            proc.stdin.flush()
            while self.sent:
                answer = [Parsed._make(p) for p in receive(proc.stdout)]
                with self.cond:
                    self.answers[self.sent.popleft()] = answer
                    self.cond.notify_all()
                    # the writer is this far behind: wait before asking for more (unless
                    # the message it needs is not among the answers: it is still coming)
                    while (
                        not self.stopping
                        and len(self.answers) >= _PARSE_AHEAD
                        and self.taken in self.answers
                    ):
                        self.cond.wait()
                    if self.stopping:
                        return
                self._send()
                proc.stdin.flush()
        except (OSError, EOFError, ValueError, TypeError):
            self.failed = True  # the child is gone (or this end was closed): parse the rest here
        finally:
            with self.cond:
                self.done = True
                self.cond.notify_all()

    def take(self, parse: Callable[[list[tuple[str, str]]], list[Parsed]]) -> list[Parsed]:
        """The next message's answer. While it is not there, the writer parses the next
        message nobody has with ``parse``; once no more answers will come (the child died),
        it parses the message it needs."""
        with self.cond:
            while True:
                k = self.taken
                if k in self.answers:
                    self.taken += 1
                    self.cond.notify_all()
                    return self.answers.pop(k)
                mine = k if self.done else self.claim()
                if mine is None:
                    self.cond.wait()
                    continue
                self.cond.release()
                try:
                    parsed = parse(self.jobs[mine])
                finally:
                    self.cond.acquire()
                self.answers[mine] = parsed

    def stop(self) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify_all()


def parse_elsewhere(
    root: str, files: list[FoundFile], target: int, limit: int | None = None
) -> Generator[Parsed, None, None]:
    """:func:`parse_file` of each file (found under the folder ``root``, which ends in a
    separator), in order, computed by a child Python process and by this one (the first
    ``_PARSE_HERE`` here while the child starts, then any message the writer would
    otherwise wait for: :class:`_Reader`).

    The child gets only pipes (no inherited descriptors, so no lock of ours), reads lists of
    paths and answers with :class:`Parsed` lists (:func:`~memcli.index.parsing.send`); at
    most ``_PARSE_WINDOW`` lists are in flight, and about ``_PARSE_AHEAD`` answers wait to be
    taken. If the child cannot start or dies, the rest is parsed here, so a file that breaks
    the parser fails the sync exactly as it would without the child.
    """
    args = [str(target), *([str(limit)] if limit else [])]
    here = files[:_PARSE_HERE]
    jobs = [
        [(f.rel, root + f.rel) for f in files[i : i + _PARSE_CHUNK]]
        for i in range(len(here), len(files), _PARSE_CHUNK)
    ]

    def parse(job: list[tuple[str, str]]) -> list[Parsed]:
        return [parse_file(rel, path, target, limit) for rel, path in job]

    done = 0
    proc: subprocess.Popen[bytes] | None = None
    reader: _Reader | None = None
    try:
        try:
            proc = subprocess.Popen(
                [sys.executable, "-c", _PARSE_WORKER, *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError:
            pass  # no child: everything is parsed here
        else:
            assert proc.stdout is not None
            _widen_pipe(proc.stdout.fileno())
            reader = _Reader(proc, jobs)
            reader.start()
            for f in here:  # while the child starts
                yield parse_file(f.rel, root + f.rel, target, limit)
            here = []
            while done < len(jobs):
                answer = reader.take(parse)
                done += 1
                yield from answer
    finally:
        if reader is not None:
            reader.stop()
        if proc is not None:
            _end(proc, kill=done < len(jobs))  # left early: the child's answers are not wanted
        if reader is not None:
            reader.join()
        if proc is not None and proc.stdout is not None:
            proc.stdout.close()
    for f in here:  # no child
        yield parse_file(f.rel, root + f.rel, target, limit)
    for job in jobs[done:]:
        yield from parse(job)


def _end(proc: subprocess.Popen[Any], kill: bool) -> None:
    """Close the child's input and wait for it to exit (killed at once with ``kill``, or if
    it does not exit)."""
    with contextlib.suppress(OSError):
        proc.stdin.close()  # type: ignore[union-attr]
    if kill and proc.poll() is None:
        proc.kill()
    if proc.poll() is None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def _widen_pipe(fd: int) -> None:
    try:
        import fcntl  # not on every platform

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass  # not Linux, or over /proc/sys/fs/pipe-max-size: the default size works too
