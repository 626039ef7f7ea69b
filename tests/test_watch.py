"""``memcli watch``: a real watcher process against a temporary workspace.

Every test starts ``python -m memcli watch`` as a subprocess and reads its
JSON events from stdout with (generous) timeouts; the index is checked with
the real ``files``/``search`` commands, which are told not to sync on their
own (``MEMCLI_INDEX_SYNC_ON_SEARCH=0``), so only the watcher can have
indexed what they find.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from memcli.index import db
from memcli.index.indexfile import writer_lock
from memcli.index.watching.filtering import ChangeFilter
from memcli.index.watching.watch_locks import watch_lock
from memcli.notes.workspace import Workspace
from tests.conftest import Cli
from tests.stub_openai import StubOpenAI

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")

TIMEOUT = 60.0  # seconds; generous on a busy machine, never a timing assertion
#: A second signal ends a watcher whose provider request hangs within this many seconds (the
#: request itself would take 30): the one timing assertion, with a wide margin for a busy machine.
ABANDON_S = 10.0

Event = dict[str, Any]


class WatchProcess:
    """``memcli watch`` in a subprocess, with its stdout events and stderr lines."""

    def __init__(self, root: Path, *args: str, json_events: bool = True) -> None:
        cmd = [sys.executable, "-m", "memcli", "-w", str(root), "watch"]
        cmd += ["--json", *args] if json_events else list(args)
        # SIGHUP as a terminal leaves it, even when the tests run under nohup (which a watch
        # respects: an ignored SIGHUP stays ignored)
        self.proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
            preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL),
        )
        self.pid = self.proc.pid
        self.events: queue.Queue[Event | None] = queue.Queue()
        self.seen: list[Event] = []
        self.stdout_lines: list[str] = []
        self.stderr_lines: queue.Queue[str | None] = queue.Queue()
        self.stderr_seen: list[str] = []
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.stdout_lines.append(line)
            if line.strip():
                self.events.put(json.loads(line))
        self.events.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr_lines.put(line)
        self.stderr_lines.put(None)

    def next_event(self, pred: Callable[[Event], bool] = lambda e: True) -> Event:
        """The next event matching ``pred`` (earlier ones are kept in ``seen``)."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching event within {TIMEOUT}s; seen: {self.seen}")
            try:
                ev = self.events.get(timeout=left)
            except queue.Empty:
                continue
            if ev is None:
                self.events.put(None)
                raise AssertionError(f"watcher exited ({self.proc.poll()}); seen: {self.seen}")
            self.seen.append(ev)
            if pred(ev):
                return ev

    def ready(self) -> Event:
        return self.next_event(lambda e: e["event"] == "ready")

    def synced(self, *paths: str) -> list[Event]:
        """Sync events until every one of ``paths`` has appeared in them."""
        missing = set(paths)
        got = []
        while missing:
            ev = self.next_event(lambda e: e["event"] == "sync")
            got.append(ev)
            missing -= set(ev["paths"])
        return got

    def next_stderr(self, pred: Callable[[str], bool]) -> str:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            try:
                line = self.stderr_lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                break
            self.stderr_seen.append(line)
            if pred(line):
                return line
        raise AssertionError(f"no matching stderr line; seen: {self.stderr_seen}")

    def children(self) -> list[int]:
        pids: list[int] = []
        for task in Path(f"/proc/{self.pid}/task").iterdir():
            text = (task / "children").read_text().split()
            pids.extend(int(p) for p in text)
        return pids

    def signal(self, sig: int) -> None:
        os.kill(self.pid, sig)

    def wait(self) -> int:
        return self.proc.wait(timeout=TIMEOUT)

    def rest(self) -> list[Event]:
        """All remaining events until stdout closes (after the process exits)."""
        out: list[dict[str, Any]] = []
        while True:
            ev = self.events.get(timeout=TIMEOUT)
            if ev is None:
                self.events.put(None)
                return out
            self.seen.append(ev)
            out.append(ev)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=TIMEOUT)


