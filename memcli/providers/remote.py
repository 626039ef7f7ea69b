"""The only place memcli talks to LiteLLM: text embeddings and chat completions.

LiteLLM takes seconds to import and, unless told otherwise, fetches a model price map from the
network. It is therefore imported lazily, inside the functions that call a provider, after
forcing the bundled price map and silencing its banners. Importing this module is cheap.

Retries are ours (LiteLLM and the OpenAI SDK are told not to retry): exponential backoff with
jitter on 429, 5xx, timeouts and connection errors; never on authentication or bad-request
errors. Every failure surfaces as a one-line :class:`ProviderError` (exit code 4).
"""

from __future__ import annotations

import math
import os
import random
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from memcli.errors import ProviderError

if TYPE_CHECKING:
    from memcli.config import Settings

__all__ = ["ProviderConfig", "complete", "config_from_settings", "embed", "provider_name"]

T = TypeVar("T")

#: Backoff sleep; tests may monkeypatch it to keep retries instant.
_sleep: Callable[[float], None] = time.sleep
_BACKOFF_BASE = 0.5  # seconds before the first retry (before jitter)
_BACKOFF_CAP = 8.0  # longest single wait
#: Sent when ``api_base`` is set and no key exists: local OpenAI-compatible servers ignore it,
#: but the OpenAI client refuses to start without one.
_PLACEHOLDER_KEY = "sk-no-key"
_RETRY_STATUSES = frozenset({408, 409, 425, 429})
_DEFAULT_BATCH = 64
#: How often the main thread, waiting for a provider call, lets its signal handlers run.
_SIGNAL_POLL_S = 0.05

_litellm: Any = None
_litellm_lock = threading.Lock()


@dataclass(frozen=True)
class ProviderConfig:
    """Which model to call and how.

    ``max_retries`` counts retries after the first attempt (0 = a single attempt).
    ``timeout`` applies to each request. ``api_key_env`` names the environment variable that
    holds the key; when unset, LiteLLM's own variables (``OPENAI_API_KEY``, ...) are used.
    """

    model: str
    api_base: str | None = None
    api_key_env: str | None = None
    timeout: float = 30.0
    max_retries: int = 3


def config_from_settings(settings: Settings, section: str) -> ProviderConfig | None:
    """The ProviderConfig of ``[section]`` (``embedding`` or ``llm``); None when no model is set."""
    model = str(settings.get(f"{section}.model") or "").strip()
    if not model:
        return None
    return ProviderConfig(
        model=model,
        api_base=str(settings.get(f"{section}.api_base") or "").strip() or None,
        api_key_env=str(settings.get(f"{section}.api_key_env") or "").strip() or None,
        timeout=float(settings.get(f"{section}.timeout")),
        max_retries=int(settings.get(f"{section}.max_retries")),
    )


def provider_name(model: str) -> str:
    """Provider part of a LiteLLM model string; bare names default to ``openai`` like LiteLLM."""
    head, sep, rest = model.strip().partition("/")
    if sep and head and rest:
        return head.lower()
    return "openai"


def embed(
    texts: list[str],
    cfg: ProviderConfig,
    dimensions: int | None = None,
    *,
    batch_size: int = _DEFAULT_BATCH,
) -> list[list[float]]:
    """Embed ``texts`` (in batches of ``batch_size``) and return one vector per text, in order.

    Raises :class:`ProviderError` when the provider fails after retries or answers garbage.
    """
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    if dimensions is not None and dimensions < 1:
        raise ValueError("dimensions must be a positive integer")
    if not texts:
        return []
    litellm = _load_litellm()
    kwargs: dict[str, Any] = {
        "model": cfg.model,
        "api_base": cfg.api_base,
        "api_key": _api_key(litellm, cfg),
        "timeout": cfg.timeout,
        "num_retries": 0,
        "max_retries": 0,
    }
    if dimensions is not None:
        kwargs["dimensions"] = dimensions
        if provider_name(cfg.model) == "openai":
            # LiteLLM only lets `dimensions` through for text-embedding-3 names; OpenAI-compatible
            # servers may support it too. The length check below catches servers that ignore it.
            kwargs["allowed_openai_params"] = ["dimensions"]

    vectors: list[list[float]] = []
    width = dimensions
    for start in range(0, len(texts), batch_size):
        batch = list(texts[start : start + batch_size])
        response = _with_retries(
            "embedding", cfg, partial(litellm.embedding, input=batch, **kwargs)
        )
        got = _parse_embeddings(response, len(batch), cfg.model)
        if width is None:
            width = len(got[0])
        if any(len(v) != width for v in got):
            raise _malformed(cfg.model, f"vectors of {len(got[0])} dimensions, expected {width}")
        vectors.extend(got)
    return vectors


