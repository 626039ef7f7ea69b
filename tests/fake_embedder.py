"""An in-process embedder for tests that need vectors but do not test the HTTP transport.

:class:`FakeEmbedder` implements :class:`memcli.index.embedder.Embedder` and gives the vectors
the loopback stub (:mod:`tests.stub_openai`) would give for the same text: redacted first, as
memcli's own embedder does before anything leaves the process, then :func:`stub_vector`. It is
handed to memcli through its provider seam (:func:`memcli.providers.embeddings.register`) for
models named ``fake/...``: no LiteLLM import, no HTTP, no cache. Tests of the transport, the
cache, the JSON contract and anything that starts a memcli subprocess keep the HTTP stub.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from memcli.config import Settings
from memcli.errors import ProviderError
from memcli.index.embedder import EmbedStats, Fingerprint
from memcli.notes.redact import redact
from memcli.providers import embeddings
from tests.stub_openai import stub_vector

PROVIDER = "fake"
MODEL = "fake/stub-embed"
DEFAULT_DIMS = 64  # the stub's default width


class FakeEmbedder:
    """Deterministic vectors computed in this process; every text it embedded is logged."""

    def __init__(self, model: str = MODEL, dimensions: int = 0, batch_size: int = 64) -> None:
        self.fingerprint = Fingerprint(PROVIDER, model, dimensions)
        self.batch_size = batch_size
        self.width = dimensions or DEFAULT_DIMS
        self.stats = EmbedStats()
        self.failure: ProviderError | None = None
        self.inputs: list[str] = []  # the (redacted) texts embedded, in order

    def embed(self, texts: Sequence[str], *, quick: bool = False) -> list[list[float]]:
        sent = [redact(t).text for t in texts]
        self.inputs.extend(sent)
        self.stats.embedded += len(sent)
        self.stats.requests += -(-len(sent) // self.batch_size)
        return [stub_vector(t, self.width) for t in sent]

    def embed_query(self, text: str) -> list[float]:
        return self.embed([text], quick=True)[0]

    def cached(self, texts: Sequence[str]) -> list[list[float] | None]:
        return [None] * len(texts)  # no cache: every vector is computed

    def warnings(self) -> list[str]:
        return []

    def close(self) -> None:
        """Nothing to release."""


class FakeProvider:
    """Makes a FakeEmbedder for each memcli operation that asks for one, and keeps them."""

    def __init__(self) -> None:
        self.made: list[FakeEmbedder] = []

    def __call__(self, settings: Settings) -> FakeEmbedder:
        embedder = FakeEmbedder(
            str(settings.get("embedding.model")).strip(),
            int(settings.get("embedding.dimensions")),
            int(settings.get("embedding.batch_size")),
        )
        self.made.append(embedder)
        return embedder

    @property
    def inputs(self) -> list[str]:
        return [t for e in self.made for t in e.inputs]


@pytest.fixture
def fake_vectors(monkeypatch: pytest.MonkeyPatch) -> FakeProvider:
    """In-process vectors for this test: ``embedding.model`` is ``fake/stub-embed``."""
    provider = FakeProvider()
    embeddings.register(PROVIDER, provider)
    monkeypatch.setenv("MEMCLI_EMBEDDING_MODEL", MODEL)
    return provider
