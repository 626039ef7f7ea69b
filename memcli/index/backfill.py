"""Giving chunks their vectors: the back-fill of every chunk still without one.

The index room owns this work; it calls the :class:`~memcli.index.embedder.Embedder` it is
given (a provider failure or a busy lock becomes a warning) and never builds one itself.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from memcli.errors import LockTimeout, ProviderError
from memcli.index import vectors
from memcli.index.embedder import Embedder, Fingerprint
from memcli.index.store import Store
from memcli.index.vectorplan import chunks_label


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
            from_cache = 0
            if isinstance(exc, ProviderError) and not (released and _replaced(store)):
                from_cache = _from_cache_only(store, embedder, todo, step)
                result.embedded += from_cache
            result.missing = vectors.pending_count(store)
            took = f"; {from_cache} taken from the embedding cache" if from_cache else ""
            result.warnings.append(
                f"{exc.message}; {chunks_label(result.missing)} without vectors for now{took}"
                " (keyword search still finds them; the next 'memcli index' back-fills them)"
            )
            break
        dims = vectors.index_dims(store) or len(vecs[0])
        bad = next((v for v in vecs if len(v) != dims), None)
        if bad is not None:
            result.missing = vectors.pending_count(store)
            result.warnings.append(
                f"embedding provider returned {len(bad)}-dimensional vectors for {fp.model}, but"
                f" the index holds {dims}-dimensional ones; {chunks_label(result.missing)} without"
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
            f"re-embedded {chunks_label(result.embedded)}: {result.cached} from the cache,"
            f" {result.embedded - result.cached} from the provider"
        )
    result.warnings.extend(embedder.warnings())
    return result


def _from_cache_only(
    store: Store, embedder: Embedder, todo: list[tuple[int, str]], step: int
) -> int:
    """With the provider down, store the vectors the cache holds for ``todo`` and every
    chunk still waiting after it; returns how many chunks got one."""
    stored = 0
    while todo:
        after = todo[-1][0]
        todo = [t for t, k in zip(todo, vectors.still_pending(store, todo), strict=True) if k]
        found = embedder.cached([text for _, text in todo])
        pairs = [(cid, v) for (cid, _), v in zip(todo, found, strict=True) if v is not None]
        dims = vectors.index_dims(store) or (len(pairs[0][1]) if pairs else 0)
        pairs = [(cid, v) for cid, v in pairs if len(v) == dims]
        if pairs:
            with store.transaction():
                if vectors.index_dims(store) is None:
                    vectors.create(store, embedder.fingerprint.key, dims)
                vectors.insert(store, [cid for cid, _ in pairs], [v for _, v in pairs])
            stored += len(pairs)
        todo = vectors.pending(store, step, after)
    return stored


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
