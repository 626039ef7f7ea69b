"""The local models memcli knows: what each needs (pooling, prefixes) and what it costs.

A model listed here is run from its folder on ONNX Runtime directly
(:mod:`memcli.providers.onnxmodel`), with the pooling and normalisation it was trained with,
and its texts get the prefixes it expects (E5 models: ``query: `` before a question and before
a stored text). The prefixes are declared here, once per model, and
applied by the embedder (:class:`memcli.providers.cached.CachedEmbedder`); no call site
adds them. A model not listed here is read through fastembed; when fastembed does not know
its name either, :func:`folder_pooling` and :func:`folder_dimensions` describe it from its
folder. ``memcli init --local --local-model list`` prints :data:`MODELS` with their costs.

Nothing here imports ONNX Runtime, numpy or fastembed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple


class RecallRule(NamedTuple):
    """When recall gives an entry, for one embedding model: chosen with
    ``benchmarks/recall_bench.py``, the most relevant prompts recalled on the tuning halves of
    both its projects with at most 5% of their unrelated prompts given anything."""

    #: The entry's similarity to the prompt reaches it (``agent.recall_min_similarity``, when
    #: set, instead)...
    floor: float
    #: ...and the prompt's mean similarity to its nearest everyday requests
    #: (:mod:`memcli.search.background`) plus this, for the entry of a result's chunk
    #: nearest the prompt.
    margin: float
    #: The best keyword result, when it scores at least this, gives its matching entries...
    agreed_score: float
    #: ...with this margin instead: words and vectors agree on them.
    agreed_margin: float
    #: An entry of a result's chunk that names a thing the prompt names in other words
    #: (:mod:`memcli.search.related`), with this margin (the smallest that applies counts).
    related_margin: float


class LocalModel(NamedTuple):
    """One model memcli can run locally, with what it was measured to cost (2 shared cores)."""

    name: str  # the fastembed / Hugging Face name (embedding.model = local/<name>)
    short: str  # what --local-model also accepts
    folder: str  # the folder name it is usually shipped in
    languages: str
    dimensions: int
    size_mb: int  # the model's files on disk
    load_s: float  # loading it, once per process
    passage_ms: float  # one stored text (a LoCoMo turn), while indexing
    query_ms: float  # one short question
    pooling: str = "mean"  # "mean" of the real tokens or the first token ("cls")
    normalize: bool = True
    query_prefix: str = ""
    passage_prefix: str = ""
    #: When recall gives an entry with this model's vectors (benchmarks/recall_bench.py).
    recall: RecallRule = RecallRule(0.25, 0.05, 0.45, 0.0, -0.05)


#: Recall's rule for an embedding model not listed here.
RECALL_RULE = RecallRule(0.35, 0.0, 0.40, -0.02, -0.04)

#: The models memcli knows, the default first (figures: benchmarks/RESULTS.md, "Local models").
MODELS: tuple[LocalModel, ...] = (
    LocalModel(
        "sentence-transformers/all-MiniLM-L6-v2",
        "all-MiniLM-L6-v2",
        "all-MiniLM-L6-v2-onnx",
        "English",
        384,
        46,
        0.2,
        14.0,
        5.0,
    ),
    LocalModel(
        "intfloat/multilingual-e5-small",
        "multilingual-e5-small",
        "multilingual-e5-small-q4-onnx",
        "about 100, across languages",
        384,
        86,
        1.4,
        31.0,
        13.0,
        # "query: " before stored texts too, as E5 wants for texts of the same kind (a memory
        # holds short statements, not documents): English questions for facts in Chinese,
        # Japanese and Korean, top-3 0.79 -> 0.90 ("passage: " before; RESULTS.md)
        query_prefix="query: ",
        passage_prefix="query: ",
        # E5's similarities all sit high: unrelated texts reach 0.8
        recall=RecallRule(0.805, -0.01, 0.35, -0.02, -0.02),
    ),
)

DEFAULT = MODELS[0]


def find(name: str) -> LocalModel | None:
    """The known model called ``name`` (``local/`` optional, full or short name, any case)."""
    key = name.strip().lower().removeprefix("local/")
    for model in MODELS:
        if key in (model.name.lower(), model.short.lower()):
            return model
    return None


def full_name(name: str) -> str:
    """``name`` as a fastembed name: a known model's short name becomes its full name."""
    known = find(name)
    return known.name if known is not None else name.strip().removeprefix("local/")


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def folder_pooling(folder: Path) -> tuple[str, bool]:
    """(pooling, normalize) that a sentence-transformers folder declares (``1_Pooling/
    config.json``, ``modules.json``); mean pooling, normalised, when it declares nothing."""
    pooling = _json(folder / "1_Pooling" / "config.json")
    method = "cls" if pooling.get("pooling_mode_cls_token") else "mean"
    modules_file = folder / "modules.json"
    if not modules_file.is_file():
        return method, True
    try:
        modules = json.loads(modules_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return method, True
    kinds = [str(m.get("type", "")) for m in modules if isinstance(m, dict)]
    return method, any(k.endswith("Normalize") for k in kinds)


def folder_dimensions(folder: Path) -> int:
    """The vector size a model folder's ``config.json`` gives (``hidden_size``), 0 if none."""
    config = _json(folder / "config.json")
    for key in ("hidden_size", "dim", "d_model"):
        value = config.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return 0


def folder_prefixes(folder: Path) -> tuple[str, str]:
    """(query, passage) prefixes a sentence-transformers folder declares as prompts
    (``config_sentence_transformers.json``); empty when it declares none."""
    prompts = _json(folder / "config_sentence_transformers.json").get("prompts")
    if not isinstance(prompts, dict):
        return "", ""
    query = prompts.get("query", "")
    passage = prompts.get("passage", prompts.get("document", ""))
    return (query if isinstance(query, str) else ""), (passage if isinstance(passage, str) else "")


def prefixes(name: str, model_path: str = "") -> tuple[str, str]:
    """(query, passage) prefixes of the model called ``name``: a known model's declared ones,
    else those its folder ``model_path`` declares (:func:`folder_prefixes`)."""
    known = find(name)
    if known is not None:
        return known.query_prefix, known.passage_prefix
    return folder_prefixes(Path(model_path)) if model_path else ("", "")


def describe(model: LocalModel) -> dict[str, Any]:
    """A known model as JSON: its names, languages and costs."""
    return {
        "model": f"local/{model.name}",
        "short": model.short,
        "folder": model.folder,
        "languages": model.languages,
        "dimensions": model.dimensions,
        "size_mb": model.size_mb,
        "load_s": model.load_s,
        "passage_ms": model.passage_ms,
        "query_ms": model.query_ms,
        "recall_similarity": model.recall.floor,
        "recall_rule": model.recall._asdict(),
        "default": model is DEFAULT,
    }
