"""Score bounds of common terms: what lets a keyword query skip chunks it cannot rank.

FTS5's ``bm25()`` gives a chunk ``idf x sat`` for each phrase of a query, where ``sat`` =
``f (k1 + 1) / (f + k1 (1 - b + b dl / avgdl))`` rises with the phrase's weighted count ``f``
in the chunk and falls with the chunk's length ``dl``. For a term held by thousands of chunks,
the largest ``sat`` over all of them is learnt once, by one scan of its chunks: no chunk can
then take more than ``idf x sat`` from that term, and a query need not score the chunks that
hold only one such term when its k-th best score is above that (:mod:`memcli.search.pruning`).

A bound stays true as the index changes: a deleted chunk only lowers the largest ``sat``; a
chunk's id is never given twice (:data:`memcli.index.schema.CHUNK_IDS`), so a chunk newer
than a bound (a larger id) is always scored; and a larger average length raises a ``sat`` by
at most its ratio to the average the bound was learnt at. The engine learns bounds in the
background (:class:`Learner`); a command run in process has none and scores every chunk.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
from pathlib import Path
from typing import Any, NamedTuple

from memcli.index.bookkeeping import id_mark, index_id, totals
from memcli.index.indexfile import file_identity
from memcli.index.store import Store

#: Terms held by this many chunks or more get a bound: below it, scoring all of a term's
#: chunks costs under 3 ms and learning bounds for every such term would cost more than
#: it saves.
PRUNE_FROM = 5000
#: A bound learnt this many chunk ids ago (or half the index's) is learnt again when a query
#: uses it: the chunks above it are scored by every query that uses the term.
RELEARN_AFTER = 20_000
#: How long the learner waits after it failed to read the index (damaged, or being replaced),
#: twice as long after each failure in a row, up to :data:`RETRY_MAX_SECS`.
RETRY_SECS = 30.0
RETRY_MAX_SECS = 1800.0
#: Margin on a learnt bound against rounding (the scores are doubles summed in another order).
MARGIN = 1.0 + 1e-6


class Bound(NamedTuple):
    """The largest ``sat`` of a term in any chunk up to the id ``top``, learnt when the
    average chunk length was ``avgdl``."""

    sat: float
    avgdl: float
    top: int


def fts_idf(rows: int, df: int) -> float:
    """The idf ``bm25()`` gives a phrase held by ``df`` of ``rows`` chunks (counts read apart
    may disagree: a ``df`` above ``rows`` is the smallest idf too)."""
    ratio = (rows - df + 0.5) / (df + 0.5)
    return math.log(ratio) if ratio > 1.0 else 1e-6


def stale(bound: Bound | None, mark: int, rows: int) -> bool:
    """Whether ``bound`` is missing or so old (:data:`RELEARN_AFTER` chunk ids, or half the
    index) that the term should be learnt again."""
    return bound is None or bound.top < mark - min(RELEARN_AFTER, rows // 2)


class TermBounds:
    """The bounds learnt for one index file (by its random id, :func:`index_id`) and one set
    of ``bm25()`` column weights; shared by the engine's threads."""

    def __init__(
        self,
        index: str | None,
        weights: tuple[float, ...],
        common_from: int = PRUNE_FROM,
    ) -> None:
        self.index_id = index
        self.weights = weights
        #: A term held by this many chunks or more is common: learnt, and pruned when known.
        self.common_from = common_from
        self._bounds: dict[str, Bound] = {}
        self._wanted: dict[str, str] = {}
        self._lock = threading.Lock()
        self.wake = threading.Event()
        #: Set once the common terms of the index have all been learnt.
        self.ready = threading.Event()
        #: Keyword queries answered from their essential chunks alone.
        self.pruned = 0

    def __len__(self) -> int:
        return len(self._bounds)

    def get(self, term: str) -> Bound | None:
        return self._bounds.get(term)

    def want(self, term: str, word: str) -> None:
        """Ask for ``term`` to be learnt (or learnt again), through ``word``: a query word
        that FTS5 stems to it."""
        with self._lock:
            self._wanted.setdefault(term, word)
        self.wake.set()

    def count_pruned(self) -> None:
        with self._lock:
            self.pruned += 1

    def take_wanted(self) -> dict[str, str]:
        with self._lock:
            wanted, self._wanted = self._wanted, {}
        return wanted

    def learn(self, conn: Any, words: dict[str, str], stop: threading.Event | None = None) -> int:
        """Learn the bound of each term of ``words`` (term -> a word that matches it) from
        ``conn``; returns how many were learnt."""
        learnt = 0
        for term, word in words.items():
            if stop is not None and stop.is_set():
                break
            bound = learn_bound(conn, word, self.weights)
            if bound is not None:
                self._bounds[term] = bound
                learnt += 1
        return learnt


def learn_bound(conn: Any, word: str, weights: tuple[float, ...]) -> Bound | None:
    """The bound of the term ``word`` stands for, read in one snapshot of the index: its
    chunks' best ``bm25()`` over the term's idf. None when the index keeps no id mark or
    no chunk holds the term."""
    phrase = '"' + word.replace('"', '""') + '"'
    marks = ", ".join("?" * len(weights))
    conn.execute("BEGIN")
    try:
        top, counts = id_mark(conn), totals(conn)
        if top is None or counts is None or not counts.rows:
            return None
        df = conn.execute(
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (phrase,)
        ).fetchone()[0]
        best = conn.execute(
            f"SELECT -bm25(chunks_fts, {marks}) AS s FROM chunks_fts WHERE chunks_fts MATCH ?"
            " ORDER BY s DESC LIMIT 1",
            (*weights, phrase),
        ).fetchone()
    finally:
        conn.execute("COMMIT")
    if not df or best is None:
        return None
    return Bound(float(best[0]) / fts_idf(counts.rows, int(df)) * MARGIN, counts.avgdl, top)


