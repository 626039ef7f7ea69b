"""Embeddings computed in-process: ``embedding.model = "local/NAME"`` with fastembed.

NAME is any model fastembed knows (``sentence-transformers/all-MiniLM-L6-v2``, a multilingual
one such as ``sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2``...), a model of
memcli's list by its short name (``multilingual-e5-small``), or any other model with its
folder in ``embedding.model_path``. The model runs
on ONNX Runtime in this process: no API key, no network once the model is on disk. With
``embedding.model_path`` the model's files are read from that folder (for machines without
internet); otherwise fastembed fetches them once into memcli's cache folder. fastembed (and
ONNX Runtime, numpy) is imported only when a vector is computed: a cached vector, or a search
that needs none, never loads it. Install it with ``pip install 'memcli[local]'``.

A model folder of a model memcli knows (:mod:`memcli.providers.models`) is run on ONNX Runtime
directly (:mod:`memcli.providers.onnxmodel`), without importing fastembed (half a second of
start-up); the vectors are the same. A model fastembed does not know by name is registered
with it as a custom model, described by its folder (pooling, normalisation, dimension). The
prefixes a model expects before questions and stored texts come from the same place. Texts
are embedded shortest first, a few per model run: a batch is padded to its longest text, and
on a CPU small batches of similar texts are the fastest.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memcli.config import Settings
from memcli.errors import ProviderError
from memcli.index.embedcache import EmbedCache
from memcli.providers import models, onnxmodel
from memcli.providers.cached import CachedEmbedder, cache_from_settings, local_fingerprint

#: Texts per model run. With texts sorted by length, batches of 2 to 6 cost the least CPU per
#: text on LoCoMo chunks; 16 costs 25% more, 64 75% more (benchmarks/local_bench.py).
MODEL_BATCH = 4
#: The folder of optimised graphs (memcli.providers.onnxsession) in the models' cache folder.
GRAPHS = "onnx-graphs"


def model_name(model: str) -> str:
    """The fastembed name of ``local/NAME`` (a known model's short name made full)."""
    return models.full_name(model.strip().split("/", 1)[1])


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
        #: What runs the model once loaded: "onnxruntime" (a known model's folder) or "fastembed".
        self.runtime = ""
        self.known = models.find(self.name)
        self.query_prefix, self.passage_prefix = models.prefixes(self.name, model_path)

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
        """The loaded model, with ``embed(texts, batch_size)`` (loaded once; ProviderError
        naming what is missing)."""
        if self._model is not None:
            return self._model
        folder = Path(self.model_path) if self.model_path else None
        if folder is not None and not any(folder.glob("*.onnx")):
            raise ProviderError(f"embedding.model_path {self.model_path} holds no ONNX model")
        pooling = onnxmodel.POOLING.get(self.name)
        if folder is not None and pooling is not None and onnxmodel.model_file(folder):
            # a known model's folder: ONNX Runtime directly, fastembed's vectors without its import
            graphs = self.cache_dir / GRAPHS if self.cache_dir is not None else None
            self._model = self._load(lambda: onnxmodel.OnnxModel(folder, pooling, graphs))
            self.runtime = "onnxruntime"
        else:
            self._model = self._load(self._fastembed)
            self.runtime = "fastembed"
        return self._model

    def _load(self, make: Callable[[], Any]) -> Any:
        try:
            return make()
        except ProviderError:
            raise
        except ImportError:
            raise ProviderError(
                f"local/{self.name} needs fastembed: pip install 'memcli[local]'"
                " (in a checkout: make extras)"
            ) from None
        except Exception as exc:  # fastembed raises ValueError, OSError, hub errors...
            raise ProviderError(f"cannot load local/{self.name}: {exc}") from None

    def _fastembed(self) -> FastembedModel:
        from fastembed import TextEmbedding  # ONNX Runtime and numpy: only for vectors

        _quiet_fastembed()
        kwargs: dict[str, Any] = {}
        if self.model_path:
            kwargs["specific_model_path"] = self.model_path
            os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the files are here: never fetch
            register_custom(TextEmbedding, self.name, Path(self.model_path), self.known)
            return FastembedModel(TextEmbedding(model_name=self.name, **kwargs))
        if not _fastembed_knows(TextEmbedding, self.name) or self.name.lower() in _REGISTERED:
            raise ProviderError(
                f"fastembed cannot fetch local/{self.name}: set embedding.model_path to a"
                " folder holding the model (memcli init --local --model-path DIR)"
            )
        if self.cache_dir is not None:
            kwargs["cache_dir"] = str(self.cache_dir)
        try:  # in the cache already: no network at all
            return FastembedModel(
                TextEmbedding(model_name=self.name, local_files_only=True, **kwargs)
            )
        except Exception:  # noqa: S110 - not there (or incomplete): fetch it, once, if the hub answers
            pass
        hub = hub_unreachable()
        if hub:
            raise ProviderError(
                f"local/{self.name} is not in {self.where()} and {hub};"
                " set embedding.model_path to a folder holding the model"
            )
        return FastembedModel(TextEmbedding(model_name=self.name, **kwargs))

    def _order(self, pending: list[tuple[str, str]]) -> list[tuple[str, str]]:
        return sorted(pending, key=lambda item: len(item[1]))  # similar lengths pad less

    def _compute(self, texts: list[str], quick: bool) -> list[list[float]]:
        model = self.load()
        try:
            vectors: list[list[float]] = model.embed(texts, MODEL_BATCH)
        except Exception as exc:  # an ONNX Runtime failure is the provider failing
            raise ProviderError(f"local/{self.name} failed: {exc}") from None
        return vectors


def register_custom(
    text_embedding: Any, name: str, folder: Path, known: models.LocalModel | None
) -> bool:
    """Register ``name`` with fastembed as a custom model when fastembed does not know it:
    pooling and normalisation from memcli's list or the folder, the dimension from the
    folder's ``config.json``. True when it registered it."""
    if _fastembed_knows(text_embedding, name):
        return False
    from fastembed.common.model_description import ModelSource, PoolingType

    method, normalize = (
        (known.pooling, known.normalize) if known is not None else models.folder_pooling(folder)
    )
    dims = models.folder_dimensions(folder) or (known.dimensions if known is not None else 0)
    onnx = onnxmodel.model_file(folder)
    if not dims or onnx is None:
        raise ProviderError(
            f"fastembed does not know {name}, and {folder} gives no"
            f" {'dimension (config.json hidden_size)' if not dims else 'single ONNX file'}"
        )
    text_embedding.add_custom_model(
        model=name,
        pooling=PoolingType.CLS if method == "cls" else PoolingType.MEAN,
        normalization=normalize,
        sources=ModelSource(hf=name),
        dim=dims,
        model_file=onnx.name,
    )
    _REGISTERED.add(name.lower())
    return True


#: The models this process registered with fastembed from a folder: fastembed lists them as
#: its own from then on, but can run them only from that folder, never fetch them.
_REGISTERED: set[str] = set()


def _fastembed_knows(text_embedding: Any, name: str) -> bool:
    """Whether fastembed has ``name`` among its models (built in or registered)."""
    return any(m["model"].lower() == name.lower() for m in text_embedding.list_supported_models())


def hub_unreachable(timeout: float = 3.0) -> str | None:
    """Why the model hub (``$HF_ENDPOINT``, default huggingface.co) cannot be reached, or None
    when a connection opens: a model is fetched only then, not after fastembed's retries
    (about 40 s) on a machine without network."""
    import socket
    from urllib.parse import urlsplit

    url = urlsplit(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    host = url.hostname or "huggingface.co"
    port = url.port or (80 if url.scheme == "http" else 443)
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as exc:
        return f"{host} cannot be reached to fetch it ({exc.strerror or exc})"
    return None


def _quiet_fastembed() -> None:
    """fastembed logs its download attempts to stderr; memcli reports failures itself."""
    try:
        from loguru import logger
    except ImportError:
        return
    logger.disable("fastembed")


class FastembedModel:
    """A fastembed ``TextEmbedding`` with :class:`~memcli.providers.onnxmodel.OnnxModel`'s
    ``embed``."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def embed(self, texts: list[str], batch_size: int) -> list[list[float]]:
        return [v.tolist() for v in self.model.embed(texts, batch_size=batch_size)]
