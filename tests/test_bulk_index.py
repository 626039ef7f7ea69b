"""Bulk loads of an empty index: secondary indexes built at the end, parsing in a child
process. Both must leave exactly the index a file-by-file sync leaves."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from memcli.config import load_settings
from memcli.index import indexer, parseproc
from memcli.index.indexer import Indexer
from memcli.index.indexfile import open_store
from memcli.index.parsing import Parsed, parse_file
from memcli.notes.workspace import find_workspace


def _write_notes(root: Path, count: int) -> None:
    mem = root / "memory"
    for i in range(count):
        ns = mem / ("ops" if i % 3 == 0 else "") if i % 2 else mem
        ns.mkdir(parents=True, exist_ok=True)
        if i % 4 == 0:
            text = (
                f"# 2025-01-{i % 28 + 1:02d}\n\n"
                f"- 09:{i % 60:02d} [decision] Use valkey {i} for the cache. #infra #Cache\n"
                f"- 10:00 wombat number {i}\n  continued on a second line #x\n\n"
                "```\n- not an entry\n```\n"
            )
            name = f"2025-01-{i % 28 + 1:02d}-{i}.md"
        else:
            text = f"# Note {i}\n\nSome prose about kiwi {i}.\n\n## Steps\n\n1. one\n2. two {i}\n"
            name = f"note-{i}.md"
        (ns / name).write_text(text, encoding="utf-8")
    (mem / "binary.md").write_bytes(b"\x00\x01 not text")
    (mem / "latin1.md").write_bytes("- caf\xe9 fact\n".encode("latin-1"))


def _dump(root: Path) -> dict[str, Any]:
    ws = find_workspace(root)
    store = open_store(ws)
    try:
        q = store.conn.execute
        return {
            "files": q(
                "SELECT path, size, sha256, date, source, evergreen FROM files ORDER BY path"
            ).fetchall(),
            "chunks": q(
                "SELECT f.path, c.start_line, c.end_line, c.heading, c.types, c.tags, c.hash,"
                " t.text"
                " FROM chunks c JOIN files f ON f.id = c.file_id"
                " JOIN chunks_fts t ON t.rowid = c.id ORDER BY f.path, c.start_line"
            ).fetchall(),
            "facts": q(
                "SELECT f.path, x.hash, x.line FROM facts x JOIN files f ON f.id = x.file_id"
                " ORDER BY f.path, x.line"
            ).fetchall(),
            "indexes": sorted(
                r[0] for r in q("SELECT name FROM sqlite_master WHERE type = 'index'")
            ),
            "match": q(
                "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'valkey OR kiwi'"
            ).fetchone()[0],
        }
    finally:
        store.close()


def _sync(root: Path) -> indexer.IndexReport:
    ws = find_workspace(root)
    store = open_store(ws)
    try:
        return Indexer(ws, store, load_settings(ws.root)).sync(embed=False)
    finally:
        store.close()


@pytest.fixture
def twins(workspace: Path, tmp_path: Path) -> tuple[Path, Path]:
    _write_notes(workspace, 60)
    twin = tmp_path / "twin"
    shutil.copytree(workspace, twin)
    return workspace, twin


def _serial(monkeypatch: pytest.MonkeyPatch, root: Path) -> indexer.IndexReport:
    with monkeypatch.context() as m:
        m.setattr(indexer, "BULK_FILES", 10**9)
        m.setattr(indexer, "PARALLEL_FILES", 10**9)
        return _sync(root)


def test_bulk_load_with_parse_process_equals_file_by_file(
    twins: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bulk, serial = twins
    mark = tmp_path / "child-ran"
    monkeypatch.setattr(indexer, "BULK_FILES", 5)
    monkeypatch.setattr(indexer, "PARALLEL_FILES", 5)
    monkeypatch.setattr(parseproc, "_PARSE_CHUNK", 7)  # several messages, some in flight
    monkeypatch.setattr(parseproc, "_PARSE_HERE", 4)  # the first files parsed here
    monkeypatch.setattr(
        parseproc,
        "_PARSE_WORKER",
        f"import pathlib; pathlib.Path({str(mark)!r}).touch(); " + parseproc._PARSE_WORKER,
    )
    report = _sync(bulk)
    assert mark.exists()  # the parsing really happened in the child process
    expected = _serial(monkeypatch, serial)
    assert (report.added, report.files, report.chunks) == (
        expected.added,
        expected.files,
        expected.chunks,
    )
    assert sorted(report.warnings) == sorted(expected.warnings)
    assert any("binary" in w for w in report.warnings)
    got, want = _dump(bulk), _dump(serial)
    assert got == want
    assert {"chunks_file", "facts_hash", "facts_file"} <= set(got["indexes"])
    assert got["match"] > 0
    # the bulk load's larger FTS5 buffer is set back to FTS5's default once it is done
    store = open_store(find_workspace(bulk))
    try:
        row = store.conn.execute("SELECT v FROM chunks_fts_config WHERE k = 'hashsize'")
        assert row.fetchone() == (1024 * 1024,)
    finally:
        store.close()


def test_parse_process_that_dies_falls_back_to_parsing_here(
    twins: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    bulk, serial = twins
    monkeypatch.setattr(indexer, "BULK_FILES", 5)
    monkeypatch.setattr(indexer, "PARALLEL_FILES", 5)
    monkeypatch.setattr(parseproc, "_PARSE_CHUNK", 7)
    monkeypatch.setattr(parseproc, "_PARSE_HERE", 4)
    # answers two messages, then exits
    monkeypatch.setattr(
        parseproc,
        "_PARSE_WORKER",
        "import sys; from memcli.index.parsing import parse_file, receive, send\n"
        "for _ in range(2):\n"
        "    chunk = receive(sys.stdin.buffer)\n"
        "    out = [tuple(parse_file(r, p, int(sys.argv[1]))) for r, p in chunk]\n"
        "    send(sys.stdout.buffer, out)\n"
        "    sys.stdout.flush()\n"
        "sys.exit(3)",
    )
    report = _sync(bulk)
    expected = _serial(monkeypatch, serial)
    assert report.files == expected.files and report.chunks == expected.chunks
    assert _dump(bulk) == _dump(serial)


def test_indexes_dropped_by_an_interrupted_bulk_load_come_back(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_notes(workspace, 12)
    monkeypatch.setattr(indexer, "BULK_FILES", 5)
    monkeypatch.setattr(indexer, "PARALLEL_FILES", 10**9)
    _sync(workspace)
    ws = find_workspace(workspace)
    store = open_store(ws)
    with store.transaction():  # what a bulk load killed before its last commit leaves
        store.drop_bulk_indexes()
    store.close()
    assert not {"chunks_file", "facts_hash", "facts_file"} & set(_dump(workspace)["indexes"])
    (workspace / "memory" / "new.md").write_text("- a new wombat fact\n")
    report = _sync(workspace)
    assert report.added == 1
    assert {"chunks_file", "facts_hash", "facts_file"} <= set(_dump(workspace)["indexes"])


class _Counting:
    """A connection that counts the statements run through it (execute and executemany
    calls, each one however many rows it writes)."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self.calls: list[str] = []

    def execute(self, sql: str, *args: Any) -> Any:
        self.calls.append(sql)
        return self._conn.execute(sql, *args)

    def executemany(self, sql: str, *args: Any) -> Any:
        self.calls.append(sql)
        return self._conn.executemany(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def _counted_sync(root: Path, *, force: bool = False) -> tuple[indexer.IndexReport, list[str]]:
    ws = find_workspace(root)
    store = open_store(ws)
    counting = _Counting(store.conn)
    store.conn = counting
    try:
        report = Indexer(ws, store, load_settings(ws.root)).sync(embed=False, force=force)
    finally:
        store.conn = counting._conn
        store.close()
    return report, counting.calls


@pytest.mark.parametrize("parallel", [False, True])
def test_a_sync_writes_many_files_per_statement(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, parallel: bool
) -> None:
    # 120 files in one write batch: a statement per table, not per file (the file-by-file
    # writes made six calls a file, 60k at 10k files, more time than the rows themselves)
    _write_notes(workspace, 120)
    monkeypatch.setattr(indexer, "BULK_FILES", 5)
    monkeypatch.setattr(indexer, "PARALLEL_FILES", 5 if parallel else 10**9)
    report, calls = _counted_sync(workspace)
    assert report.added >= 120
    assert len(_inserts(calls)) == 4, calls  # files, chunks, chunks_fts, facts
    assert len(calls) < 80
    # and an edit of many files (updates) batches the same way, apart from each file's deletes
    for path in sorted((workspace / "memory").rglob("note-*.md")):
        path.write_text(path.read_text() + "\n- one more kiwi fact\n")
    report, calls = _counted_sync(workspace)
    assert report.updated >= 80
    assert len(_inserts(calls)) == 3  # chunks, chunks_fts, facts (files: an UPDATE)


def _inserts(calls: list[str]) -> list[str]:
    """The statements that insert rows (not FTS5's commands, such as its 'hashsize')."""
    return [
        c
        for c in calls
        if c.startswith(("INSERT INTO files", "INSERT INTO chunks", "INSERT INTO facts"))
        and not c.startswith("INSERT INTO chunks_fts(chunks_fts")
    ]


def test_a_forced_rebuild_drops_the_tables_instead_of_deleting_rows(
    twins: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    forced, cold = twins
    monkeypatch.setattr(indexer, "BULK_FILES", 5)
    _sync(forced)
    ws = find_workspace(forced)
    store = open_store(ws)
    schema = store.conn.execute(
        "SELECT type, name, sql FROM sqlite_master ORDER BY name"
    ).fetchall()
    store.close()
    report, calls = _counted_sync(forced, force=True)
    assert not [c for c in calls if c.lstrip().upper().startswith("DELETE")], calls
    store = open_store(ws)
    after = store.conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
    store.close()
    assert after == schema  # the same tables and indexes, made from their own statements
    expected = _sync(cold)
    assert (report.added, report.files, report.chunks) == (
        expected.added,
        expected.files,
        expected.chunks,
    )
    assert _dump(forced) == _dump(cold)


def test_the_grams_column_is_written_only_for_text_that_needs_it(workspace: Path) -> None:
    (workspace / "memory" / "cjk.md").write_text("- 缓存改用 Valkey\n", encoding="utf-8")
    (workspace / "memory" / "plain.md").write_text("- plain kiwi fact — with a dash\n")
    _sync(workspace)
    store = open_store(find_workspace(workspace))
    try:
        rows = store.conn.execute(
            "SELECT f.path, t.c2 FROM chunks c JOIN files f ON f.id = c.file_id"
            " JOIN chunks_fts_content t ON t.id = c.id ORDER BY f.path"
        ).fetchall()
        found = store.conn.execute(
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'grams:缓存'"
        ).fetchone()[0]
    finally:
        store.close()
    assert rows[1:] == [("memory/cjk.md", "缓存 存改 改用 缓 存 改 用"), ("memory/plain.md", None)]
    assert found == 1


def _notes_to_parse(workspace: Path, n: int) -> tuple[str, list[Any], list[Parsed]]:
    """``n`` notes written: the workspace folder (with its separator), the files as the
    scan gives them to the parse process, and each file's parse done here."""
    _write_notes(workspace, n)
    root = str(workspace) + "/"
    found = sorted(
        (p.relative_to(workspace).as_posix() for p in (workspace / "memory").rglob("*.md")),
    )
    files = [type("F", (), {"rel": rel})() for rel in found]
    return root, files, [parse_file(rel, root + rel, 320) for rel in found]


def test_parse_process_answers_are_read_while_the_writer_is_busy(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the answers are taken on a thread of their own, at most _PARSE_AHEAD ahead of the
    # writer; a writer slower than the child, or one that stops early, gets the same rows
    import time

    root, files, want = _notes_to_parse(workspace, 40)
    monkeypatch.setattr(parseproc, "_PARSE_CHUNK", 3)
    monkeypatch.setattr(parseproc, "_PARSE_AHEAD", 2)
    monkeypatch.setattr(parseproc, "_PARSE_HERE", 2)
    got = []
    for parsed in parseproc.parse_elsewhere(root, files, 320):
        got.append(parsed)
        time.sleep(0.002)  # a slow writer: the child waits, the window stays bounded
    assert got == want
    started = time.monotonic()
    gen = parseproc.parse_elsewhere(root, files, 320)
    assert next(gen) == want[0]
    gen.close()  # a writer that failed: the child is stopped at once
    assert time.monotonic() - started < 4


@pytest.mark.slow
def test_the_writer_parses_what_a_slow_parse_process_has_not_reached(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a child that takes a second a message: the writer parses every message nobody has
    # claimed instead of waiting, and takes the child's answers in order when they come
    import time

    root, files, want = _notes_to_parse(workspace, 60)
    monkeypatch.setattr(parseproc, "_PARSE_CHUNK", 2)
    monkeypatch.setattr(parseproc, "_PARSE_WINDOW", 2)
    monkeypatch.setattr(parseproc, "_PARSE_HERE", 2)
    monkeypatch.setattr(
        parseproc,
        "_PARSE_WORKER",
        "import sys, time; from memcli.index.parsing import parse_file, receive, send\n"
        "while True:\n"
        "    try:\n"
        "        chunk = receive(sys.stdin.buffer)\n"
        "    except EOFError:\n"
        "        break\n"
        "    time.sleep(1)\n"
        "    out = [tuple(parse_file(r, p, int(sys.argv[1]))) for r, p in chunk]\n"
        "    send(sys.stdout.buffer, out)\n"
        "    sys.stdout.flush()",
    )
    started = time.monotonic()
    got = list(parseproc.parse_elsewhere(root, files, 320))
    assert got == want
    # 30 messages: waiting on the child for each would take 30 s; the writer parsed all but
    # the two in flight
    assert time.monotonic() - started < 10
