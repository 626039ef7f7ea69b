"""Everyday requests to a coding agent, which need no memory: what recall measures a prompt
against before it gives an entry.

A prompt's similarity to an entry says how alike they are, not whether the prompt needs the
entry: asking for a new command-line flag in a script is as near a fact about feature flags
as many a real question is to its fact. So recall also asks how near the prompt is to a
fixed set of everyday requests (``background.txt``: edits, explanations, git and shell
chores, short replies, written for no project in particular), and gives an entry only when
the prompt is nearer to it than to the few of them nearest the prompt, by a margin measured
for the model (``benchmarks/recall_bench.py``). The set is embedded once per model, then read
from the embedding cache.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from memcli.search.nearest import Embed

#: One everyday request a line.
BACKGROUND = Path(__file__).with_name("background.txt")

#: How many of the everyday requests nearest a prompt stand for it: their mean similarity.
NEAREST = 3

#: The requests' unit vectors by model (its fingerprint): a warm engine computes them once.
_UNITS: dict[str, list[Sequence[float]]] = {}


@cache
def requests() -> tuple[str, ...]:
    """The everyday requests (read once a process)."""
    lines = BACKGROUND.read_text(encoding="utf-8").splitlines()
    return tuple(line.strip() for line in lines if line.strip())


def similarity(query_vector: Sequence[float], embed: Embed, model: str) -> float:
    """The mean cosine similarity of ``query_vector`` to the :data:`NEAREST` everyday
    requests nearest it; ``model`` names the vectors ``embed`` gives (its fingerprint).
    Raises ProviderError when the model fails."""
    units = _UNITS.get(model)
    if units is None:
        units = _UNITS[model] = [_unit(v) for v in embed(list(requests()))]
    query = _unit(query_vector)
    sims = sorted((float(sum(map(operator.mul, query, u))) for u in units), reverse=True)
    return sum(sims[:NEAREST]) / NEAREST


def _unit(vector: Sequence[float]) -> Sequence[float]:
    """``vector`` scaled to length 1 (as it is when it has that length, as most models give)."""
    norm = math.hypot(*vector)
    return vector if not norm or abs(norm - 1) < 1e-6 else [x / norm for x in vector]
