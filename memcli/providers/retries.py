"""Retrying provider calls: exponential backoff with jitter, and waits a signal can end.

Retries are ours (LiteLLM and the OpenAI SDK are told not to retry): on 429, 5xx, timeouts and
connection errors, never on authentication or bad-request errors (:mod:`.failures` decides).
Every failure surfaces as a one-line :class:`ProviderError` (exit code 4).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from typing import TypeVar

from memcli.errors import ProviderError
from memcli.providers.config import ProviderConfig
from memcli.providers.failures import classify

T = TypeVar("T")

BACKOFF_BASE = 0.5  # seconds before the first retry (before jitter)
BACKOFF_CAP = 8.0  # longest single wait
#: How often the main thread, waiting for a provider call, lets its signal handlers run.
SIGNAL_POLL_S = 0.05


def with_retries(
    kind: str, cfg: ProviderConfig, call: Callable[[], T], *, sleep: Callable[[float], None]
) -> T:
    """Run ``call``, retrying transient failures after ``sleep(backoff)``; map failures to
    ProviderError naming ``kind`` (``embedding``, ``LLM``) and the model."""
    attempts = max(0, cfg.max_retries) + 1
    for attempt in range(1, attempts + 1):
        try:
            return interruptible(call)
        except ProviderError:
            raise
        except Exception as exc:
            failure = classify(exc, cfg)
            if failure.retryable and attempt < attempts:
                sleep(backoff(attempt))
                continue
            message = f"{kind} provider failed for {cfg.model}: {failure.cause}"
            if attempt > 1:
                message += f" after {attempt} attempts"
            if failure.detail:
                message += f" ({failure.detail})"
            raise ProviderError(message, hint=failure.hint) from exc
    raise AssertionError("unreachable")  # pragma: no cover


def interruptible(call: Callable[[], T]) -> T:
    """Run a blocking provider call so that a signal can stop the wait for it at once.

    The kernel may deliver SIGINT/SIGTERM to any thread (watchfiles' and LiteLLM's included);
    Python runs the handler in the main thread only when that thread runs bytecode again, so a
    main thread blocked in a socket read would notice a second Ctrl-C only when the request ends
    (up to its timeout). In the main thread the call therefore runs in a daemon thread while the
    main thread waits in short steps; an abandoned request dies with the process.
    """
    if threading.current_thread() is not threading.main_thread():
        return call()
    result: list[T] = []
    error: list[BaseException] = []
    done = threading.Event()

    def run() -> None:
        try:
            result.append(call())
        except BaseException as exc:  # handed to the waiting thread, raised there
            error.append(exc)
        finally:
            done.set()

    threading.Thread(target=run, name="memcli-provider-call", daemon=True).start()
    while not done.wait(SIGNAL_POLL_S):
        pass
    if error:
        raise error[0]
    return result[0]


def backoff(attempt: int) -> float:
    """Exponential backoff with jitter for the wait after failed attempt number ``attempt``."""
    delay = min(BACKOFF_CAP, BACKOFF_BASE * (2 ** (attempt - 1)))
    return float(delay) * random.uniform(0.5, 1.0)  # noqa: S311 - jitter, not a secret
