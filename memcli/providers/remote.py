"""The only place memcli talks to LiteLLM: text embeddings and chat completions.

LiteLLM is imported lazily (:mod:`.litellm_loader`), inside the functions that call a provider,
after forcing the bundled price map and silencing its banners: importing this module is cheap.
Retries are ours (:mod:`.retries`, with :mod:`.failures` deciding what is transient); answers
are checked in :mod:`.responses`. Every failure surfaces as a one-line :class:`ProviderError`
(exit code 4).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

from memcli.providers import litellm_loader
from memcli.providers.config import ProviderConfig, config_from_settings, provider_name
from memcli.providers.responses import malformed, message_content, parse_embeddings
from memcli.providers.retries import BACKOFF_CAP, with_retries

__all__ = ["ProviderConfig", "complete", "config_from_settings", "embed", "provider_name"]

#: Backoff sleep; tests may monkeypatch it to keep retries instant (looked up at each call).
_sleep: Callable[[float], None] = time.sleep
_BACKOFF_CAP = BACKOFF_CAP  # longest single wait between retries
_DEFAULT_BATCH = 64


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
    litellm = litellm_loader.load()
    kwargs: dict[str, Any] = {
        "model": cfg.model,
        "api_base": cfg.api_base,
        "api_key": litellm_loader.api_key(litellm, cfg),
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
        response = with_retries(
            "embedding", cfg, partial(litellm.embedding, input=batch, **kwargs), sleep=_sleep
        )
        got = parse_embeddings(response, len(batch), cfg.model)
        if width is None:
            width = len(got[0])
        if any(len(v) != width for v in got):
            raise malformed(cfg.model, f"vectors of {len(got[0])} dimensions, expected {width}")
        vectors.extend(got)
    return vectors


def complete(messages: list[dict[str, Any]], cfg: ProviderConfig, json_mode: bool = True) -> str:
    """Send a chat completion and return the assistant message text.

    With ``json_mode`` the provider is asked for a JSON object where it supports that (the
    parameter is dropped for models that do not). The caller still validates the text.
    """
    from memcli.providers import agentcli  # a plain module: the check costs no import

    if agentcli.backend_of(cfg.model) is not None:  # claude-code, codex: the agent's own CLI
        return agentcli.complete(messages, cfg, json_mode)
    litellm = litellm_loader.load()
    kwargs: dict[str, Any] = {
        "model": cfg.model,
        "messages": messages,
        "api_base": cfg.api_base,
        "api_key": litellm_loader.api_key(litellm, cfg),
        "timeout": cfg.timeout,
        "num_retries": 0,
        "max_retries": 0,
        "drop_params": True,
    }
    if json_mode:
        kwargs["response_format"] = {"type": "json_object"}
    response = with_retries("LLM", cfg, lambda: litellm.completion(**kwargs), sleep=_sleep)
    return message_content(response, cfg.model)
