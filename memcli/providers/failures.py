"""What went wrong in a provider call, in one line: transient or not, the cause, the
provider's own words and a hint (what :mod:`.retries` retries and reports)."""

from __future__ import annotations

import json
import re
from typing import NamedTuple

from memcli.providers.config import ProviderConfig
from memcli.providers.litellm_loader import loaded

_RETRY_STATUSES = frozenset({408, 409, 425, 429})


class Failure(NamedTuple):
    retryable: bool
    cause: str  # short and stable: "HTTP 500", "timed out after 30s", "connection error"
    detail: str | None = None  # the provider's own words, one line
    hint: str | None = None


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and everything it was raised from, outermost first."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not s for s in seen):
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def classify(exc: Exception, cfg: ProviderConfig) -> Failure:
    """Decide whether a LiteLLM failure is transient and describe it in one line.

    LiteLLM wraps connection errors and unparsable bodies as HTTP 500, so the chain of causes
    is inspected for what really happened.
    """
    # LiteLLM's dependencies: imported only once a provider call has failed (start-up time)
    import httpx
    import openai  # with httpx above: only once a call has failed

    litellm = loaded()
    chain = _chain(exc)
    detail = _provider_detail(chain)
    where = f" to {cfg.api_base}" if cfg.api_base else ""
    if any(
        isinstance(e, (openai.APITimeoutError, httpx.TimeoutException, TimeoutError)) for e in chain
    ):
        return Failure(
            True,
            f"timed out after {cfg.timeout:g}s",
            None,
            "raise the timeout or check the provider",
        )
    if litellm is not None and isinstance(exc, litellm.UnsupportedParamsError):
        return Failure(False, "unsupported parameter", detail)
    if litellm is not None and isinstance(
        exc, (litellm.AuthenticationError, litellm.PermissionDeniedError)
    ):
        env = f"${cfg.api_key_env}" if cfg.api_key_env else "the provider's API key variable"
        return Failure(False, f"HTTP {exc.status_code}", detail, f"check the API key in {env}")
    status = _http_status(chain)
    if status is not None:
        retryable = status in _RETRY_STATUSES or status >= 500
        hint = "the provider is rate limiting; wait and retry" if status == 429 else None
        return Failure(retryable, f"HTTP {status}", detail, hint)
    conn = [
        e
        for e in chain
        if isinstance(e, (openai.APIConnectionError, httpx.TransportError, ConnectionError))
    ]
    if conn:
        hint = "is the provider running and reachable?"
        return Failure(True, f"connection error{where}", _short(conn[-1]), hint)
    bad = [e for e in chain[1:] if isinstance(e, ValueError)]
    if bad:
        hint = "does the server speak the OpenAI API?"
        return Failure(False, "malformed response", _short(bad[0]), hint)
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        retryable = status in _RETRY_STATUSES or status >= 500
        return Failure(retryable, f"HTTP {status}", detail)
    return Failure(False, type(exc).__name__, detail)


def _http_status(chain: list[BaseException]) -> int | None:
    """Status of a real HTTP response found among the causes (not one LiteLLM made up)."""
    import httpx  # see classify: only once a call has failed
    import openai  # with httpx above: only once a call has failed

    for e in chain:
        if isinstance(e, httpx.HTTPStatusError):
            return e.response.status_code
        if isinstance(e, openai.APIStatusError) and not type(e).__module__.startswith("litellm"):
            return e.status_code
    return None


# Patterns are compiled on first use (re caches them): nothing to pay at import time.
_PREFIX = r"^(?:litellm\.)?\w*(?:Error|Exception|Timeout)\s*[:-]\s*"
_CODE_PREFIX = r"^Error code: \d+\s*-\s*"


def _provider_detail(chain: list[BaseException]) -> str | None:
    """The provider's error message (from a JSON error body when there is one)."""
    for e in chain:
        msg = _error_message(getattr(e, "body", None))
        if msg:
            return msg
    text = _short(chain[0])
    if text.startswith("{"):
        try:
            msg = _error_message(json.loads(text))
        except ValueError:
            msg = None
        if msg:
            return msg
    return text


def _error_message(body: object) -> str | None:
    """``message`` of an OpenAI-style error body (``{"error": {"message": ...}}`` and kin)."""
    if not isinstance(body, dict):
        return None
    inner = body.get("error", body)
    if isinstance(inner, str) and inner.strip():
        return _one_line(inner)
    msg = inner.get("message") if isinstance(inner, dict) else None
    return _one_line(msg) if isinstance(msg, str) and msg.strip() else None


def _short(exc: BaseException) -> str:
    """First line of an exception message without LiteLLM's class-name prefixes."""
    text = str(exc).strip()
    previous = None
    while previous != text:
        previous = text
        text = re.sub(_PREFIX, "", text, count=1).strip()
        text = re.sub(_CODE_PREFIX, "", text, count=1).strip()
    return _one_line(text) if text else type(exc).__name__


def _one_line(text: str, limit: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