@pytest.fixture
def watchers(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., WatchProcess]]:
    """Start watchers; any still running at the end of the test are killed."""
    monkeypatch.setenv("MEMCLI_INDEX_SYNC_ON_SEARCH", "0")
    started: list[WatchProcess] = []

    def start(root: Path, *args: str, json_events: bool = True) -> WatchProcess:
        w = WatchProcess(root, *args, json_events=json_events)
        started.append(w)
        return w

    yield start
    for w in started:
        w.kill()


def indexed(cli: Cli) -> dict[str, dict[str, Any]]:
    r = cli("files", "--json")
    assert r.exit_code == 0, r.stderr
    return {f["path"]: f for f in r.json()["files"]}


def hits(cli: Cli, query: str) -> list[str]:
    r = cli("search", "--json", query)
    assert r.exit_code in (0, 1), r.stderr
    return [h["path"] for h in r.json()["results"]]


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# -- create, modify, delete, rename ------------------------------------------


@pytest.mark.slow
def test_create_modify_delete_rename(workspace: Path, cli: Cli, watchers: Any) -> None:
    write(workspace / "memory/before.md", "Written while no watcher ran: quokka.\n")
    w = watchers(workspace)
    initial = w.ready()
    assert initial["debounce_ms"] == 300
    assert initial["watching"] == ["memory"]
    first = [e for e in w.seen if e["event"] == "sync"]
    assert first and first[0].get("initial") is True
    assert "memory/before.md" in first[0]["paths"]
    assert hits(cli, "quokka") == ["memory/before.md"]

    # create
    write(workspace / "memory/notes.md", "# Notes\n\nThe cache is Valkey, codename zebra.\n")
    ev = w.synced("memory/notes.md")[-1]
    assert ev["added"] >= 1 and isinstance(ev["seconds"], float) and ev["time"]
    assert hits(cli, "zebra") == ["memory/notes.md"]

    # modify
    write(workspace / "memory/notes.md", "# Notes\n\nThe cache is Redis, codename yak.\n")
    ev = w.synced("memory/notes.md")[-1]
    assert ev["updated"] == 1
    assert hits(cli, "yak") == ["memory/notes.md"]
    assert hits(cli, "zebra") == []

    # rename a file
    os.rename(workspace / "memory/notes.md", workspace / "memory/renamed.md")
    w.synced("memory/notes.md", "memory/renamed.md")
    files = indexed(cli)
    assert "memory/renamed.md" in files and "memory/notes.md" not in files
    assert hits(cli, "yak") == ["memory/renamed.md"]

    # rename a folder (only the folder gets an event)
    write(workspace / "memory/team/2026-01-02.md", "- 10:00 [decision] Ship on Fridays: walrus.\n")
    w.synced("memory/team/2026-01-02.md")
    os.rename(workspace / "memory/team", workspace / "memory/crew")
    w.synced("memory/team/2026-01-02.md", "memory/crew/2026-01-02.md")
    files = indexed(cli)
    assert "memory/crew/2026-01-02.md" in files
    assert not any(p.startswith("memory/team/") for p in files)
    assert files["memory/crew/2026-01-02.md"]["source"] == "crew"

    # delete a file, then a whole folder
    (workspace / "memory/renamed.md").unlink()
    ev = w.synced("memory/renamed.md")[-1]
    assert ev["removed"] >= 1
    assert hits(cli, "yak") == []
    import shutil

    shutil.rmtree(workspace / "memory/crew")
    w.synced("memory/crew/2026-01-02.md")
    assert set(indexed(cli)) == {"memory/MEMORY.md", "memory/before.md"}

    w.signal(signal.SIGINT)
    assert w.wait() == 0
    assert w.rest()[-1]["event"] == "stopped"
    assert not [e for e in w.seen if e["event"] == "error"]


