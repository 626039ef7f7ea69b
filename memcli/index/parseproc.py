"""Parsing files in a child Python process while this one writes to SQLite (bulk loads)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from collections.abc import Generator
from typing import Any

from memcli.index.parsing import Parsed, parse_file
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
    """Feeds the child its messages and reads its answers into a bounded list, on a thread
    of its own: SQLite lets go of the interpreter while it writes, so the child's answers
    are taken (and more files sent) while the writer's statements run. Without it the child
    stalled whenever the pipe filled during a write, and the writer waited on the child in
    turn: a 10k-file load spent a third of its time so."""

    def __init__(self, proc: subprocess.Popen[bytes], jobs: list[list[tuple[str, str]]]) -> None:
        super().__init__(name="memcli-parse-reader", daemon=True)
        self.proc = proc
        self.jobs = jobs
        self.answers: list[list[Parsed]] = []  # read, not yet taken (bounded by _PARSE_AHEAD)
        self.taken = 0  # answers the writer has taken
        self.failed = False  # the child died or answered garbage: the rest is parsed here
        self.done = False  # no more answers will come (all read, failed or stopped)
        self.stopping = False
        self.cond = threading.Condition()

    def run(self) -> None:
        import pickle  # only bulk loads need it

        proc = self.proc
        assert proc.stdin is not None and proc.stdout is not None
        jobs, sent, read = self.jobs, 0, 0
        try:
            while sent < min(_PARSE_WINDOW, len(jobs)):
                pickle.dump(jobs[sent], proc.stdin)
                sent += 1
            proc.stdin.flush()
            while read < len(jobs):
                answer = pickle.load(proc.stdout)
                read += 1
                with self.cond:
                    self.answers.append(answer)
                    self.cond.notify_all()
                    # the writer is this far behind: wait before asking for more
                    while not self.stopping and read - self.taken >= _PARSE_AHEAD:
                        self.cond.wait()
                    if self.stopping:
                        return
                if sent < len(jobs):
                    pickle.dump(jobs[sent], proc.stdin)
                    proc.stdin.flush()
                    sent += 1
        except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError):
            self.failed = True  # the child is gone (or this end was closed): parse the rest here
        finally:
            with self.cond:
                self.done = True
                self.cond.notify_all()

    def take(self) -> list[Parsed] | None:
        """The next answer, waiting for it; None when no more will come."""
        with self.cond:
            while not self.answers and not self.done:
                self.cond.wait()
            if not self.answers:
                return None
            self.taken += 1
            self.cond.notify_all()
            return self.answers.pop(0)

    def stop(self) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify_all()


def parse_elsewhere(
    root: str, files: list[FoundFile], target: int, limit: int | None = None
) -> Generator[Parsed, None, None]:
    """:func:`parse_file` of each file (found under the folder ``root``, which ends in a
    separator), in order, computed by a child Python process (the first ``_PARSE_HERE``
    here, while it starts).

    The child gets only pipes (no inherited descriptors, so no lock of ours), reads lists of
    paths and answers with pickled :class:`Parsed` lists; at most ``_PARSE_WINDOW`` lists are
    in flight, and at most ``_PARSE_AHEAD`` answers wait to be taken. If the child cannot
    start or dies, the rest is parsed here, so a file that breaks the parser fails the sync
    exactly as it would without the child.
    """
    args = [str(target), *([str(limit)] if limit else [])]
    here = files[:_PARSE_HERE]
    jobs = [
        [(f.rel, root + f.rel) for f in files[i : i + _PARSE_CHUNK]]
        for i in range(len(here), len(files), _PARSE_CHUNK)
    ]
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
                answer = reader.take()
                if answer is None:
                    break
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
    for chunk in jobs[done:]:
        for rel, path in chunk:
            yield parse_file(rel, path, target, limit)


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
