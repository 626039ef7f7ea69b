"""Ranking: passage scores, normalisation to [0, 1], decay, threshold, MMR and explanations.

Keyword score of a passage
    BM25 over passages (k1 = 1.2, b = 0.75) with the idf of Lucene,
    ``ln(1 + (N - df + 0.5) / (df + 0.5))``, where ``N`` and ``df`` count chunks of the index.
    Unlike the idf of FTS5's ``bm25()`` it never reaches 0, so a term found in half the files
    (or in one of two files) still counts. Words of the heading breadcrumb count
    ``heading_weight`` times. Terms are the stems the index itself produces (the query and
    the passages go through the index's own FTS5 tokenizer), so ranking agrees with matching.

Neighbours
    A passage gains ``neighbour_weight`` times the BM25 of the passages right before and after
    it in the same section: facts next to a match are often part of the answer (a question and
    its reply, a decision and its reason).

Normalisation
    ``keyword = 1 - 2 ** (-2 * bm25 / ideal)``, where ``ideal`` is the BM25 of a passage of
    average length holding every query term once (the sum of the terms' idf). A passage with
    half the query's weight scores 0.5, one with all of it 0.75, more (repeats, neighbours) tends
    to 1. The scale depends on the query, not the corpus, so scores mean the same on two files
    and on ten thousand.
"""

# No `from __future__ import annotations` here: typing compiles each string annotation of a
# NamedTuple at import (typing.ForwardRef), on every search and prompt hook.
import functools
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import date
from typing import Any, NamedTuple, TypeVar

from memcli.search.analyzer import Analyzer, doc_freqs, prefix_terms

K1 = 1.2
B = 0.75
HEADING_WEIGHT = 0.3
NEIGHBOUR_WEIGHT = 0.3
PROXIMITY_WEIGHT = 0.5
CHUNK_WEIGHT = 1.0
#: Tokens apart (or fewer) at which two neighbouring query words count as close.
PROXIMITY_WINDOW = 3


@functools.cache
def _word() -> re.Pattern[str]:
    """Compiled on first use: not on every start-up."""
    return re.compile(r"\w+")


T = TypeVar("T")


def idf(n: int, df: int) -> float:
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


# -- keyword scores of passages --------------------------------------------------------------
class KeywordParams(NamedTuple):
    k1: float = K1
    b: float = B
    heading_weight: float = HEADING_WEIGHT
    neighbour_weight: float = NEIGHBOUR_WEIGHT
    proximity_weight: float = PROXIMITY_WEIGHT
    chunk_weight: float = CHUNK_WEIGHT


class QueryTerms(NamedTuple):
    """The query's units with their idf, and the BM25 of an ideal passage.

    A unit is a stem, or a phrase: a quoted phrase or an identifier (``CX-7742-B``), keyed by
    its stems joined by spaces, which counts only where its stems stand in a row."""

    stems: dict[str, list[str]]  # unit -> the query words that produced it
    idf: dict[str, float]
    phrases: dict[str, tuple[str, ...]]  # phrase unit -> its stems in order
    pairs: tuple[tuple[str, str], ...]  # stems of neighbouring query words (proximity)

    @property
    def ideal(self) -> float:
        return sum(self.idf.values())

    def lookups(self) -> list[str]:
        """Every single stem whose positions in a passage the scores need."""
        out = dict.fromkeys(t for t in self.idf if t not in self.phrases)
        out.update(dict.fromkeys(s for stems in self.phrases.values() for s in stems))
        return list(out)