@pytest.mark.slow
def test_burst_of_writes_is_coalesced(workspace: Path, cli: Cli, watchers: Any) -> None:
    w = watchers(workspace)
    w.ready()
    target = workspace / "memory/burst.md"
    writes = 100
    for i in range(writes):
        target.write_text(f"# Burst\n\nrevision {i} token{i:03d}\n", encoding="utf-8")
    size = target.stat().st_size
    syncs = 0
    while True:
        w.next_event(lambda e: e["event"] == "sync" and "memory/burst.md" in e["paths"])
        syncs += 1
        info = indexed(cli).get("memory/burst.md")
        if info and info["size"] == size and hits(cli, "token099") == ["memory/burst.md"]:
            break
    assert syncs <= 10, f"{syncs} syncs for {writes} writes"
    assert hits(cli, "token042") == []
    r = cli("get", "memory/burst.md:3")
    assert r.stdout.strip() == "revision 99 token099"
    w.signal(signal.SIGTERM)
    assert w.wait() == 0


@pytest.mark.slow
def test_change_with_same_size_and_mtime_is_seen(workspace: Path, cli: Cli, watchers: Any) -> None:
    # Two same-size writes within one clock tick look unchanged by (mtime, size);
    # os.utime makes that happen every time (as cp -p or touch -r do).
    w = watchers(workspace)
    w.ready()
    target = workspace / "memory/same.md"
    target.write_text("The code word is alpaca.\n", encoding="utf-8")
    w.synced("memory/same.md")
    before = target.stat().st_mtime_ns
    target.write_text("The code word is buffel.\n", encoding="utf-8")
    os.utime(target, ns=(before, before))
    ev = w.synced("memory/same.md")[-1]
    assert ev["updated"] == 1
    assert hits(cli, "buffel") == ["memory/same.md"]
    assert hits(cli, "alpaca") == []
    w.signal(signal.SIGINT)
    assert w.wait() == 0


@pytest.mark.slow
def test_extra_include_folder_is_watched(workspace: Path, cli: Cli, watchers: Any) -> None:
    (workspace / "docs").mkdir()
    write(
        workspace / "memcli.toml",
        '[index]\ninclude = ["memory/**/*.md", "docs/**/*.md", "missing/*.md"]\n',
    )
    w = watchers(workspace)
    ready = w.ready()
    assert ready["watching"] == ["docs", "memory"]
    assert any("missing/" in m for m in ready["warnings"])
    write(workspace / "docs/runbook/deploy.md", "# Deploy\n\nRoll back with the narwhal switch.\n")
    w.synced("docs/runbook/deploy.md")
    assert hits(cli, "narwhal") == ["docs/runbook/deploy.md"]
    w.signal(signal.SIGINT)
    assert w.wait() == 0


# -- one watcher per workspace ------------------------------------------------


