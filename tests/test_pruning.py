"""Exact pruning of keyword queries with learnt score bounds: the same candidates, in the same
order and with the same scores, as scoring every matching chunk; bounds that stay true as the
index changes; and the engine's background learner."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from memcli.index import db, parallel_rank
from memcli.index.bookkeeping import id_mark, index_id, totals
from memcli.index.schema import MIGRATIONS, stamp
from memcli.memory import Memory
from memcli.search import bounds, pruning
from memcli.search.candidates import keyword_candidates
from memcli.search.options import Filters
from memcli.search.query import KEYWORD_WEIGHTS, parse_query

COMMON = "deploy cache region queue backup retry kafka session".split()
RARE = [f"{a}{b}" for a in ("val", "zor", "mip", "kel", "tun") for b in ("ax", "ib", "oq", "ur")]
NAMES = "Ada Bram Cleo Dov".split()
COMMON_FROM = 40  # a test index is small: a term in 40 chunks is common here


def sentence(rng: random.Random) -> str:
    """A fact of a few words: common words often, repeated sometimes, rare ones now and then,
    in entries of very different lengths (the bounds depend on both)."""
    words = rng.choices(COMMON, k=rng.randint(1, 4))
    if rng.random() < 0.3:
        words += [rng.choice(COMMON)] * rng.randint(1, 3)
    if rng.random() < 0.4:
        words.append(rng.choice(RARE))
    if rng.random() < 0.2:
        words.append(rng.choice(NAMES))
    words += ["note"] * rng.choice((0, 0, 0, 5, 20))
    rng.shuffle(words)
    return " ".join(words)


def write_files(root: Path, rng: random.Random, names: range) -> None:
    for n in names:
        entries = [f"- {sentence(rng)}." for _ in range(rng.randint(4, 12))]
        (root / "memory" / f"f{n:03d}.md").write_text("\n\n".join(entries) + "\n")


def queries(rng: random.Random, n: int) -> list[str]:
    out = []
    for i in range(n):
        kind = i % 6
        if kind == 0:
            out.append(" ".join(rng.sample(COMMON, 2)))
        elif kind == 1:
            out.append(" ".join(rng.sample(COMMON, 3)))
        elif kind == 2:
            out.append(f"{rng.choice(RARE)} {rng.choice(COMMON)}")
        elif kind == 3:
            out.append(f'"{rng.choice(COMMON)} {rng.choice(COMMON)}" {rng.choice(COMMON)}')
        elif kind == 4:
            out.append(f"{rng.choice(RARE)[:3]}* {rng.choice(COMMON)} {rng.choice(NAMES)}")
        else:
            out.append(f"what did we decide about {rng.choice(COMMON)} {rng.choice(COMMON)}?")
    return out


@pytest.fixture
def mem(workspace: Path) -> Any:
    write_files(workspace, random.Random(11), range(120))
    opened = Memory.open(workspace)
    opened.index()
    yield opened
    opened.close()


def stems(mem: Memory, words: list[str]) -> list[str]:
    """The terms FTS5 makes of ``words`` (``deploy``: ``deploi``)."""
    from memcli.search.analyzer import Analyzer

    return [t[0] for t in Analyzer(mem.store.conn).tokens(words)]


def learnt(mem: Memory) -> bounds.TermBounds:
    """Bounds of every common term of ``mem``'s index, learnt on a connection of their own."""
    known = bounds.TermBounds(mem.store.index_id, KEYWORD_WEIGHTS, COMMON_FROM)
    conn = db.connect(mem.store.path, readonly=True)
    try:
        assert known.learn(conn, bounds.common_words(conn, COMMON_FROM)) >= len(COMMON)
    finally:
        conn.close()
    return known


def both(mem: Memory, known: bounds.TermBounds, q: str, limit: int, **filters: Any) -> Any:
    """(candidates without bounds, with ``known``, whether ``known`` pruned the query)."""
    parsed, given = parse_query(q), Filters(**filters)
    mem.use_bounds(None)
    whole = list(keyword_candidates(mem.store, parsed, given, limit).items())
    mem.use_bounds(known)
    before = known.pruned
    fast = list(keyword_candidates(mem.store, parsed, given, limit).items())
    mem.use_bounds(None)
    return whole, fast, known.pruned > before


