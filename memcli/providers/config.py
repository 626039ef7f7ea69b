"""Which provider model to call and how: :class:`ProviderConfig`, built from the settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memcli.config import Settings


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