@pytest.mark.slow
def test_second_watcher_is_refused(workspace: Path, cli: Cli, watchers: Any) -> None:
    first = watchers(workspace)
    first.ready()
    second = subprocess.run(
        [sys.executable, "-m", "memcli", "-w", str(workspace), "watch", "--json"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert second.returncode == 3
    assert f"pid {first.pid}" in second.stderr
    assert second.stderr.startswith("Error: ")
    refused = json.loads(second.stdout)  # --json: the error as an event of the stream too
    assert refused["event"] == "error" and refused["error"]["exit_code"] == 3
    # the first one is unaffected
    write(workspace / "memory/still.md", "Still watching: ocelot.\n")
    w_ev = first.synced("memory/still.md")
    assert w_ev
    first.signal(signal.SIGINT)
    assert first.wait() == 0
    # and once it has stopped, the lock is free again
    lock = watch_lock(Workspace(workspace))
    assert lock.try_acquire()
    lock.release()


# -- concurrency ----------------------------------------------------------------


@pytest.mark.slow
def test_search_and_add_while_syncing(workspace: Path, cli: Cli, watchers: Any) -> None:
    w = watchers(workspace)
    w.ready()
    env = {k: v for k, v in os.environ.items() if k != "MEMCLI_INDEX_SYNC_ON_SEARCH"}
    base = [sys.executable, "-m", "memcli", "-w", str(workspace)]
    n_files = 40

    def stream() -> None:
        for i in range(n_files):
            write(workspace / f"memory/stream/s{i:02d}.md", f"# Stream {i}\n\nitem streamtok{i}\n")
            time.sleep(0.02)

    def run(args: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(base + args, capture_output=True, text=True, timeout=TIMEOUT, env=env)

    jobs = []
    for i in range(8):
        jobs.append(["add", "--json", f"Concurrent fact number {i} about pangolin{i}."])
        jobs.append(["search", "--json", f"streamtok{i * 5} pangolin{i}"])
    writer = threading.Thread(target=stream)
    writer.start()
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(run, jobs))
    writer.join()

    for args, r in zip(jobs, results, strict=True):
        assert "locked" not in r.stderr.lower(), (args, r.stderr)
        assert "Error" not in r.stderr, (args, r.stderr)
        if args[0] == "add":
            assert r.returncode == 0, (args, r.stderr)
        else:
            assert r.returncode in (0, 1), (args, r.stderr)
            assert not any("locked" in x for x in json.loads(r.stdout)["warnings"])

    deadline = time.monotonic() + TIMEOUT
    wanted = {f"memory/stream/s{i:02d}.md" for i in range(n_files)}
    while not wanted <= set(indexed(cli)):
        assert time.monotonic() < deadline, wanted - set(indexed(cli))
        time.sleep(0.2)
    for i in range(8):
        assert hits(cli, f"pangolin{i}"), i
    assert hits(cli, "streamtok39") == ["memory/stream/s39.md"]
    w.signal(signal.SIGINT)
    assert w.wait() == 0
    assert not [e for e in w.seen if e["event"] == "error"]
    assert "locked" not in "".join(w.stdout_lines)


# -- stopping -------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_signal_stops_cleanly(workspace: Path, watchers: Any, sig: int) -> None:
    w = watchers(workspace)
    w.ready()
    assert w.children() == []
    w.signal(sig)
    assert w.wait() == 0
    rest = w.rest()
    assert rest and rest[-1]["event"] == "stopped"
    assert rest[-1]["reason"] == signal.Signals(sig).name
    lock = watch_lock(Workspace(workspace))
    assert lock.try_acquire()
    lock.release()


@pytest.mark.slow
def test_second_signal_forces_exit_130(workspace: Path, watchers: Any) -> None:
    w = watchers(workspace)
    w.ready()
    # Two signals delivered together: the first asks to stop, the second forces it.
    w.signal(signal.SIGSTOP)
    w.signal(signal.SIGINT)
    w.signal(signal.SIGTERM)
    w.signal(signal.SIGCONT)
    assert w.wait() == 130
    last = w.rest()[-1]
    assert (last["event"], last["reason"]) == ("stopped", "interrupted")
    w.next_stderr(lambda line: line.startswith("Error: interrupted"))
    lock = watch_lock(Workspace(workspace))
    assert lock.try_acquire()
    lock.release()


@pytest.mark.slow
def test_stop_while_waiting_for_the_writer_lock(workspace: Path, cli: Cli, watchers: Any) -> None:
    ws = Workspace(workspace)
    w = watchers(workspace)
    w.ready()
    held = writer_lock(ws).acquire(timeout=TIMEOUT)
    try:
        write(workspace / "memory/late.md", "Written while another process writes: lemur.\n")
        warning = w.next_event(lambda e: e["event"] == "warning")
        assert f"pid {os.getpid()}" in warning["message"]
        assert w.children() == []
        w.signal(signal.SIGINT)
        assert w.wait() == 0  # the batch is abandoned, not waited for
        assert w.rest()[-1]["event"] == "stopped"
    finally:
        held.release()
    assert "memory/late.md" not in indexed(cli)
    # the next watcher's initial sync catches up
    w2 = watchers(workspace)
    w2.ready()
    initial = [e for e in w2.seen if e["event"] == "sync"]
    assert initial and "memory/late.md" in initial[0]["paths"]
    w2.signal(signal.SIGINT)
    assert w2.wait() == 0


@pytest.mark.slow
def test_failed_batch_is_reported_and_retried(workspace: Path, cli: Cli, watchers: Any) -> None:
    w = watchers(workspace)
    w.ready()
    index = workspace / ".memcli/index.db"
    conn = db.connect(index)
    conn.execute("PRAGMA user_version = 999")  # from a newer memcli: never replaced, a failure
    conn.close()
    write(workspace / "memory/retry.md", "Indexed after the index came back: tapir.\n")
    err = w.next_event(lambda e: e["event"] == "error")
    assert "sync failed" in err["message"] and err["retry_in"] > 0
    assert "memory/retry.md" in err["paths"]
    assert w.proc.poll() is None  # still running
    for suffix in ("", "-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    ev = w.synced("memory/retry.md")[-1]
    assert "memory/MEMORY.md" in ev["paths"]  # a fresh index is filled completely
    assert hits(cli, "tapir") == ["memory/retry.md"]
    w.signal(signal.SIGINT)
    assert w.wait() == 0


# -- options and human output -------------------------------------------------------


@pytest.mark.slow
def test_debounce_setting_and_flag(workspace: Path, watchers: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("MEMCLI_WATCH_DEBOUNCE_MS", "120")
    w = watchers(workspace)
    assert w.ready()["debounce_ms"] == 120
    w.signal(signal.SIGINT)
    assert w.wait() == 0
    w = watchers(workspace, "--debounce", "0")
    assert w.ready()["debounce_ms"] == 0
    write(workspace / "memory/fast.md", "No debounce: gecko.\n")
    w.synced("memory/fast.md")
    w.signal(signal.SIGINT)
    assert w.wait() == 0
    bad = subprocess.run(
        [sys.executable, "-m", "memcli", "-w", str(workspace), "watch", "--debounce", "-5"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert bad.returncode == 2
    assert "Error:" in bad.stderr


@pytest.mark.slow
def test_human_output_on_stderr(workspace: Path, watchers: Any) -> None:
    w = watchers(workspace, json_events=False)
    w.next_stderr(lambda line: "watching memory/" in line)
    write(workspace / "memory/human.md", "Readable output: heron.\n")
    line = w.next_stderr(lambda line: "memory/human.md" in line)
    assert "1 added" in line and "s:" in line
    w.signal(signal.SIGINT)
    assert w.wait() == 0
    w.next_stderr(lambda line: "stopped" in line)
    assert w.stdout_lines == []


@pytest.mark.slow
def test_quiet_prints_nothing(workspace: Path, cli: Cli, watchers: Any) -> None:
    w = watchers(workspace, "--quiet", json_events=False)
    time.sleep(0.5)
    write(workspace / "memory/quiet.md", "Nothing printed: ibex.\n")
    deadline = time.monotonic() + TIMEOUT
    while "memory/quiet.md" not in indexed(cli):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    w.signal(signal.SIGINT)
    assert w.wait() == 0
    with pytest.raises(AssertionError):
        w.next_stderr(lambda line: True)  # stderr closes without a single line
    assert w.stderr_seen == []
    assert w.stdout_lines == []


# -- the filter ---------------------------------------------------------------------


def test_change_filter(workspace: Path) -> None:
    from watchfiles import Change

    (workspace / ".memignore").write_text("memory/private/\n")
    (workspace / "memory/sub").mkdir()
    f = ChangeFilter(Workspace(workspace), ["memory/**/*.md"])
    root = str(workspace)
    assert f(Change.added, f"{root}/memory/a.md")
    assert f(Change.deleted, f"{root}/memory/x/y/b.md")
    assert not f(Change.added, f"{root}/memory/a.txt")
    assert not f(Change.modified, f"{root}/memory/.a.md.swp")
    assert not f(Change.added, f"{root}/.memcli/index.db-wal")
    assert not f(Change.added, f"{root}/.memcli/x.md")
    assert not f(Change.added, f"{root}/memory/private/secret.md")
    assert not f(Change.added, f"{root}/notes.md")
    assert not f(Change.added, "/elsewhere/memory/a.md")
    assert f(Change.added, f"{root}/memory/sub")  # a folder moved in
    assert not f(Change.deleted, f"{root}/memory/gone")  # unknown folder
    f.set_indexed(["memory/gone/deep/c.md"])
    assert f(Change.deleted, f"{root}/memory/gone")
    assert f(Change.deleted, f"{root}/memory/gone/deep")


# -- embeddings (the loopback OpenAI stub) -------------------------------------------


@pytest.fixture
def embedding_env(openai_stub: StubOpenAI, monkeypatch: pytest.MonkeyPatch) -> StubOpenAI:
    """Configure the stub embedder for every process started by the test."""
    for key, value in {
        "MEMCLI_EMBEDDING_MODEL": "openai/stub-embed",
        "MEMCLI_EMBEDDING_API_BASE": openai_stub.base_url,
        "MEMCLI_EMBEDDING_API_KEY_ENV": "STUB_API_KEY",
        "STUB_API_KEY": "sk-stub-not-a-secret",
        "MEMCLI_EMBEDDING_TIMEOUT": "30",
        "MEMCLI_EMBEDDING_MAX_RETRIES": "0",
        "NO_PROXY": "127.0.0.1,localhost",
    }.items():
        monkeypatch.setenv(key, value)
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(var, raising=False)
    return openai_stub


@pytest.mark.slow
def test_new_chunks_are_embedded_and_provider_failure_degrades(
    workspace: Path, cli: Cli, watchers: Any, embedding_env: StubOpenAI
) -> None:
    stub = embedding_env
    w = watchers(workspace)
    w.ready()
    initial = next(e for e in w.seen if e["event"] == "sync")
    assert initial["embedded"] >= 1 and initial["missing_vectors"] == 0

    write(workspace / "memory/vec.md", "# Vectors\n\nThe embedding of this chunk: kiwi.\n")
    ev = w.synced("memory/vec.md")[-1]
    assert ev["embedded"] >= 1 and ev["missing_vectors"] == 0

    stub.fail_status = 500  # the provider goes down
    write(workspace / "memory/down.md", "Indexed while the provider was down: dingo.\n")
    ev = w.synced("memory/down.md")[-1]
    assert ev["added"] == 1 and ev["missing_vectors"] >= 1
    assert ev["warnings"], ev
    assert w.proc.poll() is None
    assert "memory/down.md" in indexed(cli)  # the keyword index is complete

    stub.fail_status = None  # back up: the watcher back-fills on its own
    ev = w.next_event(lambda e: e["event"] == "sync" and e["embedded"] >= 1)
    assert ev["missing_vectors"] == 0 and ev["paths"] == []
    w.signal(signal.SIGINT)
    assert w.wait() == 0
    assert not [e for e in w.seen if e["event"] == "error"]


@pytest.mark.slow
def test_first_signal_finishes_the_batch(
    workspace: Path, cli: Cli, watchers: Any, embedding_env: StubOpenAI
) -> None:
    stub = embedding_env
    w = watchers(workspace)
    w.ready()
    before = stub.count("/embeddings")
    stub.hold(1)  # the provider keeps the batch busy until released
    write(workspace / "memory/slow.md", "Embedded slowly: sloth.\n")
    assert stub.wait_for("/embeddings", before + 1, TIMEOUT)
    w.signal(signal.SIGINT)
    with pytest.raises(subprocess.TimeoutExpired):
        w.proc.wait(timeout=0.5)  # still waiting for the provider: the batch is not dropped
    stub.release()
    assert w.wait() == 0
    rest = w.rest()
    assert rest[-1]["event"] == "stopped"
    done = [e for e in w.seen if e["event"] == "sync" and "memory/slow.md" in e["paths"]]
    assert done and done[0]["embedded"] >= 1 and done[0]["missing_vectors"] == 0


@pytest.mark.slow
def test_second_signal_abandons_a_busy_batch(
    workspace: Path, cli: Cli, watchers: Any, embedding_env: StubOpenAI
) -> None:
    stub = embedding_env
    w = watchers(workspace)
    w.ready()
    before = stub.count("/embeddings")
    stub.hang_seconds = 30.0  # the provider hangs for the whole request timeout (30 s)
    write(workspace / "memory/stuck.md", "Never embedded: yeti.\n")
    deadline = time.monotonic() + TIMEOUT
    while stub.count("/embeddings") == before:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    w.signal(signal.SIGSTOP)
    w.signal(signal.SIGINT)
    w.signal(signal.SIGTERM)
    w.signal(signal.SIGCONT)
    signalled = time.monotonic()
    assert w.wait() == 130
    # the hung request is abandoned, not waited for: far less than the 30 s it would take
    assert time.monotonic() - signalled < ABANDON_S
    last = w.rest()[-1]
    assert (last["event"], last["reason"]) == ("stopped", "interrupted")
    assert not [e for e in w.seen if e["event"] == "sync" and "memory/stuck.md" in e["paths"]]
    lock = writer_lock(Workspace(workspace))
    assert lock.try_acquire()  # the writer lock was released too
    lock.release()


@pytest.mark.slow
def test_nothing_to_watch_is_an_error(tmp_path: Path) -> None:
    root = tmp_path / "bare"
    root.mkdir()
    (root / "memcli.toml").write_text("")  # a workspace without memory/
    r = subprocess.run(
        [sys.executable, "-m", "memcli", "-w", str(root), "watch", "--json"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert r.returncode == 3
    assert "memcli init" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.slow
def test_removing_the_memory_folder(workspace: Path, cli: Cli, watchers: Any) -> None:
    import shutil

    write(workspace / "memory/a/b.md", "Soon gone: quoll.\n")
    w = watchers(workspace)
    w.ready()
    shutil.rmtree(workspace / "memory")
    w.synced("memory/a/b.md", "memory/MEMORY.md")
    warning = w.next_event(lambda e: e["event"] == "warning")
    assert "memory/ was removed" in warning["message"]
    assert indexed(cli) == {}
    assert w.proc.poll() is None
    w.signal(signal.SIGINT)
    assert w.wait() == 0


@pytest.mark.slow
def test_damage_met_by_a_sync_is_repaired(workspace: Path, cli: Cli, watchers: Any) -> None:
    """An index that still opens but fails the watcher's sync is rebuilt from the Markdown
    in that same sync, as any command would, instead of failing on every retry."""
    from tests.test_reliability_corruption import _garble_tables

    for i in range(30):
        body = "\n".join(f"- item {j} of note {i}: the cache uses valkey" for j in range(20))
        write(workspace / f"memory/note{i}.md", f"# Note {i}\n\n{body}\n")
    w = watchers(workspace)
    w.ready()
    _garble_tables("chunks_fts_data", "chunks_fts_content")(workspace)  # the file still opens
    write(workspace / "memory/note3.md", "# Note 3\n\n- rewritten: the ocelot\n")
    ev = w.synced("memory/note3.md")[-1]
    assert any("rebuilt it from the Markdown" in x for x in ev["warnings"]), ev
    assert [e for e in w.seen if e["event"] == "error"] == []
    assert hits(cli, "ocelot") == ["memory/note3.md"]
    assert len(indexed(cli)) == 31  # MEMORY.md and the 30 notes
    conn = db.connect(workspace / ".memcli" / "index.db")
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def test_service_watch_called_as_a_library(workspace: Path) -> None:
    """Memory.watch in a thread: events through the callback, one watcher, stop by event."""
    from memcli.errors import AlreadyRunning, BadInput
    from memcli.memory import Memory
    from memcli.service.datatypes import WatchOptions

    with pytest.raises(BadInput):
        WatchOptions(debounce_ms=-1)
    events: queue.Queue[Event] = queue.Queue()
    seen: list[Event] = []
    stop = threading.Event()

    def next_event(kind: str) -> Event:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            try:
                ev = events.get(timeout=0.1)
            except queue.Empty:
                continue
            seen.append(ev)
            if ev["event"] == kind:
                return ev
        raise AssertionError(f"no {kind} event within {TIMEOUT}s; seen: {seen}")

    with Memory.open(workspace) as mem, ThreadPoolExecutor(1) as pool:
        running = pool.submit(mem.watch, WatchOptions(debounce_ms=50), events.put, stop)
        try:
            ready = next_event("ready")
            assert ready["debounce_ms"] == 50 and ready["watching"] == ["memory"]
            with Memory.open(workspace) as other, pytest.raises(AlreadyRunning):
                other.watch(WatchOptions(), events.put, threading.Event())
            (workspace / "memory" / "svc.md").write_text("- a fact the watcher indexes\n")
            while "memory/svc.md" not in next_event("sync")["paths"]:
                pass
        finally:
            stop.set()
        summary = running.result(timeout=TIMEOUT)
    stopped = next_event("stopped")
    assert summary.as_dict() == {"syncs": stopped["syncs"], "reason": "stopped"}
    assert summary.syncs >= 1 and stopped["reason"] == "stopped"
    lock = watch_lock(Workspace(workspace))  # released
    assert lock.try_acquire()
    lock.release()


def test_service_watch_embeds_through_the_memory_s_embedder_factory(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher uses the embedder the Memory was opened with, not the configured provider's
    (a model no provider serves: without the factory no text would reach an embedder)."""
    from memcli.memory import Memory
    from memcli.service.datatypes import WatchOptions
    from tests.fake_embedder import FakeProvider

    monkeypatch.setenv("MEMCLI_EMBEDDING_MODEL", "seam/only-embed")
    provider = FakeProvider()
    events: queue.Queue[Event] = queue.Queue()
    stop = threading.Event()
    with Memory.open(workspace, embedder_factory=provider) as mem, ThreadPoolExecutor(1) as pool:
        running = pool.submit(mem.watch, WatchOptions(debounce_ms=50), events.put, stop)
        try:
            deadline = time.monotonic() + TIMEOUT
            (workspace / "memory" / "seam.md").write_text("- the watcher embeds this fact\n")
            while not any("embeds this fact" in t for t in provider.inputs):
                assert time.monotonic() < deadline, "the factory's embedder never saw the fact"
                time.sleep(0.05)
        finally:
            stop.set()
        running.result(timeout=TIMEOUT)


@pytest.mark.slow
@pytest.mark.parametrize("pause", [True, False], ids=["gone-then-back", "swapped-at-once"])
def test_memory_folder_moved_away_and_made_again(
    workspace: Path, cli: Cli, watchers: Any, pause: bool
) -> None:
    """Real watchfiles: the watch follows the old folder's inode, so a new ``memory/`` is
    watched anew (with a full sync), and changes in it keep being seen."""
    write(workspace / "memory/old.md", "Before the move: quoll.\n")
    w = watchers(workspace)
    w.ready()
    assert hits(cli, "quoll") == ["memory/old.md"]
    os.rename(workspace / "memory", workspace / "memory-moved")
    if pause:
        warning = w.next_event(lambda e: e["event"] == "warning")
        assert "memory/ was removed; watching for it to come back" in warning["message"]
    write(workspace / "memory/new.md", "After the move: numbat.\n")
    warning = w.next_event(lambda e: e["event"] == "warning" and "replaced" in e["message"])
    assert warning["message"] == "memory/ was replaced; watching the new folder"
    w.synced("memory/new.md")
    assert hits(cli, "numbat") == ["memory/new.md"]
    assert hits(cli, "quoll") == []  # the folder that moved away is no longer memory
    # it keeps watching: later changes in the new folder are synced too
    write(workspace / "memory/later.md", "Still watched: bilby.\n")
    w.synced("memory/later.md")
    assert hits(cli, "bilby") == ["memory/later.md"]
    assert w.proc.poll() is None
    w.signal(signal.SIGINT)
    assert w.wait() == 0
    assert not [e for e in w.seen if e["event"] == "error"]
