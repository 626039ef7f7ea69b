"""Checking what a provider answered: the vectors of an embedding response, the text of a
chat completion; anything else is a one-line :class:`ProviderError`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from memcli.errors import ProviderError


def malformed(model: str, why: str) -> ProviderError:
    return ProviderError(
        f"embedding provider returned malformed embeddings for {model}: {why}",
        hint="check that the model is an embedding model and the server speaks the OpenAI API",
    )


def _field(item: Any, name: str) -> Any:
    if isinstance(item, dict):
        return item.get(name)
    return getattr(item, name, None)


def parse_embeddings(response: Any, expected: int, model: str) -> list[list[float]]:
    """Vectors from an embedding response, sorted by index and checked for shape and finiteness."""
    data = _field(response, "data")
    if not isinstance(data, Sequence) or isinstance(data, (str, bytes)):
        raise malformed(model, "no data list")
    if len(data) != expected:
        raise malformed(model, f"{len(data)} vectors for {expected} inputs")
    indices = [_field(item, "index") for item in data]
    if all(isinstance(i, int) and not isinstance(i, bool) for i in indices):
        if sorted(indices) != list(range(expected)):
            raise malformed(model, "indices do not match the inputs")
        ordered = [item for _, item in sorted(zip(indices, data, strict=True), key=lambda p: p[0])]
    elif all(i is None for i in indices):
        ordered = list(data)
    else:
        raise malformed(model, "bad indices")
    vectors: list[list[float]] = []
    for item in ordered:
        raw = _field(item, "embedding")
        if not isinstance(raw, (list, tuple)) or not raw:
            raise malformed(model, "an embedding is empty or not a list of numbers")
        vec: list[float] = []
        for x in raw:
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
                raise malformed(model, "an embedding holds a non-finite or non-numeric value")
            vec.append(float(x))
        vectors.append(vec)
    if len({len(v) for v in vectors}) != 1:
        raise malformed(model, "vectors of different lengths")
    return vectors


def message_content(response: Any, model: str) -> str:
    """The assistant message text of a chat completion; ProviderError when there is none."""
    try:
        content = response.choices[0].message.content
    except (AttributeError, IndexError, KeyError, TypeError):
        content = None
    if not isinstance(content, str) or not content.strip():
        raise ProviderError(
            f"LLM provider returned no message content for {model}",
            hint="the model may have refused or been cut off; try again or another model",
        )
    return content
