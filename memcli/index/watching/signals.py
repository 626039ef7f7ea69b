"""Stopping a watch by signal: the first asks it to stop, a second interrupts it."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def stop_on_signals(stop: threading.Event) -> Iterator[dict[str, Any]]:
    """SIGINT/SIGTERM/SIGHUP set ``stop``; a second signal raises KeyboardInterrupt.

    Yields a dict whose ``"signal"`` key names the first signal received.
    Previous handlers are restored on exit. Only works in the main thread.
    """
    seen: dict[str, Any] = {"signal": None}
    wanted = [signal.SIGINT, signal.SIGTERM]
    # SIGHUP (terminal closed) stops it too, unless ignored on purpose (nohup).
    if hasattr(signal, "SIGHUP") and signal.getsignal(signal.SIGHUP) != signal.SIG_IGN:
        wanted.append(signal.SIGHUP)

    def handler(signum: int, frame: Any) -> None:
        if seen["signal"] is not None:
            raise KeyboardInterrupt
        seen["signal"] = signal.Signals(signum).name
        stop.set()

    previous = {sig: signal.signal(sig, handler) for sig in wanted}
    try:
        yield seen
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
