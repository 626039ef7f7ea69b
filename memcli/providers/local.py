"""Embeddings computed in-process: ``embedding.model = "local/NAME"`` with fastembed.

NAME is any model fastembed knows (``sentence-transformers/all-MiniLM-L6-v2``, a multilingual
one such as ``sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2``...). The model runs
on ONNX Runtime in this process: no API key, no network once the model is on disk. With
``embedding.model_path`` the model's files are read from that folder (for machines without
internet); otherwise fastembed fetches them once into memcli's cache folder. fastembed (and
ONNX Runtime, numpy) is imported only when a vector is computed: a cached vector, or a search
that needs none, never loads it. Install it with ``pip install 'memcli[local]'``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from memcli.config import Settings
from memcli.errors import ProviderError
from memcli.index.embedcache import EmbedCache
from memcli.providers.embeddings import CachedEmbedder, cache_from_settings, local_fingerprint

#: Texts per model call: on two cores small batches pad less and run as fast as large ones.
MODEL_BATCH = 16


def model_name(model: str) -> str:
    """The fastembed name of ``local/NAME``."""
    return model.strip().split("/", 1)[1]


class LocalEmbedder(CachedEmbedder):
    """An :class:`~memcli.index.embedder.Embedder` over a fastembed model, loaded on first use."""

    def __init__(
        self,
        model: str,
        *,
        model_path: str = "",
        cache_dir: Path | None = None,
        batch_size: int = 64,
        cache: EmbedCache | None = None,
    ) -> None:
        super().__init__(local_fingerprint(model), batch_size=batch_size, cache=cache)
        self.name = model_name(model)
        self.model_path = model_path
        self.cache_dir = cache_dir
        self._model: Any = None

    @classmethod
    def from_settings(cls, settings: Settings) -> LocalEmbedder:
        from memcli.config.layers import cache_dir

        model_path = str(settings.get("embedding.model_path") or "").strip()
        return cls(
            str(settings.get("embedding.model")),
            model_path=str(Path(model_path).expanduser()) if model_path else "",
            cache_dir=cache_dir() / "models",
            batch_size=int(settings.get("embedding.batch_size")),
            cache=cache_from_settings(settings),
        )

    def where(self) -> str:
        """Where the model's files are read from (for ``doctor``)."""
        return self.model_path or str(self.cache_dir or "fastembed's cache")

    def load(self) -> Any:
        """The fastembed model (loaded once; ProviderError naming what is missing)."""
        if self._model is not None:
            return self._model
        try:
            from fastembed import TextEmbedding  # ONNX Runtime and numpy: only for vectors
        except ImportError:
            raise ProviderError(
                f"local/{self.name} needs fastembed: pip install 'memcli[local]'"
            ) from None
        kwargs: dict[str, Any] = {}
        if self.model_path:
            if not (Path(self.model_path) / "model.onnx").is_file() and not any(
                Path(self.model_path).glob("*.onnx")
            ):
                raise ProviderError(f"embedding.model_path {self.model_path} holds no ONNX model")
            kwargs["specific_model_path"] = self.model_path
            os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the files are here: never fetch
        elif self.cache_dir is not None:
            kwargs["cache_dir"] = str(self.cache_dir)
        try:
            self._model = TextEmbedding(model_name=self.name, **kwargs)
        except Exception as exc:  # fastembed raises ValueError, OSError, hub errors...
            raise ProviderError(f"cannot load local/{self.name}: {exc}") from None
        return self._model

    def _compute(self, texts: list[str], quick: bool) -> list[list[float]]:
        model = self.load()
        try:
            return [v.tolist() for v in model.embed(texts, batch_size=MODEL_BATCH)]
        except Exception as exc:  # an ONNX Runtime failure is the provider failing
            raise ProviderError(f"local/{self.name} failed: {exc}") from None
