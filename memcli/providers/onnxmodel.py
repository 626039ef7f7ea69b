"""A sentence-embedding model folder run directly on ONNX Runtime (the fast path of ``local/``).

fastembed's import alone costs about half a second (it pulls in huggingface_hub, httpx,
requests, PIL...): more than the model load and a query together. For a model folder
(``embedding.model_path``) of a model listed in :data:`POOLING`, memcli loads the same files
with onnxruntime and tokenizers only and computes what fastembed computes for that model: the
tokenizer set up as fastembed sets it up (truncation, batch-longest padding), the encoder, then
the pooling and normalisation fastembed applies to that model. Other models (and models that
fastembed downloads) go through fastembed. The tests compare both paths on the real model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from memcli.providers.models import MODELS


class Pooling(NamedTuple):
    """How token vectors become one sentence vector: the mean of the real tokens (``mean``)
    or the first token (``cls``), then L2-normalised when ``normalize``."""

    method: str
    normalize: bool


#: Models whose fastembed post-processing memcli reproduces (fastembed's PooledNormalized
#: class for all-MiniLM-L6-v2: mean of the attended tokens in float64, L2-normalised): every
#: model of :data:`memcli.providers.models.MODELS`.
POOLING: dict[str, Pooling] = {m.name: Pooling(m.pooling, m.normalize) for m in MODELS}


def model_file(folder: Path) -> Path | None:
    """The ONNX file of a model folder: ``model.onnx``, else the only ``*.onnx`` in it."""
    main = folder / "model.onnx"
    if main.is_file():
        return main
    found = sorted(folder.glob("*.onnx"))
    return found[0] if len(found) == 1 else None


def load_tokenizer(folder: Path) -> Any:
    """The folder's tokenizer, set up as fastembed sets it up (``load_tokenizer``): truncation
    at the stricter of ``model_max_length`` and ``max_length``, special tokens registered,
    padding to the longest text of a batch."""
    from tokenizers import AddedToken, Tokenizer

    config = _json(folder / "tokenizer_config.json")
    model_config = _json(folder / "config.json")
    limits = [
        v
        for v in (config.get("model_max_length"), config.get("max_length"))
        if isinstance(v, int) and not isinstance(v, bool) and 0 < v < 2**63
    ]
    if not limits:
        raise ValueError(f"no maximum length in {folder / 'tokenizer_config.json'}")
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    truncation = tokenizer.truncation or {}
    tokenizer.enable_truncation(
        max_length=min(limits),
        direction=config.get("truncation_side") or truncation.get("direction", "right"),
    )
    for token in _special_tokens(_json(folder / "special_tokens_map.json")):
        if isinstance(token, str):
            tokenizer.add_special_tokens([token])
        elif isinstance(token, dict):
            tokenizer.add_special_tokens([AddedToken(**token)])
    padding = tokenizer.padding or {}
    pad_token = padding.get("pad_token") or config.get("pad_token")
    if pad_token is None:
        raise ValueError(f"no pad token in {folder}")
    pad_id = padding.get("pad_id", model_config.get("pad_token_id"))
    if pad_id is None:
        pad_id = tokenizer.token_to_id(pad_token)
    tokenizer.enable_padding(
        direction=config.get("padding_side") or padding.get("direction", "right"),
        pad_id=pad_id,
        pad_type_id=padding.get("pad_type_id", 0),
        pad_token=pad_token,
        pad_to_multiple_of=padding.get("pad_to_multiple_of"),
        length=None,
    )
    return tokenizer


def _json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def _special_tokens(tokens: dict[str, Any]) -> list[Any]:
    out: list[Any] = []
    for value in tokens.values():
        out.extend(value if isinstance(value, list) else [value])
    return out


def _open(model: Path, graphs: Path | None, made: list[Any]) -> None:
    """The session of ``model`` (:func:`memcli.providers.onnxsession.open_session`), or what
    it raised, appended to ``made`` (run on a thread of its own)."""
    from memcli.providers.onnxsession import open_session  # ONNX Runtime: vectors only

    try:
        made.append(open_session(model, graphs))
    except BaseException as exc:
        made.append(exc)


class OnnxModel:
    """One model folder loaded in this process: :meth:`embed` turns texts into vectors."""

    def __init__(self, folder: Path, pooling: Pooling, graphs: Path | None = None) -> None:
        """Load the model of ``folder``; ``graphs``: the folder of optimised graphs kept
        between processes (:mod:`memcli.providers.onnxsession`; None: none kept)."""
        from threading import Thread  # (with ONNX Runtime) vectors only

        path = model_file(folder)
        if path is None:
            raise ValueError(f"{folder} holds no ONNX model")
        # ONNX Runtime lets other threads run while it makes a session: the tokenizer is read
        # meanwhile, on another core where there is one (benchmarks/query_bench.py)
        made: list[Any] = []
        thread = Thread(target=_open, args=(path, graphs, made), daemon=True)
        thread.start()
        try:
            self.tokenizer = load_tokenizer(folder)
        finally:
            thread.join()
        if isinstance(made[0], BaseException):
            raise made[0]
        self.session = made[0]
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.pooling = pooling

    def embed(self, texts: list[str], batch_size: int) -> list[list[float]]:
        """One vector per text, in order, computed ``batch_size`` texts per run."""
        out: list[list[float]] = []
        for start in range(0, len(texts), batch_size):
            out.extend(self._run(texts[start : start + batch_size]))
        return out

    def _run(self, texts: list[str]) -> list[list[float]]:
        import numpy as np

        encoded = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feed = {"input_ids": ids}
        if "attention_mask" in self.inputs:
            feed["attention_mask"] = mask
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self.session.run(None, feed)[0]
        if hidden.ndim == 2:  # the graph pools already
            pooled = hidden
        elif self.pooling.method == "cls":
            pooled = hidden[:, 0]
        else:  # the mean of the real tokens, summed in float64 as fastembed does
            summed = np.sum(hidden, axis=1, where=mask[:, :, None].astype(bool), dtype=np.float64)
            pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        if self.pooling.normalize:
            norm = np.linalg.norm(pooled, ord=2, axis=1, keepdims=True)
            pooled = pooled / np.maximum(norm, 1e-12)
        vectors: list[list[float]] = pooled.astype(hidden.dtype, copy=False).tolist()
        return vectors