def compare(mem: Memory, known: bounds.TermBounds, qs: list[str], **filters: Any) -> int:
    """Assert that every query finds the same candidates with and without ``known``; return
    how many of them were answered pruned."""
    pruned = 0
    for limit in (5, 20):
        for q in qs:
            whole, fast, cut = both(mem, known, q, limit, **filters)
            assert fast == whole, q
            pruned += cut
    return pruned


@pytest.mark.slow
def test_pruned_queries_find_what_the_whole_query_finds(mem: Memory) -> None:
    known = learnt(mem)
    assert all(known.get(t) is not None for t in stems(mem, COMMON))  # deploi, cach too
    qs = queries(random.Random(3), 60)
    pruned = compare(mem, known, qs)
    assert pruned >= len(qs) // 2  # the test is not vacuous: most queries were pruned
    assert compare(mem, known, qs[:20], sources=("memory",)) > 0  # the filtered form


@pytest.mark.slow
def test_a_query_of_more_common_terms_than_pruning_pays_for_runs_whole(mem: Memory) -> None:
    """Pruning scores the pairs of common terms: with more than MAX_COMMON of them it costs
    more than the whole query, which runs instead (and finds the same)."""
    known = learnt(mem)
    many = " ".join(COMMON[: pruning.MAX_COMMON + 1])
    whole, fast, cut = both(mem, known, many, 5)
    assert fast == whole and not cut
    whole, fast, cut = both(mem, known, " ".join(COMMON[: pruning.MAX_COMMON]), 5)
    assert fast == whole and cut  # as many as it pays for: pruned


