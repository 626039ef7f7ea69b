"""What every embedder shares (:class:`CachedEmbedder`): the global embedding cache, keyed by
the model's fingerprint and the text's hash, de-duplication and batches; a subclass computes
what the cache misses: :class:`memcli.providers.embeddings.RemoteEmbedder` over LiteLLM,
:class:`memcli.providers.local.LocalEmbedder` in process. Which one the settings make is
:func:`memcli.providers.embeddings.embedder_from_settings`'s.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from memcli.config import Settings
from memcli.errors import BadInput, ProviderError
from memcli.index.embedcache import EmbedCache
from memcli.index.embedder import EmbedStats, Fingerprint

__all__ = ["LOCAL", "CachedEmbedder", "cache_from_settings", "local_fingerprint", "text_hash"]

#: What a question's cache key is the hash of, before its text, when the model marks questions
#: and passages differently.
QUERY_KEY = "\x00query\x00"
#: The provider name of models computed in-process (``local/NAME``, :mod:`memcli.providers.local`).
LOCAL = "local"


def local_fingerprint(model: str) -> Fingerprint:
    """The fingerprint of a ``local/NAME`` model (its own dimension: none is asked for), with
    the prefix a model memcli knows puts before stored texts
    (:data:`memcli.providers.models.MODELS`). A model known only by its folder keeps a
    fingerprint of its settings alone: a folder that cannot be read from where a command runs
    must not look like another model (that would drop the index's vectors)."""
    from memcli.providers.models import find

    known = find(model)
    return Fingerprint(LOCAL, model.strip(), 0, known.passage_prefix if known else "")


def text_hash(text: str) -> str:
    """The sha256 of a chunk's text as stored (``chunks.hash``, the embedding cache key)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CachedEmbedder:
    """What every :class:`Embedder` shares: the global cache (keyed by the model's
    fingerprint and the text's hash), de-duplication and batches. A subclass computes the
    vectors the cache misses (:meth:`_compute`) and may prepare texts first (:meth:`_prepare`).

    A model that wants its texts marked (E5: ``query: ``) sets
    :attr:`query_prefix` and :attr:`passage_prefix`; the prefix is added to the prepared text,
    never to the cache key of a stored text (``chunks.hash``). A query whose prefix differs from
    the passages' is cached under a key of its own.
    """

    #: Put before a question (:meth:`embed_query`) and before a stored text (:meth:`embed`).
    query_prefix = ""
    passage_prefix = ""

    def __init__(
        self, fingerprint: Fingerprint, *, batch_size: int, cache: EmbedCache | None
    ) -> None:
        if batch_size < 1:
            raise BadInput("embedding.batch_size must be at least 1")
        self.fingerprint = fingerprint
        self.batch_size = batch_size
        self.cache = cache
        self.stats = EmbedStats()
        #: The first provider failure of this process; later quick calls are not attempted.
        self.failure: ProviderError | None = None

    def _prepare(self, text: str) -> str:
        """A text as the model is given it."""
        return text

    def _compute(self, texts: list[str], quick: bool) -> list[list[float]]:
        """Vectors of ``texts`` (one batch); ProviderError when the model fails."""
        raise NotImplementedError

    def _order(self, pending: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """The (key, text) pairs to compute, in the order they are batched."""
        return pending

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()

    def warnings(self) -> list[str]:
        """Cache problems worth telling the user about (drained on read)."""
        out: list[str] = []
        if self.cache is not None:
            out.extend(self.cache.warnings)
            self.cache.warnings = []
            if self.cache.error:
                out.append(f"{self.cache.error}; continuing without the cache")
                self.cache.error = None
        return out

    def embed(self, texts: Sequence[str], *, quick: bool = False) -> list[list[float]]:
        """One vector per text, in order. Raises ProviderError when the model fails.

        The cache is keyed by the sha256 of the text as stored (the same hash as
        ``chunks.hash``); only the texts it misses are prepared and computed. Each computed
        batch is cached at once: a later failure loses nothing already paid for. ``quick``
        (a search waits) gives up at once when the model already failed in this process.
        """
        keys = [text_hash(t) for t in texts]
        return self._embed(keys, texts, self.passage_prefix, quick)

    def _embed(
        self, keys: list[str], texts: Sequence[str], prefix: str, quick: bool
    ) -> list[list[float]]:
        fp = self.fingerprint.key
        found: dict[str, list[float]] = self.cache.get_many(fp, keys) if self.cache else {}
        self.stats.cached += sum(1 for k in keys if k in found)
        todo: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in found and key not in todo:
                todo[key] = prefix + self._prepare(text)
        if todo:
            if quick and self.failure is not None:
                raise self.failure
            pending = self._order(list(todo.items()))
            for start in range(0, len(pending), self.batch_size):
                batch = pending[start : start + self.batch_size]
                try:
                    got = self._compute([t for _, t in batch], quick)
                except ProviderError as exc:
                    self.failure = exc
                    raise
                finally:
                    self.stats.requests += 1
                self.stats.embedded += len(batch)
                pairs = [(k, v) for (k, _), v in zip(batch, got, strict=True)]
                found.update(pairs)
                if self.cache is not None:
                    self.cache.put_many(fp, pairs)
        return [found[k] for k in keys]

    def embed_query(self, text: str) -> list[float]:
        """The vector of a question, with the model's query prefix (cached like a text)."""
        if self.query_prefix == self.passage_prefix:
            return self.embed([text], quick=True)[0]
        key = text_hash(QUERY_KEY + text)  # not the key of the same words stored as a passage
        return self._embed([key], [text], self.query_prefix, True)[0]

    def cached(self, texts: Sequence[str]) -> list[list[float] | None]:
        if self.cache is None:
            return [None] * len(texts)
        keys = [text_hash(t) for t in texts]
        found = self.cache.get_many(self.fingerprint.key, keys)
        self.stats.cached += len(found)
        return [found.get(k) for k in keys]


def cache_from_settings(settings: Settings) -> EmbedCache:
    """The global embedding cache, sized by ``cache.max_mb``."""
    return EmbedCache(max_bytes=int(float(settings.get("cache.max_mb")) * 1024 * 1024))