def query_terms(
    conn: Any,
    analyzer: Analyzer,
    words: Sequence[str],
    prefixes: Sequence[str] = (),
    names: Sequence[str] = (),
    name_weight: float = 1.0,
    phrases: Sequence[Sequence[str]] = (),
    freqs: dict[str, int] | None = None,
) -> QueryTerms:
    """The stems of ``words`` and the index's terms that start with each of ``prefixes`` (the
    most common :data:`memcli.search.analyzer.PREFIX_TERMS` of them), with their idf; the idf
    of a stem of one of ``names`` (proper names in the query) is multiplied by
    ``name_weight``. Each of
    ``phrases`` (its words) is one unit whose document frequency is the number of chunks
    holding it as a phrase. ``freqs``: document frequencies known from earlier searches of
    the index as it is (:meth:`memcli.index.store.Store.term_freqs`), taken and added to."""
    stems: dict[str, list[str]] = {}
    firsts: list[str] = []
    for word, toks in zip(words, analyzer.tokens(list(words)), strict=True):
        for t in toks:
            stems.setdefault(t, [])
            if word not in stems[t]:
                stems[t].append(word)
        if toks:
            firsts.append(toks[0])
    for prefix in prefixes:
        for t in prefix_terms(conn, prefix):
            stems.setdefault(t, []).append(f"{prefix}*")
    units: dict[str, tuple[str, ...]] = {}
    texts = [" ".join(p) for p in phrases]
    for text, toks in zip(texts, analyzer.tokens(texts), strict=True):
        if len(toks) == 1:
            stems.setdefault(toks[0], []).append(text)
        elif toks:
            units[" ".join(toks)] = tuple(toks)
            stems.setdefault(" ".join(toks), []).append(f'"{text}"')
    known = {} if freqs is None else freqs
    n, df = doc_freqs(conn, [t for t in stems if t not in units and t not in known])
    for key, unit in units.items():
        if key not in known:
            df[key] = phrase_freq(conn, unit)
    known.update(df)
    df = {t: known[t] for t in stems}
    weights = {t: idf(n, df[t]) for t in stems}
    if names and name_weight != 1.0:
        named = set(names)
        for t, from_words in stems.items():
            if named & set(from_words):
                weights[t] *= name_weight
    pairs = tuple(dict.fromkeys((a, b) for a, b in zip(firsts, firsts[1:], strict=False) if a != b))
    return QueryTerms(stems, weights, units, pairs)


def phrase_freq(conn: Any, stems: Sequence[str]) -> int:
    """The number of chunks that hold ``stems`` as a phrase."""
    expr = '"' + " ".join(s.replace('"', '""') for s in stems) + '"'
    return int(
        conn.execute(
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (expr,)
        ).fetchone()[0]
    )


def unit_counts(q: QueryTerms, positions: dict[str, list[int]]) -> Counter[str]:
    """How often each unit of ``q`` occurs, from the offsets of its stems in a text."""
    tf: Counter[str] = Counter()
    for t in q.idf:
        stems = q.phrases.get(t)
        if stems is None:
            if t in positions:
                tf[t] = len(positions[t])
            continue
        later = [set(positions.get(s, ())) for s in stems[1:]]
        n = sum(
            1
            for at in positions.get(stems[0], ())
            if all(at + i + 1 in p for i, p in enumerate(later))
        )
        if n:
            tf[t] = n
    return tf


def near_pairs(q: QueryTerms, positions: dict[str, list[int]], window: int) -> dict[str, int]:
    """For each pair of neighbouring query words: how often they stand within ``window``
    tokens of each other in a text (either order), keyed ``"a b"``."""
    out: dict[str, int] = {}
    for a, b in q.pairs:
        pa, pb = positions.get(a), positions.get(b)
        if not pa or not pb:
            continue
        n = sum(1 for i in pa if any(0 < abs(i - j) <= window for j in pb))
        if n:
            out[f"{a} {b}"] = n
    return out


def proximity_bonus(q: QueryTerms, near: dict[str, int], params: KeywordParams) -> float:
    """``proximity_weight`` x, per pair of neighbouring query words found close together,
    the smaller idf of the two, saturating with the number of times (as BM25's tf does)."""
    if params.proximity_weight <= 0 or not near:
        return 0.0
    total = 0.0
    for a, b in q.pairs:
        n = near.get(f"{a} {b}", 0)
        if n:
            total += (
                min(q.idf.get(a, 0.0), q.idf.get(b, 0.0)) * n * (params.k1 + 1) / (n + params.k1)
            )
    return params.proximity_weight * total