def complete(messages: list[dict[str, Any]], cfg: ProviderConfig, json_mode: bool = True) -> str:
    """Send a chat completion and return the assistant message text.

    With ``json_mode`` the provider is asked for a JSON object where it supports that (the
    parameter is dropped for models that do not). The caller still validates the text.
    """
    litellm = _load_litellm()
    kwargs: dict[str, Any] = {
        "model": cfg.model,
        "messages": messages,
        "api_base": cfg.api_base,
        "api_key": _api_key(litellm, cfg),
        "timeout": cfg.timeout,
        "num_retries": 0,
        "max_retries": 0,
        "drop_params": True,
    }
    if json_mode:
        kwargs["response_format"] = {"type": "json_object"}
    response = _with_retries("LLM", cfg, lambda: litellm.completion(**kwargs))
    try:
        content = response.choices[0].message.content
    except (AttributeError, IndexError, KeyError, TypeError):
        content = None
    if not isinstance(content, str) or not content.strip():
        raise ProviderError(
            f"LLM provider returned no message content for {cfg.model}",
            hint="the model may have refused or been cut off; try again or another model",
        )
    return content


# --- LiteLLM loading ------------------------------------------------------------------------


def _load_litellm() -> Any:
    """Import and quieten LiteLLM once (offline price map, no banners, no telemetry)."""
    global _litellm
    if _litellm is not None:
        return _litellm
    with _litellm_lock:
        if _litellm is None:
            import logging
            import warnings

            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            os.environ.setdefault("LITELLM_LOG", "WARNING")
            # pydantic complains about LiteLLM's own types on first use; not actionable here.
            warnings.filterwarnings("ignore", message=r".*is using the `ReadOnly` qualifier")
            try:
                import litellm
            except ImportError as exc:  # pragma: no cover - litellm is a dependency
                raise ProviderError(
                    f"cannot import litellm: {exc}", hint="reinstall memcli with its dependencies"
                ) from exc
            litellm.suppress_debug_info = True
            if hasattr(litellm, "set_verbose"):
                litellm.set_verbose = False
            if hasattr(litellm, "telemetry"):
                litellm.telemetry = False
            # Retries are ours. LiteLLM's OpenAI embedding handler reads `max_retries or
            # DEFAULT_MAX_RETRIES`, so an explicit 0 would become the SDK's 2 hidden retries.
            if hasattr(litellm, "DEFAULT_MAX_RETRIES"):
                litellm.DEFAULT_MAX_RETRIES = 0
            for name in ("LiteLLM", "LiteLLM Router", "httpx", "httpcore"):
                logging.getLogger(name).setLevel(logging.WARNING)
            # LiteLLM routes some proxy warnings to stdout, which carries only our data.
            logging.getLogger("LiteLLM Proxy").setLevel(logging.ERROR)
            _litellm = litellm
    return _litellm


def _api_key(litellm: Any, cfg: ProviderConfig) -> str | None:
    """Key to pass explicitly, or None to let LiteLLM read its own environment variables."""
    if cfg.api_key_env:
        key = os.environ.get(cfg.api_key_env, "").strip()
        if key:
            return key
        if not cfg.api_base:
            raise ProviderError(
                f"environment variable {cfg.api_key_env} (api_key_env for {cfg.model}) is not set",
                hint=f"export {cfg.api_key_env}=<your key>",
            )
        return _PLACEHOLDER_KEY
    if cfg.api_base and not _env_has_key(litellm, cfg):
        return _PLACEHOLDER_KEY
    return None


def _env_has_key(litellm: Any, cfg: ProviderConfig) -> bool:
    """Whether LiteLLM finds the provider's own key variables in the environment."""
    try:
        found = litellm.validate_environment(model=cfg.model, api_base=cfg.api_base)
        return bool(found.get("keys_in_environment"))
    except Exception:
        return False


# --- retries and error mapping --------------------------------------------------------------


def _with_retries(kind: str, cfg: ProviderConfig, call: Callable[[], T]) -> T:
    """Run ``call``, retrying transient failures with backoff; map failures to ProviderError."""
    attempts = max(0, cfg.max_retries) + 1
    for attempt in range(1, attempts + 1):
        try:
            return _interruptible(call)
        except ProviderError:
            raise
        except Exception as exc:
            failure = _classify(exc, cfg)
            if failure.retryable and attempt < attempts:
                _sleep(_backoff(attempt))
                continue
            message = f"{kind} provider failed for {cfg.model}: {failure.cause}"
            if attempt > 1:
                message += f" after {attempt} attempts"
            if failure.detail:
                message += f" ({failure.detail})"
            raise ProviderError(message, hint=failure.hint) from exc
    raise AssertionError("unreachable")  # pragma: no cover