@pytest.mark.slow
def test_pruned_queries_in_two_halves(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    known = learnt(mem)
    monkeypatch.setattr(parallel_rank, "SPLIT_FROM", 1)
    assert compare(mem, known, queries(random.Random(4), 30)) > 0
    assert mem.store.second is not None


@pytest.mark.slow
def test_bounds_stay_true_as_the_index_changes(mem: Memory, workspace: Path) -> None:
    """Chunks added after the bounds were learnt (short ones, a common word repeated: larger
    scores than any learnt), the newest file deleted and its ids' place taken, the average
    length moved: every query still finds what the whole query finds."""
    known = learnt(mem)
    top = id_mark(mem.store.conn)
    newest = max((workspace / "memory").glob("f*.md"))
    newest.unlink()
    mem.index()
    for n, word in enumerate(COMMON):
        (workspace / "memory" / f"g{n}.md").write_text(f"- {word} {word} {word}.\n")
    long = " ".join(["filler"] * 400)
    (workspace / "memory" / "long.md").write_text(f"- {long} deploy cache.\n")
    mem.index()
    first_new = mem.store.conn.execute(
        "SELECT min(c.id) FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path LIKE ?",
        ("%/g%",),
    ).fetchone()[0]
    assert top is not None and first_new > top  # the deleted file's ids were not given again
    assert compare(mem, known, queries(random.Random(5), 60)) > 0


def test_chunk_ids_are_never_given_twice(mem: Memory, workspace: Path) -> None:
    conn = mem.store.conn
    before = conn.execute("SELECT max(id) FROM chunks").fetchone()[0]
    assert id_mark(conn) == before
    for path in sorted((workspace / "memory").glob("f*.md"))[-5:]:
        path.unlink()
    mem.index()
    (workspace / "memory" / "new.md").write_text("- a new fact.\n")
    mem.index()
    newest = conn.execute("SELECT max(id) FROM chunks").fetchone()[0]
    assert newest == before + 1  # after the mark, not after what is left
    assert id_mark(conn) == newest


def test_an_older_index_gets_its_id_mark_and_an_id(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    conn = db.connect(path)
    db.migrate(conn, MIGRATIONS[:5], stamp)
    conn.execute(
        "INSERT INTO files (id, path, mtime_ns, size, sha256, source, evergreen, indexed_at)"
        " VALUES (1, 'memory/a.md', 0, 0, '', 'memory', 0, 0)"
    )
    conn.execute(
        "INSERT INTO chunks (id, file_id, start_line, end_line, heading, hash)"
        " VALUES (41, 1, 1, 1, '', '')"
    )
    assert id_mark(conn) is None and index_id(conn) is None
    from memcli.index.seal import UntrustedIndex, seal_of, user_key
    from memcli.index.store import Store

    conn.close()
    with pytest.raises(UntrustedIndex):  # unsealed (no older memcli sealed): rebuilt instead
        Store.open(path)
    conn = db.connect(path)  # sealed as this user's, as a later schema's migrations will find it
    for key, value in (("index_id", "older"), ("seal", seal_of("older", user_key(create=True)))):
        conn.execute("INSERT INTO meta VALUES (?, ?)", (key, value))
    conn.close()
    store = Store.open(path)
    assert id_mark(store.conn) == 41
    assert store.index_id is not None and len(store.index_id) == 32
    store.close()
    Store.open(path).close()  # sealed anew under its new id
    other = Store.open(tmp_path / "other.db")
    assert other.index_id not in (None, Store.open(path).index_id)  # each file its own
    other.close()


def test_no_bounds_for_another_file_or_other_weights(mem: Memory) -> None:
    known = learnt(mem)
    parsed = parse_query("deploy cache")
    mem.use_bounds(bounds.TermBounds("another file", KEYWORD_WEIGHTS, COMMON_FROM))
    assert pruning.plan(mem.store, parsed, KEYWORD_WEIGHTS, 5) is None
    mem.use_bounds(known)
    assert pruning.plan(mem.store, parsed, (1.0, 1.0, 1.0), 5) is None
    assert pruning.plan(mem.store, parsed, KEYWORD_WEIGHTS, 5) is not None
    assert pruning.plan(mem.store, parse_query("deploy"), KEYWORD_WEIGHTS, 5) is None
    mem.use_bounds(None)
    assert pruning.plan(mem.store, parsed, KEYWORD_WEIGHTS, 5) is None


@pytest.mark.slow
def test_the_learner_learns_the_common_terms_and_follows_the_file(mem: Memory) -> None:
    path = mem.store.path
    learner = bounds.Learner(path, KEYWORD_WEIGHTS, frozenset({"note"}), COMMON_FROM)
    learner.start()
    try:
        assert learner.bounds.ready.wait(30)
        first = learner.bounds
        assert all(first.get(t) is not None for t in stems(mem, COMMON))
        assert first.get("note") is None  # a word queries never search is not learnt
        # a term asked for by a query word that stems to it
        (Path(mem.ws.root) / "memory" / "houses.md").write_text(
            "\n\n".join(f"- houses {i}." for i in range(COMMON_FROM + 5)) + "\n"
        )
        mem.index()
        assert first.get("hous") is None
        first.want("hous", "houses")
        wait_for(lambda: first.get("hous") is not None)
        # a full re-index gives every chunk a new id: all terms are learnt again
        stem = stems(mem, ["deploy"])[0]
        before = first.get(stem)
        assert before is not None
        mem.index(force=True)
        wait_for(lambda: (now := first.get(stem)) is not None and now.top > before.top, 60)
        # an index rebuilt as a new file (another random id): learnt anew
        mem.close()
        for side in ("", "-wal", "-shm"):
            Path(f"{path}{side}").unlink(missing_ok=True)
        rebuilt = Memory.open(mem.ws.root)
        rebuilt.index()
        new_id = rebuilt.store.index_id
        rebuilt.close()
        assert new_id is not None and new_id != first.index_id
        wait_for(lambda: learner.bounds.index_id == new_id and learner.bounds.ready.is_set())
        assert learner.bounds is not first and len(learner.bounds) >= len(COMMON)
    finally:
        learner.close()
    assert not [t for t in threading.enumerate() if t.name == "memcli-bounds"]


def wait_for(check: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_longer_average_raises_a_bound_by_at_most_its_ratio(workspace: Path) -> None:
    """Longer chunks added after a bound was learnt raise the sat of the older ones (each is
    shorter against the average): above the learnt bound, and within it times the ratio of
    the averages, which is what pruning allows for."""
    pad = " ".join
    for i in range(60):
        (workspace / "memory" / f"a{i}.md").write_text(f"- deploy {pad(['x'] * (i % 7))}.\n")
    mem = Memory.open(workspace)
    mem.index()
    conn = db.connect(mem.store.path, readonly=True)
    try:
        learnt_then = bounds.learn_bound(conn, "deploy", KEYWORD_WEIGHTS)
        assert learnt_then is not None
        for i in range(100):
            (workspace / "memory" / f"long{i}.md").write_text(f"- {pad(['y'] * 150)}.\n")
        mem.index()
        now = totals(conn)
        assert now is not None and now.avgdl > 2 * learnt_then.avgdl
        scores = conn.execute(
            "SELECT -bm25(chunks_fts, 1.0, 0.3, 1.0) FROM chunks_fts WHERE chunks_fts MATCH ?",
            ("deploy",),
        ).fetchall()
        idf = bounds.fts_idf(now.rows, len(scores))
        top = max(s[0] / idf for s in scores)
        assert learnt_then.sat < top <= learnt_then.sat * now.avgdl / learnt_then.avgdl
    finally:
        conn.close()
        mem.close()


def learn_from(mem: Memory, common_from: int) -> bounds.TermBounds:
    known = bounds.TermBounds(mem.store.index_id, KEYWORD_WEIGHTS, common_from)
    conn = db.connect(mem.store.path, readonly=True)
    try:
        known.learn(conn, bounds.common_words(conn, common_from))
    finally:
        conn.close()
    return known


@pytest.mark.slow
def test_chunks_newer_than_the_bounds_are_always_scored(workspace: Path) -> None:
    """Chunks added after the bounds were learnt, each scoring more for a common word than
    any chunk did then: the pruned query finds them, as the whole query does."""
    memory = workspace / "memory"
    for n in range(400):
        if n < 120:
            body = f"{('deploy', 'cache')[n % 2]} note note note note note note"
        else:
            body = "zorax other" if n % 5 == 0 else "other note note note"
        (memory / f"f{n:03d}.md").write_text(f"- {body}.\n")
    mem = Memory.open(workspace)
    mem.index()
    known = learn_from(mem, 57)
    mark = id_mark(mem.store.conn)
    assert mark is not None and known.get(stems(mem, ["deploy"])[0]) is not None
    for n in range(20):
        (memory / f"g{n:03d}.md").write_text("- deploy deploy deploy deploy deploy deploy.\n")
    mem.index()
    for q in ("deploy zorax", "deploy cache zorax"):
        whole, fast, pruned = both(mem, known, q, 5)
        assert pruned and fast == whole
        assert all(cid > mark for cid, _ in whole)  # the best are the new chunks
    mem.close()


def test_the_floor_bounds_every_chunk_left_out_after_the_average_grew(workspace: Path) -> None:
    """Longer chunks added since the bounds were learnt raise the score of older chunks that
    hold one common word: the plan's floor still lies above every chunk it leaves out (and
    would not without allowing for the longer average)."""
    memory = workspace / "memory"
    for i in range(60):
        (memory / f"a{i}.md").write_text(f"- deploy {' '.join(['x'] * (i % 7))}.\n")
    for i in range(12):
        (memory / f"z{i}.md").write_text(f"- zorax deploy {' '.join(['w'] * 40)}.\n")
    mem = Memory.open(workspace)
    mem.index()
    known = learn_from(mem, 40)
    stem = stems(mem, ["deploy"])[0]
    learnt_then = known.get(stem)
    assert learnt_then is not None
    for i in range(30):  # fewer than half the chunks: the plan still prunes
        (memory / f"long{i}.md").write_text(f"- {' '.join(['y'] * 300)}.\n")
    mem.index()
    mem.use_bounds(known)
    plan = pruning.plan(mem.store, parse_query("deploy zorax"), KEYWORD_WEIGHTS, 5)
    assert plan is not None
    left_out = [
        score
        for cid, score in mem.store.conn.execute(
            "SELECT rowid, -bm25(chunks_fts, 1.0, 0.3, 1.0) FROM chunks_fts"
            ' WHERE chunks_fts MATCH \'"deploy" OR "zorax"\''
        )
        if cid
        not in {
            r[0]
            for r in mem.store.conn.execute(
                "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?", (plan.essential,)
            )
        }
        and cid <= plan.newer
    ]
    now = totals(mem.store.conn)
    assert now is not None
    ratio = now.avgdl / learnt_then.avgdl
    assert left_out and max(left_out) < plan.floor
    assert max(left_out) > plan.floor / ratio  # the unscaled bound would be too low
    mem.close()


def test_a_commit_between_the_plan_and_its_query_runs_the_whole_query(mem: Memory) -> None:
    """Another connection commits while a pruned query starts: the statistics the plan used
    may be stale, so the answer comes from the whole query."""
    known = learnt(mem)
    other = db.connect(mem.store.path)
    commits = 0

    def commit_once(sql: str) -> None:
        nonlocal commits
        if "+chunks_fts.rowid IN" in sql and commits == 0:
            commits += 1
            other.execute("BEGIN IMMEDIATE")
            other.execute("INSERT OR REPLACE INTO meta VALUES ('test', 'a commit')")
            other.execute("COMMIT")

    try:
        whole, fast, pruned = both(mem, known, "deploy cache", 5)
        assert pruned and fast == whole  # without a commit it is pruned
        mem.store.conn.set_trace_callback(commit_once)
        whole, fast, pruned = both(mem, known, "deploy cache", 5)
        assert commits == 1 and not pruned and fast == whole
    finally:
        mem.store.conn.set_trace_callback(None)
        other.close()


def test_counts_read_apart_give_the_smallest_idf_not_an_error() -> None:
    assert bounds.fts_idf(100, 10) > 1.0
    assert bounds.fts_idf(100, 60) == bounds.fts_idf(100, 150) == 1e-6  # more than the rows


def test_stop_words_are_not_learnt_even_as_stems(workspace: Path) -> None:
    memory = workspace / "memory"
    for i in range(50):
        (memory / f"s{i}.md").write_text(f"- only deploy {i}.\n")
    mem = Memory.open(workspace)
    mem.index()
    conn = db.connect(mem.store.path, readonly=True)
    try:
        learnt_words = bounds.common_words(conn, 40, frozenset({"only"}))
        assert "onli" not in learnt_words  # "only" stems to "onli"
        assert stems(mem, ["deploy"])[0] in learnt_words
    finally:
        conn.close()
        mem.close()


@pytest.mark.slow
def test_after_a_full_reindex_stale_bounds_are_not_used(mem: Memory) -> None:
    """Once most chunks are newer than the bounds, pruning would score them all anyway:
    the plan is skipped (and the terms asked for again) until they are learnt anew."""
    known = learnt(mem)
    mem.use_bounds(known)
    parsed = parse_query("deploy cache")
    assert pruning.plan(mem.store, parsed, KEYWORD_WEIGHTS, 5) is not None
    mem.index(force=True)
    assert pruning.plan(mem.store, parsed, KEYWORD_WEIGHTS, 5) is None
    assert set(known.take_wanted()) >= set(stems(mem, ["deploy", "cache"]))
    mem.use_bounds(None)


def test_an_index_of_an_older_schema_is_read_where_it_cannot_be_migrated(
    tmp_path: Path,
) -> None:
    from memcli.errors import IndexProblem
    from memcli.index.schema import READABLE_FROM, SCHEMA_VERSION
    from memcli.index.seal import UntrustedIndex, seal_of, user_key
    from memcli.index.store import Store

    path = tmp_path / "index.db"
    conn = db.connect(path)
    db.migrate(conn, MIGRATIONS[:READABLE_FROM], stamp)
    conn.close()
    with pytest.raises(UntrustedIndex):  # not sealed as this user's: never answered from
        Store.open_readonly(path)
    conn = db.connect(path)
    for key, value in (("index_id", "older"), ("seal", seal_of("older", user_key(create=True)))):
        conn.execute("INSERT INTO meta VALUES (?, ?)", (key, value))
    conn.close()
    store = Store.open_readonly(path)  # as a read-only folder's index is opened
    assert store.readonly and store.index_id == "older"
    store.close()
    conn = db.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(IndexProblem):
        Store.open_readonly(path)
