"""The entry of a chunk nearest a query: what a search quotes of a chunk that vectors found,
and what an agent's recall quotes, and how sure it is.

A chunk's vector stands for all its entries at once, and a chunk found by vectors alone is
shown by its first passage, so a hybrid search may rank the right chunk and quote the wrong
entry of it, with a similarity diluted by its neighbours. Recall therefore embeds each entry
(passage) of the chunks a search found, alone (:func:`chunk_entries`): an entry's own cosine
similarity says far better than a fused score whether the prompt is about it
(``benchmarks/recall_bench.py``). An entry is embedded as its kind and words
(:func:`~memcli.notes.entryparse.plain_entry`: no list mark, time or tags, which only blur
it); the vectors come from the embedding cache after the first time an entry is seen.

A search does the same for the chunks with the best vector similarity
(:func:`entry_similarities`): each is quoted by its entry nearest the query, not by its first
lines.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import date

from memcli.errors import ProviderError
from memcli.notes.entryparse import plain_entry
from memcli.search.results import Hit
from memcli.search.snippets import Passage, split_passages

#: Vectors of texts, in order (the workspace's embedder, cached).
Embed = Callable[[Sequence[str]], list[list[float]]]


def chunk_entries(
    hits: list[Hit], query_vector: Sequence[float], embed: Embed
) -> list[tuple[Hit, float, bool]]:
    """Every entry of the hits' chunks as a hit of its own, with its cosine similarity to
    ``query_vector`` and whether it is the entry of its chunk nearest it (the first, of
    equals); the hits' order, each chunk's entries in line order. A chunk that holds no
    entry gives none."""
    found = _entries(hits, query_vector, embed, matched=False)
    nearest: dict[int, int] = {}  # hit -> the index in found of its nearest entry
    for i, (hit, _, _, sim) in enumerate(found):
        if id(hit) not in nearest or sim > found[nearest[id(hit)]][3]:
            nearest[id(hit)] = i
    return [
        (narrowed(hit, p, text, sim), sim, nearest[id(hit)] == i)
        for i, (hit, p, text, sim) in enumerate(found)
    ]


def matched_entries(
    hit: Hit, query_vector: Sequence[float], embed: Embed
) -> list[tuple[Hit, float]]:
    """Each entry of ``hit``'s matching lines (its snippet's) as a hit of its own, with its
    cosine similarity to ``query_vector``."""
    found = _entries([hit], query_vector, embed, matched=True)
    return [(narrowed(hit, p, text, sim), sim) for hit, p, text, sim in found]


def _entries(
    hits: list[Hit], query_vector: Sequence[float], embed: Embed, *, matched: bool
) -> list[tuple[Hit, Passage, str, float]]:
    """The entries of the hits' chunks (``matched``: of their matching lines only), each
    with its hit, its passage, its text and its similarity; each embedded alone."""
    entries: list[tuple[Hit, Passage, str]] = []
    for hit in hits:
        lines = hit.text.split("\n")
        for p in split_passages(hit.path, lines, first_line=hit.chunk_start):
            if matched and (p.end < hit.start_line or p.start > hit.end_line):
                continue
            text = "\n".join(lines[p.start - hit.chunk_start : p.end - hit.chunk_start + 1])
            if text.strip():
                entries.append((hit, p, text))
    if not entries:
        return []
    vectors = embed([plain_entry(text) for _, _, text in entries])
    return [
        (hit, p, text, cosine(query_vector, vector))
        for (hit, p, text), vector in zip(entries, vectors, strict=True)
    ]


def entry_similarities(
    chunks: dict[int, list[tuple[Passage, str]]],
    sims: dict[int, float | None],
    query_vector: Sequence[float],
    embed: Embed,
    top: int,
) -> dict[int, dict[Passage, float]]:
    """The similarity to ``query_vector`` of each passage of the ``top`` chunks of best
    similarity in ``sims`` (chunk id -> its passages with their text), each passage embedded
    alone. A chunk of one passage needs none; a provider that fails leaves the choice to the
    caller (an empty answer)."""
    best = sorted((cid for cid, s in sims.items() if s is not None), key=lambda c: -(sims[c] or 0))
    picked = [cid for cid in best if len(chunks.get(cid, ())) > 1][:top]
    entries = [(cid, p, text) for cid in picked for p, text in chunks[cid] if text.strip()]
    if not entries:
        return {}
    try:
        vectors = embed([plain_entry(text) for _, _, text in entries])
    except ProviderError:
        return {}
    out: dict[int, dict[Passage, float]] = {}
    for (cid, p, _), vector in zip(entries, vectors, strict=True):
        out.setdefault(cid, {})[p] = cosine(query_vector, vector)
    return out


def narrowed(hit: Hit, p: Passage, text: str, sim: float) -> Hit:
    """A copy of ``hit`` whose snippet is the entry ``p`` alone (``text``), redacted."""
    one = Hit(
        hit.chunk_id,
        hit.path,
        hit.chunk_start,
        hit.chunk_end,
        hit.heading,
        hit.text,
        hit.source,
        hit.date,
        hit.evergreen,
        hit.score,
    )
    one.state, one.confirmed, one.corroborated = hit.state, hit.confirmed, hit.corroborated
    one.start_line, one.end_line = p.start, p.end
    one.show(text, date.today().isoformat())
    one.scores = {**hit.scores, "entry": round(sim, 4)}
    return one


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors (0 when either is all zeros)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0