class KeywordSignal(NamedTuple):
    """How a passage matched: its own BM25, the neighbours' share, the terms it holds, the
    proximity bonus of query words that stand together and its chunk's share."""

    bm25: float
    neighbours: float
    terms: dict[str, float]  # unit -> occurrences in the passage (heading words weighted)
    proximity: float = 0.0
    near: dict[str, int] | None = None  # pairs of query words found close together
    chunk: float = 0.0  # chunk_weight x the FTS5 BM25 of the passage's chunk

    @property
    def total(self) -> float:
        return self.bm25 + self.proximity + self.neighbours + self.chunk


def ideal_total(q: QueryTerms | None, params: KeywordParams) -> float:
    """What :func:`normalise` divides by: the ideal passage's BM25 plus its chunk's share (a
    chunk holding every term once scores about as much as such a passage)."""
    return (q.ideal if q else 1.0) * (1.0 + params.chunk_weight)


def bm25_scores(
    q: QueryTerms,
    tfs: Sequence[Counter[str]],
    lengths: Sequence[int],
    heading_tfs: Sequence[Counter[str]],
    params: KeywordParams,
) -> list[tuple[float, dict[str, float]]]:
    """BM25 of each passage (text plus weighted heading words) and its term frequencies."""
    avg = (sum(lengths) / len(lengths)) if lengths else 1.0
    avg = avg or 1.0
    out = []
    for tf, dl, htf in zip(tfs, lengths, heading_tfs, strict=True):
        norm = params.k1 * (1.0 - params.b + params.b * dl / avg)
        score = 0.0
        found: dict[str, float] = {}
        for term, weight in q.idf.items():
            f = tf.get(term, 0) + params.heading_weight * htf.get(term, 0)
            if f > 0:
                found[term] = f
                score += weight * f * (params.k1 + 1.0) / (f + norm)
        out.append((score, found))
    return out


def normalise(total: float, ideal: float) -> float:
    """Map a BM25 total to [0, 1) relative to the query's ideal passage (see module doc)."""
    if total <= 0.0:
        return 0.0
    return 1.0 - float(2.0 ** (-2.0 * total / max(ideal, 1e-9)))


# -- decay, threshold, MMR -------------------------------------------------------------------
def decay_factor(file_date: str | None, evergreen: bool, today: date, half_life: float) -> float:
    """``exp(-ln 2 * age_days / half_life)``; evergreen and undated files do not decay."""
    if evergreen or not file_date or half_life <= 0:
        return 1.0
    try:
        age = (today - date.fromisoformat(file_date)).days
    except ValueError:
        return 1.0
    return math.exp(-math.log(2) * max(age, 0) / half_life)


#: The provenance heading memcli flush writes facts under (memcli.flush.provenance).
_EXTRACTED = " flush · conversation "
#: Corroborations that count toward trust, at most.
MAX_CORROBORATIONS = 3


def apply_trust(hit: Any, opts: Any) -> None:
    """Scale ``hit``'s score by how far its fact is trusted: confirmed by a person
    (``search.trust_confirmed``), extracted from a conversation by flush
    (``search.trust_extracted``), added again (``search.trust_corroborated`` each, three at
    most). A factor above 1 moves the score toward 1, never past it."""
    factor = 1.0
    for why in trust_reasons(hit):
        if why == "confirmed":
            factor *= opts.trust_confirmed
        elif why == "extracted by flush":
            factor *= opts.trust_extracted
        else:
            factor *= 1 + opts.trust_corroborated * min(hit.corroborated, MAX_CORROBORATIONS)
    if factor == 1.0:
        return
    if factor > 1:
        hit.score += (factor - 1) * (1 - hit.score)
    else:
        hit.score *= factor
    hit.scores["trust"] = round(factor, 4)


def trust_reasons(hit: Any) -> list[str]:
    """Why a fact is trusted more or less than one a person wrote (see :func:`apply_trust`)."""
    why = []
    if hit.confirmed:
        why.append("confirmed")
    elif _EXTRACTED in f" {hit.heading} ":
        why.append("extracted by flush")
    if hit.corroborated:
        why.append(f"corroborated x{min(hit.corroborated, MAX_CORROBORATIONS)}")
    return why


