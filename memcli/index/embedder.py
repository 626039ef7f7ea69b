"""What the index needs from an embedder: the :class:`Embedder` interface and its fingerprint.

The index room defines the interface and providers implement it
(:mod:`memcli.providers.embeddings` over LiteLLM; a test's in-process fake): the indexer, the
back-fill and the search plan receive an embedder and never build one. :class:`LazyEmbedder`
is the one place that makes the configured embedder on first use.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import NamedTuple, Protocol

from memcli.config import Settings
from memcli.errors import ProviderError


class Fingerprint(NamedTuple):  # a NamedTuple: cheap to define on every search's start-up
    """Which vectors are interchangeable: same provider, model, requested dimensions and the
    prefix put before every stored text.

    ``dimensions`` is the configured size (0 = the model's own default); ``prefix`` is the
    mark a model wants before a stored text (E5: ``query: ``), part of what was embedded.
    Vectors with different fingerprints never share the index or a cache key. A fingerprint
    without a prefix keeps the key it always had.
    """

    provider: str
    model: str
    dimensions: int
    prefix: str = ""

    @property
    def key(self) -> str:
        fields: dict[str, object] = {
            "provider": self.provider,
            "model": self.model,
            "dimensions": self.dimensions,
        }
        if self.prefix:
            fields["prefix"] = self.prefix
        return json.dumps(fields, sort_keys=True)

    @classmethod
    def parse(cls, key: str | None) -> Fingerprint | None:
        if not key:
            return None
        try:
            d = json.loads(key)
            prefix = d.get("prefix", "")
            return cls(str(d["provider"]), str(d["model"]), int(d["dimensions"]), str(prefix))
        except (ValueError, KeyError, TypeError, AttributeError):
            return None

    def label(self) -> str:
        label = f"{self.model} ({self.dimensions} dims)" if self.dimensions else self.model
        return f"{label} (texts marked {self.prefix.strip()!r})" if self.prefix else label


class EmbedStats:
    """What an embedder did: vectors served from a cache and provider requests made."""

    __slots__ = ("cached", "embedded", "requests")

    def __init__(self, cached: int = 0, embedded: int = 0, requests: int = 0) -> None:
        self.cached = cached
        self.embedded = embedded
        self.requests = requests

    def __repr__(self) -> str:
        counts = f"cached={self.cached}, embedded={self.embedded}, requests={self.requests}"
        return f"EmbedStats({counts})"


class Embedder(Protocol):
    """Turns texts into vectors for the index and for queries."""

    #: The vectors it makes; the index holds vectors of one fingerprint only.
    fingerprint: Fingerprint
    #: Texts per provider request (the back-fill groups a few batches at a time).
    batch_size: int
    stats: EmbedStats
    #: The first provider failure of this process; later quick calls are not attempted.
    failure: ProviderError | None

    def embed(self, texts: Sequence[str], *, quick: bool = False) -> list[list[float]]:
        """One vector per text, in order; ProviderError when the provider fails. ``quick``
        (a search waits) gives up sooner."""
        ...

    def embed_query(self, text: str) -> list[float]: ...

    def cached(self, texts: Sequence[str]) -> list[list[float] | None]:
        """The vectors a cache already holds for ``texts`` (None where it has none), without
        asking the provider: what the back-fill still stores when the provider is down."""
        ...

    def warnings(self) -> list[str]:
        """Problems worth telling the user about (drained on read)."""
        ...

    def close(self) -> None: ...


#: Makes the configured embedder from settings; None when no ``embedding.model`` is set.
EmbedderFactory = Callable[[Settings], Embedder | None]


def configured_model(settings: Settings) -> str:
    """The ``embedding.model`` setting, blanks stripped; empty: keyword search only."""
    return str(settings.get("embedding.model") or "").strip()


class LazyEmbedder:
    """The configured embedder, made by ``factory`` on first use and kept until :meth:`close`.

    Nothing is built (and no provider module imported) until an operation needs vectors, and
    never when ``embedding.model`` is empty: keyword search only.
    """

    def __init__(self, settings: Settings, factory: EmbedderFactory) -> None:
        self.settings = settings
        self.factory = factory
        self._made = False
        self._embedder: Embedder | None = None

    def get(self) -> Embedder | None:
        if not self._made:
            self._made = True
            if configured_model(self.settings):
                self._embedder = self.factory(self.settings)
        return self._embedder

    def close(self) -> None:
        if self._embedder is not None:
            self._embedder.close()
        self._embedder = None
        self._made = False
