"""Dropping facts already known: exactly (:func:`memcli.notes.entries.fact_key` against the
target file and the index), nearly (a keyword search over the workspace, then word-set
:func:`similarity` of at least :data:`NEAR_DUPLICATE`) and repeated within one batch."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import memcli.index.factrows as factrows
from memcli.errors import BadInput
from memcli.flush.facts import Fact, FactOutcome
from memcli.index.store import Store
from memcli.notes import entries
from memcli.notes.lines import split_lines
from memcli.search.options import SearchOptions
from memcli.search.pipeline import run_search
from memcli.search.query import STOPWORDS

#: Facts with a :func:`similarity` of at least this are near-duplicates ("Use Valkey
#: instead of Redis for the cache" / "We use Valkey instead of Redis for caching").
NEAR_DUPLICATE = 0.8
#: How many keyword-search hits are compared with each new fact.
NEAR_CANDIDATES = 8

_SIM_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
# Negations carry meaning: "do not use Redis" must not match "use Redis".
_KEEP_WORDS = frozenset({"no", "not", "nor", "never", "cannot", "without"})


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> frozenset[str]:
    out = set()
    for token in _SIM_TOKEN.findall(text.lower()):
        negation = token in _KEEP_WORDS or token.endswith("n't")
        if token in STOPWORDS and not negation:
            continue
        out.add("not" if negation else _stem(token))
    return frozenset(out)


def similarity(a: str, b: str) -> float:
    """How alike two facts are, in [0, 1]: Jaccard similarity of their content words.

    Stop words are dropped and words crudely stemmed. Two facts that differ in polarity
    (one has no, not, never, ...n't and the other does not) or in their numbers ("port
    8080" / "port 8081") score half their Jaccard similarity, so they are never
    near-duplicates at the :data:`NEAR_DUPLICATE` threshold.
    """
    wa, wb = content_words(a), content_words(b)
    if not wa or not wb:
        return 1.0 if entries.fact_key(a) == entries.fact_key(b) else 0.0
    score = len(wa & wb) / len(wa | wb)
    if ("not" in wa) != ("not" in wb) or numbers_in(wa) != numbers_in(wb):
        score /= 2
    return score


def numbers_in(words: frozenset[str]) -> frozenset[str]:
    return frozenset(w for w in words if any(c.isdigit() for c in w))


@dataclass
class KnownFacts:
    """Facts already in memory, looked up for one flush.

    ``store`` opens the index on first use; with ``use_index`` off only the target file's
    entries are compared. A broken index skips its checks with a warning, never the flush.
    """

    store: Callable[[], Store]
    target_rel: str
    target_entries: list[entries.Entry]
    use_index: bool = True
    warnings: list[str] = field(default_factory=list)
    root: Path | None = None  # the workspace (to read a known fact's file)

    def exact(self, key: str) -> str | None:
        """``path:line`` of a fact with this :func:`~memcli.notes.entries.fact_key`."""
        for e in self.target_entries:
            if entries.fact_key(e.text) == key:
                return f"{self.target_rel}:{e.line}"
        if not self.use_index:
            return None
        try:
            found = factrows.find_fact(self.store().conn, key)
        except Exception as exc:  # a broken index must not stop a flush
            self._warn(f"duplicate check skipped the index: {exc}")
            return None
        return f"{found[0]}:{found[1]}" if found else None

    def near(self, text: str) -> tuple[str, float] | None:
        """``(path:line, similarity)`` of the most similar known fact at or above the bar."""
        best: tuple[str, float] | None = None
        for e in self.target_entries:
            s = similarity(text, e.text)
            if s >= NEAR_DUPLICATE and (best is None or s > best[1]):
                best = (f"{self.target_rel}:{e.line}", s)
        for where, other in self._candidates(text):
            s = similarity(text, other)
            if s >= NEAR_DUPLICATE and (best is None or s > best[1]):
                best = (where, s)
        return best

    def _candidates(self, text: str) -> list[tuple[str, str]]:
        """(path:line, text) of entries and prose lines in the chunks a keyword search finds."""
        if not self.use_index:
            return []
        opts = SearchOptions(limit=NEAR_CANDIDATES, candidates=NEAR_CANDIDATES * 4)
        try:
            hits = run_search(self.store(), text, opts).hits
        except BadInput:
            return []  # nothing searchable in the text (only punctuation, say)
        except Exception as exc:
            self._warn(f"near-duplicate check skipped the index: {exc}")
            return []
        out: list[tuple[str, str]] = []
        for hit in hits:
            items = entries.parse_entries(hit.text)
            in_items = {n for e in items for n in range(e.line, e.end_line + 1)}
            for e in items:
                out.append((f"{hit.path}:{hit.chunk_start + e.line - 1}", e.text))
            for n, line in enumerate(split_lines(hit.text), 1):
                if n not in in_items and line.strip() and not line.lstrip().startswith("#"):
                    out.append((f"{hit.path}:{hit.chunk_start + n - 1}", line.strip()))
        return out

    def _warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)


def dedupe(facts: list[Fact], known: KnownFacts) -> tuple[list[FactOutcome], list[FactOutcome]]:
    """Split facts into new ones and skipped ones (known exactly, known nearly, repeated)."""
    keep: list[FactOutcome] = []
    skip: list[FactOutcome] = []
    for fact in facts:
        key = entries.fact_key(fact.text)
        where = known.exact(key)
        if where:
            skip.append(FactOutcome(fact, reason="duplicate", duplicate_of=where))
            continue
        near = known.near(fact.text)
        if near:
            skip.append(
                FactOutcome(fact, reason="near-duplicate", duplicate_of=near[0], similarity=near[1])
            )
            continue
        twin = max((similarity(fact.text, o.fact.text) for o in keep), default=0.0)
        if twin >= NEAR_DUPLICATE or any(entries.fact_key(o.fact.text) == key for o in keep):
            skip.append(FactOutcome(fact, reason="repeated", similarity=twin))
            continue
        keep.append(FactOutcome(fact))
    return keep, skip