def _interruptible(call: Callable[[], T]) -> T:
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
    while not done.wait(_SIGNAL_POLL_S):
        pass
    if error:
        raise error[0]
    return result[0]


def _backoff(attempt: int) -> float:
    """Exponential backoff with jitter for the wait after failed attempt number ``attempt``."""
    delay = min(_BACKOFF_CAP, _BACKOFF_BASE * (2 ** (attempt - 1)))
    return float(delay) * random.uniform(0.5, 1.0)


class _Failure(NamedTuple):
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


def _classify(exc: Exception, cfg: ProviderConfig) -> _Failure:
    """Decide whether a LiteLLM failure is transient and describe it in one line.

    LiteLLM wraps connection errors and unparsable bodies as HTTP 500, so the chain of causes
    is inspected for what really happened.
    """
    import httpx
    import openai

    litellm = _litellm
    chain = _chain(exc)
    detail = _provider_detail(chain)
    where = f" to {cfg.api_base}" if cfg.api_base else ""
    if any(
        isinstance(e, (openai.APITimeoutError, httpx.TimeoutException, TimeoutError)) for e in chain
    ):
        return _Failure(
            True,
            f"timed out after {cfg.timeout:g}s",
            None,
            "raise the timeout or check the provider",
        )
    if litellm is not None and isinstance(exc, litellm.UnsupportedParamsError):
        return _Failure(False, "unsupported parameter", detail)
    if litellm is not None and isinstance(
        exc, (litellm.AuthenticationError, litellm.PermissionDeniedError)
    ):
        env = f"${cfg.api_key_env}" if cfg.api_key_env else "the provider's API key variable"
        return _Failure(False, f"HTTP {exc.status_code}", detail, f"check the API key in {env}")
    status = _http_status(chain)
    if status is not None:
        retryable = status in _RETRY_STATUSES or status >= 500
        hint = "the provider is rate limiting; wait and retry" if status == 429 else None
        return _Failure(retryable, f"HTTP {status}", detail, hint)
    conn = [
        e
        for e in chain
        if isinstance(e, (openai.APIConnectionError, httpx.TransportError, ConnectionError))
    ]
    if conn:
        hint = "is the provider running and reachable?"
        return _Failure(True, f"connection error{where}", _short(conn[-1]), hint)
    bad = [e for e in chain[1:] if isinstance(e, ValueError)]
    if bad:
        hint = "does the server speak the OpenAI API?"
        return _Failure(False, "malformed response", _short(bad[0]), hint)
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        retryable = status in _RETRY_STATUSES or status >= 500
        return _Failure(retryable, f"HTTP {status}", detail)
    return _Failure(False, type(exc).__name__, detail)


def _http_status(chain: list[BaseException]) -> int | None:
    """Status of a real HTTP response found among the causes (not one LiteLLM made up)."""
    import httpx
    import openai

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
    import json

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


# --- response validation --------------------------------------------------------------------


def _malformed(model: str, why: str) -> ProviderError:
    return ProviderError(
        f"embedding provider returned malformed embeddings for {model}: {why}",
        hint="check that the model is an embedding model and the server speaks the OpenAI API",
    )


def _field(item: Any, name: str) -> Any:
    if isinstance(item, dict):
        return item.get(name)
    return getattr(item, name, None)


def _parse_embeddings(response: Any, expected: int, model: str) -> list[list[float]]:
    """Vectors from an embedding response, sorted by index and checked for shape and finiteness."""
    data = _field(response, "data")
    if not isinstance(data, Sequence) or isinstance(data, (str, bytes)):
        raise _malformed(model, "no data list")
    if len(data) != expected:
        raise _malformed(model, f"{len(data)} vectors for {expected} inputs")
    indices = [_field(item, "index") for item in data]
    if all(isinstance(i, int) and not isinstance(i, bool) for i in indices):
        if sorted(indices) != list(range(expected)):
            raise _malformed(model, "indices do not match the inputs")
        ordered = [item for _, item in sorted(zip(indices, data, strict=True), key=lambda p: p[0])]
    elif all(i is None for i in indices):
        ordered = list(data)
    else:
        raise _malformed(model, "bad indices")
    vectors: list[list[float]] = []
    for item in ordered:
        raw = _field(item, "embedding")
        if not isinstance(raw, (list, tuple)) or not raw:
            raise _malformed(model, "an embedding is empty or not a list of numbers")
        vec: list[float] = []
        for x in raw:
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
                raise _malformed(model, "an embedding holds a non-finite or non-numeric value")
            vec.append(float(x))
        vectors.append(vec)
    if len({len(v) for v in vectors}) != 1:
        raise _malformed(model, "vectors of different lengths")
    return vectors