def threshold(items: Sequence[T], score: Callable[[T], float], min_score: float) -> list[T]:
    """Items whose final score is at least ``min_score``."""
    return [x for x in items if score(x) >= min_score]


def word_set(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _word().findall(text))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def mmr(
    items: Sequence[T],
    relevance: Callable[[T], float],
    similarity: Callable[[T, T], float],
    lam: float,
    k: int,
) -> list[tuple[T, float, float]]:
    """Maximal marginal relevance: pick ``k`` items, each maximising
    ``lam * relevance - (1 - lam) * max similarity to the items already picked``.

    Returns (item, mmr value, highest similarity to an earlier pick) in pick order.
    """
    left = list(items)
    picked: list[tuple[T, float, float]] = []
    sims: list[float] = [0.0] * len(left)
    while left and len(picked) < k:
        best_i, best_v = 0, -math.inf
        for i, x in enumerate(left):
            v = lam * relevance(x) - (1.0 - lam) * sims[i]
            if v > best_v:
                best_i, best_v = i, v
        chosen = left.pop(best_i)
        picked.append((chosen, best_v, sims.pop(best_i)))
        sims = [max(s, similarity(x, chosen)) for s, x in zip(sims, left, strict=True)]
    return picked


# -- explanations ----------------------------------------------------------------------------
def explain(
    signal: KeywordSignal | None,
    q: QueryTerms | None,
    scores: dict[str, Any],
    params: KeywordParams,
    final: float,
    fusion_method: str | None = None,
) -> dict[str, Any]:
    """A per-result account of how the final score came to be (``--explain``)."""
    out: dict[str, Any] = {}
    steps: list[str] = []
    if signal is not None and q is not None:
        matched = {
            words[0] if len(words) == 1 else "/".join(words): round(signal.terms[t], 2)
            for t, words in q.stems.items()
            if t in signal.terms
        }
        missing = [ws[0] for t, ws in q.stems.items() if t not in signal.terms]
        out["terms"] = {"matched": matched, "missing": missing}
        out["idf"] = {ws[0]: round(q.idf[t], 3) for t, ws in q.stems.items()}
        out["ideal"] = round(q.ideal, 4)
        out["scale"] = round(ideal_total(q, params), 4)
        ideal = out["scale"]
        if signal.near:
            out["near"] = {
                " ".join(q.stems[t][0] if q.stems.get(t) else t for t in pair.split()): n
                for pair, n in signal.near.items()
            }
        parts = [f"bm25 {signal.bm25:.3f}"]
        if signal.proximity:
            parts.append(f"proximity {signal.proximity:.3f}")
        nw = params.neighbour_weight
        parts.append(f"neighbours {nw:g} x {signal.neighbours / nw if nw else 0:.3f}")
        cw = params.chunk_weight
        parts.append(f"chunk {cw:g} x {signal.chunk / cw if cw else 0:.3f}")
        steps.append(
            " + ".join(parts) + f" = {signal.total:.3f}; ideal {q.ideal:.3f} x {1 + cw:g}"
            f" = {ideal:.3f}"
        )
        steps.append(
            f"keyword = 1 - 2^(-2 x {signal.total:.3f} / {ideal:.3f}) = "
            f"{scores.get('keyword', 0):.4f}"
        )
    if "vector" in scores:
        steps.append(f"vector similarity of the chunk {scores['vector']:.4f}")
    if "fusion" in scores:
        steps.append(f"fusion ({fusion_method or '?'}) = {scores['fusion']:.4f}")
    if "trust" in scores:
        steps.append(f"trust x {scores['trust']:.4f}")
    if "decay" in scores:
        steps.append(f"decay x {scores['decay']:.4f}")
    steps.append(f"final {final:.4f}")
    if "mmr" in scores:
        steps.append(
            f"mmr {scores['mmr']:.4f} (max similarity to a higher result "
            f"{scores.get('mmr_similarity', 0):.3f})"
        )
    out["steps"] = steps
    out["final"] = round(final, 4)
    return out
