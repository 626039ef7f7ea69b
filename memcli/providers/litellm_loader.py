"""Importing LiteLLM, once and only when a provider is really called, and the key it is given.

LiteLLM takes seconds to import and, unless told otherwise, fetches a model price map from the
network: :func:`load` forces the bundled price map and silences its banners first. Importing
this module is cheap.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from memcli.errors import ProviderError
from memcli.providers.config import ProviderConfig

#: Sent when ``api_base`` is set and no key exists: local OpenAI-compatible servers ignore it,
#: but the OpenAI client refuses to start without one.
PLACEHOLDER_KEY = "sk-no-key"

_litellm: Any = None
_litellm_lock = threading.Lock()


def loaded() -> Any:
    """The LiteLLM module if :func:`load` imported it already, else None (never imports)."""
    return _litellm


def load() -> Any:
    """Import and quieten LiteLLM once (offline price map, no banners, no telemetry)."""
    global _litellm
    if _litellm is not None:
        return _litellm
    with _litellm_lock:
        if _litellm is None:
            import logging  # with LiteLLM: not loaded at start-up
            import warnings

            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            os.environ.setdefault("LITELLM_LOG", "WARNING")
            # pydantic complains about LiteLLM's own types on first use; not actionable here.
            warnings.filterwarnings("ignore", message=r".*is using the `ReadOnly` qualifier")
            try:
                import litellm  # seconds to import: only when a provider is called
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


def api_key(litellm: Any, cfg: ProviderConfig) -> str | None:
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
        return PLACEHOLDER_KEY
    if cfg.api_base and not _env_has_key(litellm, cfg):
        return PLACEHOLDER_KEY
    return None


def _env_has_key(litellm: Any, cfg: ProviderConfig) -> bool:
    """Whether LiteLLM finds the provider's own key variables in the environment."""
    try:
        found = litellm.validate_environment(model=cfg.model, api_base=cfg.api_base)
        return bool(found.get("keys_in_environment"))
    except Exception:
        return False
