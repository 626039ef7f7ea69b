"""Embedders for the index and for queries: redaction, cache and batching over a provider.

:class:`RemoteEmbedder` implements the index's :class:`~memcli.index.embedder.Embedder`
interface over LiteLLM. Nothing here imports LiteLLM: :mod:`memcli.providers.remote` does,
lazily, when a vector is really needed and not found in the cache. With no
``embedding.model`` configured there is no embedder at all and memcli runs keyword search only.
:func:`register` adds embedders for other providers (the part of ``embedding.model`` before
the ``/``): they are made instead of a RemoteEmbedder for models of that provider.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from memcli.config import Settings
from memcli.errors import BadInput
from memcli.index import vectorplan
from memcli.index.embedcache import EmbedCache
from memcli.index.embedder import Embedder, Fingerprint, configured_model
from memcli.index.store import Store
from memcli.notes.redact import redact
from memcli.providers import remote
from memcli.providers.cached import LOCAL, CachedEmbedder, cache_from_settings, local_fingerprint

__all__ = [
    "RemoteEmbedder",
    "embedder_from_settings",
    "fingerprint_of",
    "register",
    "status_info",
]

#: Retries (after the first attempt) for calls made while a search waits for them.
QUICK_RETRIES = 1


class RemoteEmbedder(CachedEmbedder):
    """An :class:`Embedder` over LiteLLM: texts are redacted before they leave the machine."""

    def __init__(
        self,
        cfg: remote.ProviderConfig,
        *,
        dimensions: int = 0,
        batch_size: int = 64,
        cache: EmbedCache | None = None,
    ) -> None:
        if dimensions < 0:
            raise BadInput("embedding.dimensions must be 0 (model default) or positive")
        fingerprint = Fingerprint(remote.provider_name(cfg.model), cfg.model, dimensions)
        super().__init__(fingerprint, batch_size=batch_size, cache=cache)
        self.cfg = cfg
        self.dimensions = dimensions

    @classmethod
    def from_settings(cls, settings: Settings, *, with_cache: bool = True) -> RemoteEmbedder | None:
        """The configured embedder, or None when no ``embedding.model`` is set."""
        cfg = remote.config_from_settings(settings, "embedding")
        if cfg is None:
            return None
        return cls(
            cfg,
            dimensions=int(settings.get("embedding.dimensions")),
            batch_size=int(settings.get("embedding.batch_size")),
            cache=cache_from_settings(settings) if with_cache else None,
        )

    def _prepare(self, text: str) -> str:
        return redact(text).text  # a secret never reaches the provider

    def _compute(self, texts: list[str], quick: bool) -> list[list[float]]:
        cfg = self.cfg
        if quick:
            cfg = replace(cfg, max_retries=min(cfg.max_retries, QUICK_RETRIES))
        return remote.embed(texts, cfg, self.dimensions or None, batch_size=len(texts))


# --- which embedder a setting makes --------------------------------------------------------

#: Embedders by provider name, made instead of a RemoteEmbedder for that provider's models.
_REGISTERED: dict[str, Callable[[Settings], Embedder]] = {}


def register(provider: str, factory: Callable[[Settings], Embedder]) -> None:
    """Make ``factory(settings)`` the embedder for models named ``provider/...``.

    The seam for embedders that do not go through LiteLLM (an in-process model, a test's
    deterministic fake); registering the same provider again replaces the factory.
    """
    _REGISTERED[provider.lower()] = factory


def embedder_from_settings(settings: Settings) -> Embedder | None:
    """The configured embedder (an :data:`~memcli.index.embedder.EmbedderFactory`), or None
    when no ``embedding.model`` is set."""
    model = configured_model(settings)
    if not model:
        return None
    provider = remote.provider_name(model)
    factory = _REGISTERED.get(provider)
    if factory is not None:
        return factory(settings)
    if provider == LOCAL:
        from memcli.providers.local import LocalEmbedder  # fastembed: only with a local model

        return LocalEmbedder.from_settings(settings)
    return RemoteEmbedder.from_settings(settings)


def fingerprint_of(settings: Settings) -> Fingerprint | None:
    """The fingerprint of the configured embedding model, without a cache or a provider call."""
    model = configured_model(settings)
    if model and remote.provider_name(model) == LOCAL:
        return local_fingerprint(model)
    embedder = RemoteEmbedder.from_settings(settings, with_cache=False)  # checks the settings too
    return embedder.fingerprint if embedder is not None else None


def status_info(store: Store, settings: Settings) -> dict[str, Any]:
    """``mode``, ``mode_reason``, ``embedding`` and ``cache`` for ``memcli status`` (no network)."""
    strategy = str(settings.get("search.strategy"))
    return vectorplan.status_info(store, strategy, fingerprint_of(settings))