def common_words(
    conn: Any, common_from: int = PRUNE_FROM, skip: frozenset[str] = frozenset()
) -> dict[str, str]:
    """The index's terms held by ``common_from`` chunks or more, the commonest first, each
    with a word that FTS5 stems to it, to query it by: the term itself, or a likely word
    behind a stem (``deploi``: deploy; ``cach``: cache). A stem none of these gives is left
    for a query to ask for (:meth:`TermBounds.want`). ``skip``: words queries never search
    (stop words)."""
    from memcli.search.analyzer import Analyzer

    analyzer = Analyzer(conn)  # first: it sets where temp tables live, which drops them
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.memcli_bound_terms"
        " USING fts5vocab(main, chunks_fts, row)"
    )
    skipped = {t for toks in analyzer.tokens(sorted(skip)) for t in toks} if skip else set()
    terms = [
        str(r[0])
        for r in conn.execute(
            "SELECT term FROM temp.memcli_bound_terms WHERE doc >= ? ORDER BY doc DESC",
            (common_from,),
        )
        if str(r[0]) not in skipped
    ]
    tried = [(term, word) for term in terms for word in _unstemmed(term)]
    stems = analyzer.tokens([word for _, word in tried]) if tried else []
    words: dict[str, str] = {}
    for (term, word), got in zip(tried, stems, strict=True):
        if got == [term]:
            words.setdefault(term, word)
    return {term: words[term] for term in terms if term in words}


def _unstemmed(term: str) -> list[str]:
    """Words the Porter stemmer may have made ``term`` of, the likeliest first."""
    out = [term, term + "e", term + "s"]
    if term.endswith("i"):
        out.insert(1, term[:-1] + "y")
    return out


class Learner:
    """A background thread that learns the bounds of an index's common terms, then of the
    terms queries ask for; it opens the index read-only and never writes. It follows the
    index file: a file that replaced it (a repair) is learnt anew, into a new
    :attr:`bounds` (read it anew for each search), and so are all terms once most chunks are
    newer than what was learnt (a full re-index)."""

    def __init__(
        self,
        path: Path,
        weights: tuple[float, ...],
        skip: frozenset[str] = frozenset(),
        common_from: int = PRUNE_FROM,
    ) -> None:
        self.path = path
        self.weights = weights
        self.skip = skip
        self.common_from = common_from
        self.bounds = TermBounds(None, weights, common_from)
        self.stop = threading.Event()
        self._conn: Any = None
        self._thread = threading.Thread(target=self._run, name="memcli-bounds", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self.stop.set()
        self.bounds.wake.set()
        conn = self._conn
        if conn is not None:
            with contextlib.suppress(Exception):  # closed meanwhile
                conn.interrupt()  # a scan of a very common term ends now
        self._thread.join()

    def _run(self) -> None:
        if sys.platform == "linux":  # this thread only: searches keep their priority
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
        wait = RETRY_SECS
        while not self.stop.is_set():
            try:
                self._learn_file()
                wait = RETRY_SECS
            except Exception:  # a damaged or missing index: searches score every chunk
                self.stop.wait(wait)
                wait = min(wait * 2, RETRY_MAX_SECS)

    def _learn_file(self) -> None:
        seen = file_identity(self.path)
        store = Store.open_readonly(self.path)  # also in a folder that cannot be written
        conn = store.conn
        self._conn = conn
        try:
            if file_identity(self.path) != seen:
                return  # replaced while it was being opened: open it again
            key = index_id(conn)
            if key is None:
                raise LookupError("the index has no id yet")
            bounds = self.bounds
            if bounds.index_id is None and not len(bounds):
                bounds.index_id = key  # the first file: learnt into the first bounds
            elif bounds.index_id != key:
                bounds = TermBounds(key, self.weights, self.common_from)
                self.bounds = bounds
            passed = self._learn_common(conn, bounds)
            while not self.stop.is_set():
                bounds.wake.wait(5.0)
                bounds.wake.clear()
                if file_identity(self.path) != seen:
                    return  # the file was replaced: learn the new one
                mark = id_mark(conn) or 0
                counts = totals(conn)
                if mark - passed > (counts.rows if counts else 0) // 2:  # mostly new chunks
                    passed = self._learn_common(conn, bounds)
                    continue
                rows = counts.rows if counts else 0
                wanted = {
                    term: word
                    for term, word in bounds.take_wanted().items()
                    if stale(bounds.get(term), mark, rows)
                }  # not those learnt since they were asked for (by the first pass, say)
                bounds.learn(conn, wanted, self.stop)
        finally:
            self._conn = None
            store.close()

    def _learn_common(self, conn: Any, bounds: TermBounds) -> int:
        """Learn every common term; returns the chunk id mark from before."""
        mark = id_mark(conn) or 0
        bounds.learn(conn, common_words(conn, self.common_from, self.skip), self.stop)
        bounds.ready.set()
        return mark


def start_learner(mem: Any) -> Learner:
    """A started :class:`Learner` of ``mem``'s index (a :class:`memcli.memory.Memory`), with
    its settings' threshold (``engine.prune_from``), for a long-lived process: the engine, the
    MCP server."""
    from memcli.search.query import KEYWORD_WEIGHTS, STOPWORDS

    common_from = int(mem.settings.get("engine.prune_from"))
    learner = Learner(mem.ws.index_path, KEYWORD_WEIGHTS, STOPWORDS, common_from)
    learner.start()
    return learner
