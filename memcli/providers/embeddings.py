"""Embedding text for the index and for queries: fingerprint, redaction, cache, batching.

Nothing here imports LiteLLM: :mod:`memcli.providers.remote` does, lazily, when a vector is really
needed and not found in the cache. With no ``embedding.model`` configured there is no
:class:`Embedder` at all and memcli runs keyword search only.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from typing import Any

from memcli.config import Settings
from memcli.errors import BadInput, LockTimeout, ProviderError
from memcli.index import vectors
from memcli.index.embedcache import EmbedCache, cache_stats
from memcli.index.store import Store
from memcli.notes.redact import redact
from memcli.providers import remote

#: Retries (after the first attempt) for calls made while a search waits for them.
QUICK_RETRIES = 1


@dataclass(frozen=True)
class Fingerprint:
    """Which vectors are interchangeable: same provider, model and requested dimensions.

    ``dimensions`` is the configured size (0 = the model's own default). Vectors with different
    fingerprints never share the index or a cache key.
    """

    provider: str
    model: str
    dimensions: int

    @property
    def key(self) -> str:
        return json.dumps(
            {"provider": self.provider, "model": self.model, "dimensions": self.dimensions},
            sort_keys=True,
        )

    @classmethod
    def parse(cls, key: str | None) -> Fingerprint | None:
        if not key:
            return None
        try:
            d = json.loads(key)
            return cls(str(d["provider"]), str(d["model"]), int(d["dimensions"]))
        except (ValueError, KeyError, TypeError):
            return None

    def label(self) -> str:
        return f"{self.model} ({self.dimensions} dims)" if self.dimensions else self.model


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class EmbedStats:
    """What an Embedder did: vectors served from the cache and provider requests made."""

    cached: int = 0
    embedded: int = 0
    requests: int = 0


class Embedder:
    """Turns texts into vectors: redact, look up the cache, send the misses in batches."""

    def __init__(
        self,
        cfg: remote.ProviderConfig,
        *,
        dimensions: int = 0,
        batch_size: int = 64,
        cache: EmbedCache | None = None,
    ) -> None:
        if batch_size < 1:
            raise BadInput("embedding.batch_size must be at least 1")
        if dimensions < 0:
            raise BadInput("embedding.dimensions must be 0 (model default) or positive")
        self.cfg = cfg
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.cache = cache
        self.fingerprint = Fingerprint(remote.provider_name(cfg.model), cfg.model, dimensions)
        self.stats = EmbedStats()
        #: The first provider failure of this process; later quick calls are not attempted.
        self.failure: ProviderError | None = None

    @classmethod
    def from_settings(cls, settings: Settings, *, with_cache: bool = True) -> Embedder | None:
        """The configured embedder, or None when no ``embedding.model`` is set."""
        model = str(settings.get("embedding.model") or "").strip()
        if not model:
            return None
        cfg = remote.ProviderConfig(
            model=model,
            api_base=str(settings.get("embedding.api_base") or "").strip() or None,
            api_key_env=str(settings.get("embedding.api_key_env") or "").strip() or None,
            timeout=float(settings.get("embedding.timeout")),
            max_retries=int(settings.get("embedding.max_retries")),
        )
        cache = None
        if with_cache:
            cache = EmbedCache(max_bytes=int(float(settings.get("cache.max_mb")) * 1024 * 1024))
        return cls(
            cfg,
            dimensions=int(settings.get("embedding.dimensions")),
            batch_size=int(settings.get("embedding.batch_size")),
            cache=cache,
        )

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
        """One vector per text, in order. Raises ProviderError when the provider fails.

        The cache is keyed by the sha256 of the text as stored (the same hash as
        ``chunks.hash``); only the texts it misses are redacted and sent, so a secret never
        reaches the provider and cached text costs no redaction either. Each successful batch
        is cached at once: a later failure loses nothing already paid for. ``quick`` (used
        while a search waits) retries at most once and gives up at once when the provider
        already failed in this process.
        """
        keys = [text_hash(t) for t in texts]
        fp = self.fingerprint.key
        found: dict[str, list[float]] = self.cache.get_many(fp, keys) if self.cache else {}
        self.stats.cached += sum(1 for k in keys if k in found)
        todo: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in found and key not in todo:
                todo[key] = redact(text).text
        if todo:
            if quick and self.failure is not None:
                raise self.failure
            cfg = self.cfg
            if quick:
                cfg = replace(cfg, max_retries=min(cfg.max_retries, QUICK_RETRIES))
            pending = list(todo.items())
            for start in range(0, len(pending), self.batch_size):
                batch = pending[start : start + self.batch_size]
                try:
                    got = remote.embed(
                        [t for _, t in batch],
                        cfg,
                        self.dimensions or None,
                        batch_size=len(batch),
                    )
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
        return self.embed([text], quick=True)[0]


# --- vectors of the index: state, back-fill ---------------------------------------------------


@dataclass
class VectorState:
    """Whether the index's vectors can serve this embedder, and why not."""

    usable: bool
    reason: str
    vectors: int = 0
    chunks: int = 0
    index_model: str | None = None

    @property
    def coverage(self) -> float:
        return round(self.vectors / self.chunks, 4) if self.chunks else 0.0


def vector_state(store: Store, embedder: Embedder) -> VectorState:
    """Check sqlite-vec, the fingerprint of the index and its coverage (no provider call)."""
    if not store.ensure_vec():
        return VectorState(False, f"sqlite-vec cannot be loaded: {store.vec_error}")
    index_fp = Fingerprint.parse(vectors.index_fingerprint(store))
    vecs, chunks = vectors.coverage(store)
    if index_fp is not None and index_fp != embedder.fingerprint:
        return VectorState(
            False,
            f"the index holds vectors of {index_fp.label()}, not {embedder.fingerprint.label()};"
            " run 'memcli index' to re-embed",
            0,
            chunks,
            index_fp.model,
        )
    if vecs == 0:
        why = "the index is empty" if chunks == 0 else "no vectors in the index yet"
        return VectorState(False, f"{why}; run 'memcli index'", 0, chunks, None)
    reason = f"embedding model {embedder.fingerprint.label()}"
    if vecs < chunks:
        reason += f"; {chunks - vecs} of {_chunks(chunks)} without vectors yet"
    return VectorState(True, reason, vecs, chunks, embedder.fingerprint.model)


def _chunks(n: int) -> str:
    return f"{n} chunk" if n == 1 else f"{n} chunks"


@dataclass
class BackfillResult:
    embedded: int = 0
    missing: int = 0
    cached: int = 0
    requests: int = 0
    warnings: list[str] = field(default_factory=list)


def backfill(
    store: Store,
    embedder: Embedder,
    *,
    limit: int | None = None,
    quick: bool = False,
    group: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    released: Callable[[], AbstractContextManager[Any]] | None = None,
) -> BackfillResult:
    """Give every chunk without a vector one (caller holds the writer lock).

    ``released()``, when given, lets other writers in while the provider is asked for a
    group's vectors (a back-fill of thousands of chunks can take minutes); after it, only the
    chunks that still wait with the same text get the vectors, and the back-fill stops if the
    index file was replaced or the lock stays busy.
    A change of fingerprint drops the old vectors first (re-embedding is mostly cache hits).
    With ``limit``, nothing is embedded when more than ``limit`` chunks are waiting (a search
    should not stall on a big back-fill). A provider failure stops the back-fill with a warning;
    the chunks stay recorded as missing (``chunks.embedded = 0``) for the next run.
    ``progress(done, total)`` is called after each group of chunks is stored.
    """
    result = BackfillResult()
    if not store.ensure_vec():
        result.missing = vectors.coverage(store)[1]
        result.warnings.append(
            f"vectors are off: sqlite-vec cannot be loaded ({store.vec_error}); keyword index only"
        )
        return result
    fp = embedder.fingerprint
    old = vectors.index_fingerprint(store)
    changed = old is not None and old != fp.key
    total_pending = vectors.pending_count(store) if not changed else vectors.coverage(store)[1]
    if limit is not None and total_pending > limit:
        result.missing = total_pending
        return result
    if changed:
        before = Fingerprint.parse(old)
        with store.transaction():
            vectors.drop(store)
        result.warnings.append(
            f"embedding model changed from {before.label() if before else old} to {fp.label()};"
            f" re-embedding {total_pending} chunks (cached vectors are reused)"
        )
    vectors.purge_orphans(store)
    start = embedder.stats.cached, embedder.stats.requests
    step = group or max(embedder.batch_size * 4, 256)
    after = 0
    while True:
        todo = vectors.pending(store, step, after)
        if not todo:
            result.missing = vectors.pending_count(store)
            break
        after = todo[-1][0]
        try:
            with (released or nullcontext)():
                vecs = embedder.embed([text for _, text in todo], quick=quick)
        except (LockTimeout, ProviderError) as exc:  # the provider failed, or the lock stayed busy
            result.missing = vectors.pending_count(store)
            result.warnings.append(
                f"{exc.message}; {_chunks(result.missing)} without vectors for now"
                " (keyword search still finds them; the next 'memcli index' back-fills them)"
            )
            break
        dims = vectors.index_dims(store) or len(vecs[0])
        bad = next((v for v in vecs if len(v) != dims), None)
        if bad is not None:
            result.missing = vectors.pending_count(store)
            result.warnings.append(
                f"embedding provider returned {len(bad)}-dimensional vectors for {fp.model}, but"
                f" the index holds {dims}-dimensional ones; {_chunks(result.missing)} without"
                " vectors (set embedding.dimensions, or run 'memcli index --force')"
            )
            break
        if released is not None:  # others may have written meanwhile
            if _replaced(store):
                result.warnings.append(
                    "the index was replaced by another process during the back-fill; stopped"
                )
                break
            keep = vectors.still_pending(store, todo)
            todo = [t for t, k in zip(todo, keep, strict=True) if k]
            vecs = [v for v, k in zip(vecs, keep, strict=True) if k]
            if vectors.index_fingerprint(store) not in (None, fp.key):
                break  # another process re-embeds with other settings
        with store.transaction():
            if vectors.index_dims(store) is None:
                vectors.create(store, fp.key, dims)
            vectors.insert(store, [cid for cid, _ in todo], vecs)
        result.embedded += len(todo)
        if progress:
            progress(result.embedded, total_pending)
    result.cached = embedder.stats.cached - start[0]
    result.requests = embedder.stats.requests - start[1]
    if changed and result.embedded:
        result.warnings.append(
            f"re-embedded {_chunks(result.embedded)}: {result.cached} from the cache,"
            f" {result.embedded - result.cached} from the provider"
        )
    result.warnings.extend(embedder.warnings())
    return result


def _replaced(store: Store) -> bool:
    """The index file is no longer the one this connection opened."""
    try:
        st = os.stat(store.path)
    except OSError:
        return True
    return store.identity is not None and (st.st_dev, st.st_ino) != store.identity


def needs_backfill(store: Store, embedder: Embedder, limit: int) -> bool:
    """Chunks wait for vectors and there are few enough to embed during a search."""
    if embedder.failure is not None or not store.ensure_vec():
        return False
    if vectors.index_fingerprint(store) not in (None, embedder.fingerprint.key):
        return 0 < vectors.coverage(store)[1] <= limit
    return 0 < vectors.pending_count(store) <= limit


# --- search plan and status -------------------------------------------------------------------


@dataclass
class SearchPlan:
    """The mode a search runs in, why, and the query vector when vectors take part."""

    mode: str
    reason: str
    vector: list[float] | None = None
    warnings: list[str] = field(default_factory=list)


def plan_search(store: Store, embedder: Embedder | None, strategy: str, query: str) -> SearchPlan:
    """Decide keyword / vector / hybrid and embed the query (cached); degrade with a warning."""
    strategy = (strategy or "auto").lower()
    if strategy not in ("auto", "keyword", "vector", "hybrid"):
        raise BadInput(
            f"unknown search strategy {strategy!r}", hint="use auto, keyword, vector or hybrid"
        )
    if strategy == "keyword" or not query.strip():
        return SearchPlan("keyword", "keyword strategy requested")
    if embedder is None:
        if strategy != "auto":
            raise BadInput(
                f"--strategy {strategy} needs an embedding model",
                hint="set embedding.model (or MEMCLI_EMBEDDING_MODEL), or use --strategy keyword",
            )
        return SearchPlan("keyword", "no embedding model configured")
    state = vector_state(store, embedder)
    if not state.usable:
        warning = f"vector search is off: {state.reason}; keyword results only"
        return SearchPlan("keyword", state.reason, None, [warning])
    warnings: list[str] = []
    try:
        vector = embedder.embed_query(query)
    except ProviderError as exc:
        reason = f"{exc.message}; fell back to keyword search"
        return SearchPlan("keyword", reason, None, [reason, *embedder.warnings()])
    warnings.extend(embedder.warnings())
    if state.vectors < state.chunks:
        missing = state.chunks - state.vectors
        warnings.append(
            f"{missing} of {_chunks(state.chunks)} without vectors yet (found by keyword only);"
            " run 'memcli index' to back-fill"
        )
    mode = "vector" if strategy == "vector" else "hybrid"
    return SearchPlan(mode, state.reason, vector, warnings)


def status_info(store: Store, settings: Settings) -> dict[str, Any]:
    """``mode``, ``mode_reason``, ``embedding`` and ``cache`` for ``memcli status`` (no network)."""
    cache = cache_stats()
    files_chunks = store.counts()[1]
    embedder = Embedder.from_settings(settings, with_cache=False)
    strategy = str(settings.get("search.strategy")).lower()
    if embedder is None:
        return {
            "mode": "keyword",
            "mode_reason": "no embedding model configured",
            "embedding": {"model": None, "vectors": 0, "coverage": 0.0},
            "cache": cache,
        }
    state = vector_state(store, embedder)
    if strategy == "keyword":
        mode, reason = "keyword", "search.strategy is keyword"
    elif state.usable:
        mode, reason = ("vector" if strategy == "vector" else "hybrid"), state.reason
    else:
        mode, reason = "keyword", state.reason
    embedding: dict[str, Any] = {
        "model": embedder.fingerprint.model,
        "dimensions": vectors.index_dims(store) if state.usable else None,
        "vectors": state.vectors,
        "chunks": state.chunks or files_chunks,
        "coverage": state.coverage,
    }
    if state.index_model and state.index_model != embedder.fingerprint.model:
        embedding["index_model"] = state.index_model
    return {"mode": mode, "mode_reason": reason, "embedding": embedding, "cache": cache}
