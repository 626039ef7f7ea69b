"""Parsing files in a child Python process while this one writes to SQLite (bulk loads)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Generator

from memcli.index.parsing import Parsed, parse_file
from memcli.notes.scan import FoundFile

_PARSE_CHUNK = 32  # files per message to the parse process
_PARSE_WINDOW = 8  # messages in flight: bounded memory, and pipes that never both fill up
_PIPE_BYTES = 1 << 20  # answers the child may write ahead of us (Linux; else 64 KiB)
#: The child's program: it imports only the parsing module (its start-up cost is measured).
_PARSE_WORKER = "from memcli.index.parsing import parse_worker; parse_worker()"


def parse_elsewhere(
    root: str, files: list[FoundFile], target: int, limit: int | None = None
) -> Generator[Parsed, None, None]:
    """:func:`parse_file` of each file (found under the folder ``root``, which ends in a
    separator), in order, computed by a child Python process.

    The child gets only pipes (no inherited descriptors, so no lock of ours), reads lists of
    paths and answers with pickled :class:`Parsed` lists; at most ``_PARSE_WINDOW`` lists are
    in flight. If the child cannot start or dies, the rest is parsed here, so a file that
    breaks the parser fails the sync exactly as it would without the child.
    """
    import pickle  # only bulk loads need it

    jobs = [
        [(f.rel, root + f.rel) for f in files[i : i + _PARSE_CHUNK]]
        for i in range(0, len(files), _PARSE_CHUNK)
    ]
    done = 0
    proc = None
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", _PARSE_WORKER, str(target), *([str(limit)] if limit else [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert proc.stdin is not None and proc.stdout is not None
        _widen_pipe(proc.stdout.fileno())
        sent = 0
        while sent < min(_PARSE_WINDOW, len(jobs)):
            pickle.dump(jobs[sent], proc.stdin)
            sent += 1
        proc.stdin.flush()
        while done < len(jobs):
            answer = pickle.load(proc.stdout)
            if sent < len(jobs):
                pickle.dump(jobs[sent], proc.stdin)
                proc.stdin.flush()
                sent += 1
            done += 1
            yield from answer
    except (OSError, EOFError, pickle.UnpicklingError, ValueError):
        pass  # the child is gone: parse the rest here
    finally:
        if proc is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()  # type: ignore[union-attr]
            if proc.poll() is None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=5)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    for chunk in jobs[done:]:
        for rel, path in chunk:
            yield parse_file(rel, path, target, limit)


def _widen_pipe(fd: int) -> None:
    try:
        import fcntl  # not on every platform

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass  # not Linux, or over /proc/sys/fs/pipe-max-size: the default size works too
