"""memcli serve: a warm engine per workspace, used by the CLI when it answers, with real
processes (start, serve, time out, killed, wedged) and outputs compared byte for byte."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memcli.enginelink import engine_files
from tests.conftest import Cli

MEMCLI = [sys.executable, "-m", "memcli"]
SEARCHES = [
    ("search", "session cache", "--json"),
    ("search", "session cache"),
    ("search", "session cache", "--jsonl"),
    ("search", "session cache", "--files"),
    ("search", "session cache", "--format", "context", "--max-tokens", "200"),
    ("search", "session cache", "--explain"),
    ("search", "nothing like this anywhere", "--json"),
    ("search", "cache", "--strategy", "vector", "--json"),  # an error: no embedder
]


#: What a command the engine answers does not import in the calling process.
SERVICE = ("memcli.memory", "memcli.service", "memcli.index")


def run(
    root: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MEMCLI, "-w", str(root), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def ws(cli: Cli, workspace: Path) -> Path:
    for text in ("Use Valkey for the session cache.", "Alice owns the billing service."):
        assert cli("add", text).exit_code == 0
    return workspace


@pytest.fixture
def engine(ws: Path) -> Iterator[Path]:
    r = run(ws, "serve", "--detach", "--json")
    assert r.returncode == 0, r.stderr
    yield ws
    run(ws, "serve", "--stop")


def clear_of_a_new_minute(margin: int = 15) -> None:
    """Wait for the next minute when this one ends within ``margin`` seconds, so that two
    adds in a row write the same HH:MM."""
    second = time.localtime().tm_sec
    if second > 60 - margin:
        time.sleep(61 - second)


def engine_pid(root: Path) -> int | None:
    r = run(root, "serve", "--status", "--json")
    info = json.loads(r.stdout)["engine"]
    return int(info["pid"]) if info else None


@pytest.mark.slow
def test_answers_are_byte_identical_with_and_without_the_engine(engine: Path) -> None:
    through = [run(engine, *args) for args in SEARCHES]
    requests = json.loads(run(engine, "serve", "--status", "--json").stdout)["engine"]["requests"]
    assert requests == len(SEARCHES)  # each of them went through the engine
    assert run(engine, "serve", "--stop").returncode == 0
    assert engine_pid(engine) is None
    alone = [run(engine, *args) for args in SEARCHES]
    for args, a, b in zip(SEARCHES, through, alone, strict=True):
        assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr), args
    assert through[-1].returncode == 2 and "embedding" in through[-1].stderr


@pytest.mark.slow
def test_a_search_the_engine_answers_loads_no_service_layer(engine: Path) -> None:
    """Start-up is most of a search the engine answers: the client imports neither the
    service layer nor the index, and loads the renderer only when it prints text."""
    for args, unwanted in (
        (("search", "session cache", "--json"), (*SERVICE, "memcli.cli.render", "rich")),
        (("search", "session cache"), (*SERVICE, "rich")),  # piped: plain text, no Rich
    ):
        r = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "memcli", "-w", str(engine), *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert r.returncode == 0, r.stderr[-500:]
        loaded = {
            line.rsplit("|", 1)[1].strip()
            for line in r.stderr.splitlines()
            if line.startswith("import time:") and "|" in line
        }
        assert "memcli.enginelink" in loaded  # the parse works
        assert not [m for m in loaded if m.startswith(unwanted)], args
    status = json.loads(run(engine, "serve", "--status", "--json").stdout)["engine"]
    assert status["requests"] == 2  # both were answered by the engine


@pytest.mark.slow
def test_an_agents_hooks_are_answered_by_the_engine_with_the_same_text(engine: Path) -> None:
    """The prompt and session-start hooks ask the engine (its model loaded), without loading
    the service layer, and print what they print in process."""
    from tests.agent_helpers import run_hook

    calls = [
        ("prompt", {"cwd": str(engine), "prompt": "Which cache do we use for sessions?"}),
        ("prompt", {"cwd": str(engine), "prompt": "Please fix the typo in the footer"}),
        ("session-start", {"cwd": str(engine), "source": "startup"}),
    ]

    def hooks(*python: str) -> list[subprocess.CompletedProcess[str]]:
        return [
            run_hook([sys.executable, *python, "-m", "memcli", "agent", "hook", e], p, engine)
            for e, p in calls
        ]

    def requests() -> int:
        info = json.loads(run(engine, "serve", "--status", "--json").stdout)["engine"]
        return int(info["requests"])

    before = requests()
    through = hooks("-X", "importtime")
    assert requests() == before + len(calls)
    for proc in through:
        loaded = {
            line.rsplit("|", 1)[1].strip()
            for line in proc.stderr.splitlines()
            if line.startswith("import time:") and "|" in line
        }
        assert "memcli.enginelink" in loaded  # the parse works
        assert not [m for m in loaded if m.startswith(SERVICE)], sorted(loaded)
    assert "Use Valkey for the session cache." in through[0].stdout
    assert through[1].stdout == ""  # nothing recalled for an unrelated prompt
    assert "Alice owns the billing service." in through[2].stdout
    assert run(engine, "serve", "--stop").returncode == 0
    alone = hooks()
    for a, b in zip(through, alone, strict=True):
        assert (a.returncode, a.stdout) == (b.returncode, b.stdout) == (0, b.stdout)


@pytest.mark.slow
def test_a_recall_the_hook_gave_up_on_is_given_in_process(
    engine: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine records nothing as given to the session: a prompt hook that stopped
    waiting for it (it answered, but too late) recalls in process and gives the entry
    (before, the engine had recorded it, and the hook gave nothing for the prompt)."""
    from memcli.enginelink import engine_result
    from tests.agent_helpers import context_of, run_hook

    ask = "Which cache do we use for sessions?"
    late = engine_result(engine, "recall", {"prompt": ask, "session": "s-late"})  # not taken
    assert late is not None and "Use Valkey for the session cache." in late["text"]
    monkeypatch.setenv("MEMCLI_ENGINE", "off")  # the hook that gave up: in process
    payload = {"cwd": str(engine), "prompt": ask, "session_id": "s-late"}
    proc = run_hook([*MEMCLI, "agent", "hook", "prompt"], payload, engine)
    assert "Use Valkey for the session cache." in context_of(proc, "UserPromptSubmit")
    proc = run_hook([*MEMCLI, "agent", "hook", "prompt"], payload, engine)
    assert context_of(proc, "UserPromptSubmit") == ""  # then recorded: never twice


@pytest.mark.slow
def test_the_prompt_hook_records_what_the_engine_gave_it(
    engine: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine's recall names the entries it quotes; the hook that takes its answer
    records them as given to the session, and the session's next prompt, through the engine
    or in process, does not repeat them."""
    from memcli.enginelink import engine_result
    from memcli.flush.given import Given, given_folder
    from tests.agent_helpers import context_of, run_hook

    ask = "Which cache do we use for sessions?"
    answer = engine_result(engine, "recall", {"prompt": ask, "session": "s-1"})
    assert answer is not None and len(answer["given"]) == 1
    assert "Use Valkey for the session cache." in answer["given"][0]
    assert not Given(given_folder(engine), "s-1").has(answer["given"][0])
    payload = {"cwd": str(engine), "prompt": ask, "session_id": "s-1"}

    def prompt() -> str:
        proc = run_hook([*MEMCLI, "agent", "hook", "prompt"], payload, engine)
        return context_of(proc, "UserPromptSubmit")

    def requests() -> int:
        info = json.loads(run(engine, "serve", "--status", "--json").stdout)["engine"]
        return int(info["requests"])

    before = requests()
    assert "Use Valkey for the session cache." in prompt()
    assert requests() == before + 1  # the engine's answer, taken
    assert Given(given_folder(engine), "s-1").has(answer["given"][0])
    assert prompt() == ""
    monkeypatch.setenv("MEMCLI_ENGINE", "off")
    assert prompt() == ""


@pytest.mark.slow
def test_one_engine_per_workspace(engine: Path) -> None:
    r = run(engine, "serve", "--detach")
    assert r.returncode == 3
    assert "an engine already serves" in r.stderr and f"pid {engine_pid(engine)}" in r.stderr
    r = run(engine, "serve")  # in the foreground too
    assert r.returncode == 3 and "already serves" in r.stderr


@pytest.mark.slow
def test_the_engine_sees_edits_made_by_other_processes(engine: Path) -> None:
    assert "Kafka" not in run(engine, "search", "kafka topics", "--json").stdout
    assert run(engine, "add", "Kafka topics are created by terraform.").returncode == 0
    r = run(engine, "search", "kafka topics", "--json")
    assert "Kafka topics are created by terraform." in r.stdout
    (engine / "memory" / "notes.md").write_text("- Zookeeper is gone since 2025.\n")
    assert "Zookeeper" in run(engine, "search", "zookeeper", "--json").stdout


@pytest.mark.slow
def test_a_killed_engine_costs_nothing_and_is_replaced(engine: Path) -> None:
    pid = engine_pid(engine)
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    time.sleep(0.2)
    sock, _ = engine_files(engine)
    assert sock.exists()  # left behind
    r = run(engine, "search", "session cache", "--json")
    assert r.returncode == 0 and "Valkey" in r.stdout  # answered in process
    doctor = json.loads(run(engine, "doctor", "--json", "--offline").stdout)
    check = next(c for c in doctor["checks"] if c["name"] == "engine")
    assert check["status"] == "problem" and "does not answer" in check["summary"]
    r = run(engine, "serve", "--detach")
    assert r.returncode == 0, r.stderr
    assert engine_pid(engine) not in (None, pid)


@pytest.mark.slow
def test_a_wedged_engine_costs_at_most_the_timeout(engine: Path) -> None:
    pid = engine_pid(engine)
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        r = run(engine, "search", "session cache", "--json", env={"MEMCLI_ENGINE_TIMEOUT": "0.5"})
        took = time.monotonic() - started
        assert r.returncode == 0 and "Valkey" in r.stdout
        assert took < 30  # the call gave up on the engine and answered (not hung)
        again = run(
            engine, "search", "session cache", "--json", env={"MEMCLI_ENGINE_TIMEOUT": "0.5"}
        )
        assert again.returncode == 0  # in process, without asking (requests below)
        # the same results; `stale` may differ: the engine may have been stopped while it
        # held the writer's lock, which an in-process search then reports
        first, second = json.loads(r.stdout), json.loads(again.stdout)
        assert (second["mode"], second["results"]) == (first["mode"], first["results"])
    finally:
        os.kill(pid, signal.SIGCONT)
    doctor = json.loads(run(engine, "doctor", "--json", "--offline").stdout)
    check = next(c for c in doctor["checks"] if c["name"] == "engine")
    assert check["status"] == "note" and "a client gave up on it" in check["summary"]
    assert "did not answer" in check["details"]["last_failure"]
    # running again, the engine read the first call only: the second did not ask it
    deadline = time.monotonic() + 10
    while (
        time.monotonic() < deadline
        and json.loads(run(engine, "serve", "--status", "--json").stdout)["engine"]["requests"] < 1
    ):
        time.sleep(0.1)
    time.sleep(0.5)
    info = json.loads(run(engine, "serve", "--status", "--json").stdout)["engine"]
    assert info["requests"] == 1


@pytest.mark.slow
def test_other_settings_in_the_environment_answer_in_process(engine: Path) -> None:
    r = run(engine, "search", "the", "--json", env={"MEMCLI_SEARCH_LIMIT": "1"})
    assert r.returncode == 0 and len(json.loads(r.stdout)["results"]) == 1
    r = run(engine, "search", "the", "--json", env={"TZ": "Pacific/Kiritimati"})
    assert r.returncode == 0  # another time zone: another today
    info = json.loads(run(engine, "serve", "--status", "--json").stdout)["engine"]
    assert info["requests"] == 0  # refused by the engine: answered in process
    # how long to wait for the engine changes no answer
    r = run(engine, "search", "the", "--json", env={"MEMCLI_ENGINE_TIMEOUT": "5"})
    assert r.returncode == 0
    info = json.loads(run(engine, "serve", "--status", "--json").stdout)["engine"]
    assert info["requests"] == 1


@pytest.mark.slow
def test_hooks_with_a_setting_the_engine_would_refuse_answer_as_in_process(engine: Path) -> None:
    """A hook is lenient with a bad setting in process: the engine answers it the same way."""
    from tests.agent_helpers import run_hook

    with open(engine / "memcli.toml", "a", encoding="utf-8") as f:
        f.write("\n[agent]\nno_such_setting = 3\n")
    calls = [
        ("prompt", {"cwd": str(engine), "prompt": "Which cache do we use for sessions?"}),
        ("session-start", {"cwd": str(engine), "source": "startup"}),
    ]
    python = [sys.executable, "-X", "importtime", "-m", "memcli", "agent", "hook"]
    through = [run_hook([*python, e], p, engine) for e, p in calls]
    for proc in through:  # answered by the engine: the service layer never loaded
        assert "memcli.enginelink" in proc.stderr and "memcli.memory" not in proc.stderr
    assert "Use Valkey for the session cache." in through[0].stdout
    assert run(engine, "serve", "--stop").returncode == 0
    alone = [run_hook([*MEMCLI, "agent", "hook", e], p, engine) for e, p in calls]
    assert [(a.returncode, a.stdout) for a in through] == [(b.returncode, b.stdout) for b in alone]


@pytest.mark.slow
def test_a_setting_changed_while_the_engine_runs_is_honoured_by_its_next_answer(
    engine: Path,
) -> None:
    """`memcli config set` while the engine runs: its next answer takes the setting, as a
    search in process does (memcli.warm.WarmMemory's reload rule, shared with `memcli mcp`)."""
    for name, text in (("a", "Zeppelin ships in May."), ("b", "Zeppelin builds run nightly.")):
        (engine / "memory" / f"zeppelin-{name}.md").write_text(f"# {name}\n\n{text}\n", "utf-8")
    found = json.loads(run(engine, "search", "zeppelin", "--json").stdout)["results"]
    assert len(found) == 2
    assert run(engine, "config", "set", "search.limit", "1").returncode == 0
    found = json.loads(run(engine, "search", "zeppelin", "--json").stdout)["results"]
    assert len(found) == 1
    info = json.loads(run(engine, "serve", "--status", "--json").stdout)["engine"]
    assert info["requests"] == 2  # both answered by the engine


def test_a_workers_memory_is_opened_anew_when_a_config_file_changes(ws: Path) -> None:
    """The one reload rule: the workspace's memcli.toml or the user config.toml (which holds
    the trust records) changed, and the thread's Memory is opened again; otherwise kept."""
    from memcli.config.layers import user_config_path
    from memcli.warm import WarmMemory

    warm = WarmMemory(ws)
    try:
        first = warm.memory()
        assert warm.memory() is first and warm.memory(lenient=True) is not first
        with open(ws / "memcli.toml", "a", encoding="utf-8") as f:
            f.write("\n[search]\nlimit = 3\n")
        second = warm.memory()
        assert second is not first and second.settings.get("search.limit") == 3
        user = user_config_path()
        user.parent.mkdir(parents=True, exist_ok=True)
        with open(user, "a", encoding="utf-8") as f:
            f.write("\n[search]\nmmr = true\n")
        third = warm.memory()
        assert third is not second and third.settings.get("search.mmr") is True
        assert warm.memory() is third
    finally:
        warm.close()


def test_the_engine_makes_its_embedder_anew_when_the_embedding_settings_change(ws: Path) -> None:
    from memcli.engine.engine import Engine
    from memcli.memory import Memory

    engine = Engine(ws, idle_timeout=0)
    try:

        def settings(model: str) -> object:
            overrides = {"embedding.model": model, "embedding.api_base": "http://127.0.0.1:9"}
            with Memory.open(ws, overrides) as mem:
                return mem.settings

        shared = engine.warm_memory.shared_embedder
        first = shared(settings("openai/model-a"))
        assert shared(settings("openai/model-a")) is first
        other = shared(settings("openai/model-b"))
        assert other is not first and other.fingerprint != first.fingerprint
    finally:
        engine.close()


@pytest.mark.slow
def test_idle_timeout_stops_the_engine(ws: Path) -> None:
    proc = subprocess.Popen(
        [*MEMCLI, "-w", str(ws), "serve", "--idle-timeout", "0.02"],  # 1.2 s
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
    assert proc.stderr is not None
    assert "engine stopped after 0 requests" in proc.stderr.read()
    sock, _ = engine_files(ws)
    assert not sock.exists()


@pytest.mark.slow
def test_sigterm_stops_a_foreground_engine(ws: Path) -> None:
    proc = subprocess.Popen(
        [*MEMCLI, "-w", str(ws), "serve", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready = json.loads(proc.stdout.readline())
        assert ready["event"] == "ready" and ready["pid"] == proc.pid
        assert run(ws, "search", "session cache", "--json").returncode == 0
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        stopped = json.loads(proc.stdout.readline())
        assert stopped["event"] == "stopped" and stopped["requests"] == 1
    finally:
        proc.kill()


@pytest.mark.slow
def test_many_clients_at_once(engine: Path) -> None:
    errors: list[str] = []

    def client(n: int) -> None:
        for i in range(10):
            if i % 5 == 0:
                r = run(engine, "add", f"Client {n} learned fact {i}.")
            else:
                r = run(engine, "search", f"client {n} fact", "--json")
            if r.returncode not in (0, 1):
                errors.append(r.stderr)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    text = "".join(p.read_text() for p in (engine / "memory").rglob("*.md"))
    for n in range(4):
        for i in (0, 5):
            assert text.count(f" Client {n} learned fact {i}.\n") == 1
    info = json.loads(run(engine, "serve", "--status", "--json").stdout)["engine"]
    assert info["requests"] >= 32


@pytest.mark.slow
def test_serve_watch_keeps_the_index_in_step(ws: Path) -> None:
    r = run(ws, "serve", "--detach", "--watch", "--json")
    assert r.returncode == 0, r.stderr
    try:
        assert json.loads(r.stdout)["engine"]["watching"] is True
        (ws / "memory" / "later.md").write_text("- Grafana dashboards live in the ops folder.\n")
        deadline = time.monotonic() + 30
        indexed = False
        while time.monotonic() < deadline and not indexed:
            files = json.loads(run(ws, "files", "--json").stdout)
            indexed = any(f["path"] == "memory/later.md" for f in files["files"])
            time.sleep(0.2)
        assert indexed  # the watcher indexed it, no search needed
        status = json.loads(run(ws, "status", "--json").stdout)
        assert status["engine"]["watching"] is True
    finally:
        run(ws, "serve", "--stop")


@pytest.mark.slow
def test_the_terminal_table_is_the_same_through_the_engine(engine: Path) -> None:
    from tests.test_conventions import on_terminal

    for args in (("search", "session cache"), ("search", "valkey", "--explain")):
        through = on_terminal(engine, *args)
        assert b"\x1b[" in through[1]  # a terminal: the Rich table, coloured
        assert run(engine, "serve", "--stop").returncode == 0
        alone = on_terminal(engine, *args)
        assert through == alone, args
        assert run(engine, "serve", "--detach").returncode == 0


@pytest.mark.slow
def test_add_through_the_engine_prints_and_writes_the_same(engine: Path, tmp_path: Path) -> None:
    import shutil

    twin = tmp_path / "twin"
    shutil.copytree(engine, twin, ignore=shutil.ignore_patterns(".memcli"))
    cases = [
        ("add", "The deploy key lives in vault.", "--tag", "ops"),
        ("add", "Use Valkey for the session cache.", "--json"),  # a duplicate
        ("add", "-t", "decision", "Ship on Tuesdays.", "--expires", "30d", "--json"),
        (
            "add",
            "   ",
        ),  # refused before any engine is asked
    ]
    for args in cases:
        clear_of_a_new_minute()  # an entry carries its time as HH:MM
        a = run(engine, *args)
        b = run(twin, *args)
        assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr), args
    info = json.loads(run(engine, "serve", "--status", "--json").stdout)["engine"]
    assert info["requests"] == 3
    mine = sorted(p.read_text() for p in (engine / "memory").rglob("*.md"))
    theirs = sorted(p.read_text() for p in (twin / "memory").rglob("*.md"))
    assert mine == theirs
    assert "Ship on Tuesdays." in run(engine, "search", "ship tuesdays", "--json").stdout


IN_PROCESS = {"MEMCLI_ENGINE": "off"}  # answer in process although an engine runs


@pytest.mark.slow
def test_get_files_and_status_are_the_same_through_the_engine(engine: Path) -> None:
    day = next(p for p in (engine / "memory").glob("*.md"))
    rel = f"memory/{day.name}"
    cases = [
        ("get", f"{rel}:1:2"),
        ("get", rel, "--json"),
        ("get", "memory/nowhere.md"),  # an error, with its exit code
        ("files",),
        ("files", "--json"),
        ("status",),
        ("status", "--json"),
    ]
    before = json.loads(run(engine, "serve", "--status", "--json").stdout)["engine"]["requests"]
    through = [run(engine, *args) for args in cases]
    alone = [run(engine, *args, env=IN_PROCESS) for args in cases]
    for args, a, b in zip(cases, through, alone, strict=True):
        assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr), args
    after = json.loads(run(engine, "serve", "--status", "--json").stdout)["engine"]["requests"]
    assert after - before == 5  # get x3 and files x2 went through it; a status is not counted
    status = json.loads(through[-1].stdout)
    assert status["engine"]["pid"] == engine_pid(engine) and status["engine"]["watching"]
    assert through[2].returncode == 2 and "no such file" in through[2].stderr


@pytest.mark.slow
def test_get_takes_paths_from_the_callers_folder(engine: Path) -> None:
    day = next(p for p in (engine / "memory").glob("*.md"))
    args = [*MEMCLI, "-w", str(engine), "get", f"{day.name}:1:1", "--json"]
    through = subprocess.run(args, capture_output=True, text=True, cwd=day.parent, timeout=60)
    alone = subprocess.run(
        args,
        capture_output=True,
        text=True,
        cwd=day.parent,
        timeout=60,
        env={**os.environ, **IN_PROCESS},
    )
    assert through.returncode == 0, through.stderr
    assert (through.stdout, through.stderr) == (alone.stdout, alone.stderr)
    assert json.loads(through.stdout)["path"] == f"memory/{day.name}"


@pytest.mark.slow
def test_an_older_file_rewritten_in_place_is_found_once_the_watcher_syncs(engine: Path) -> None:
    old = engine / "memory" / "old.md"
    old.write_text("- The build runs on Jenkins.\n")
    ten_minutes_ago = time.time() - 600
    os.utime(old, (ten_minutes_ago, ten_minutes_ago))
    assert "Jenkins" in run(engine, "search", "jenkins", "--json").stdout
    old.write_text("- The build runs on Buildkite.\n")
    deadline = time.monotonic() + 30
    found = False
    while time.monotonic() < deadline and not found:
        found = "Buildkite" in run(engine, "search", "buildkite", "--json").stdout
    assert found
    alone = run(engine, "search", "buildkite", "--json", env=IN_PROCESS)
    assert alone.stdout == run(engine, "search", "buildkite", "--json").stdout


@pytest.mark.slow
def test_watch_serve_is_watcher_and_engine_in_one_process(ws: Path) -> None:
    proc = subprocess.Popen(
        [*MEMCLI, "-w", str(ws), "watch", "--serve", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready = json.loads(proc.stdout.readline())
        assert ready["event"] == "ready"
        assert engine_pid(ws) == proc.pid
        (ws / "memory" / "new.md").write_text("- Grafana dashboards live in the ops folder.\n")
        r = run(ws, "search", "grafana dashboards", "--json")
        assert r.returncode == 0 and "Grafana" in r.stdout
        info = json.loads(run(ws, "serve", "--status", "--json").stdout)["engine"]
        assert info["requests"] == 1 and info["watching"] is True and info["idle_timeout_s"] == 0
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    events = [json.loads(line)["event"] for line in out.splitlines()]
    assert events[-1] == "stopped"
    assert not engine_files(ws)[0].exists()


@pytest.mark.slow
def test_without_a_watcher_of_its_own_the_engine_checks_every_file(ws: Path) -> None:
    for i in range(70):  # more than the 64 files the quick check looks at
        (ws / "memory" / f"filler-{i}.md").write_text(f"- Filler note {i}.\n")
    old = ws / "memory" / "old.md"
    old.write_text("- The build runs on Jenkins.\n")
    an_hour_ago = time.time() - 3600
    os.utime(old, (an_hour_ago, an_hour_ago))
    assert run(ws, "index").returncode == 0
    watcher = subprocess.Popen(
        [*MEMCLI, "-w", str(ws), "watch", "--json"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert watcher.stdout is not None
        assert json.loads(watcher.stdout.readline())["event"] == "ready"
        r = run(ws, "serve", "--detach", "--json")
        assert r.returncode == 0, r.stderr
        time.sleep(1)  # its watcher tried and gave way to the other one
        info = json.loads(run(ws, "serve", "--status", "--json").stdout)["engine"]
        assert info["watching"] is False and info["watch_ready"] is False
        assert "already" in (ws / ".memcli" / "engine.log").read_text()
        watcher.send_signal(signal.SIGINT)
        watcher.wait(timeout=30)
        folder = (ws / "memory").stat().st_mtime_ns
        old.write_text("- The build runs on Buildkite.\n")  # in place: the folder is unchanged
        assert (ws / "memory").stat().st_mtime_ns == folder
        r = run(ws, "search", "buildkite", "--json")  # no watcher: the full check sees it
        assert r.returncode == 0 and "Buildkite" in r.stdout
    finally:
        watcher.kill()
        run(ws, "serve", "--stop")


@pytest.mark.slow
def test_serve_no_watch(ws: Path) -> None:
    r = run(ws, "serve", "--detach", "--no-watch", "--json")
    assert r.returncode == 0, r.stderr
    try:
        info = json.loads(r.stdout)["engine"]
        assert info["watching"] is False and info["watch_ready"] is False
    finally:
        run(ws, "serve", "--stop")
    r = run(ws, "serve", "--detach", "--json")
    try:
        deadline = time.monotonic() + 30
        while not json.loads(run(ws, "serve", "--status", "--json").stdout)["engine"][
            "watch_ready"
        ]:
            assert time.monotonic() < deadline
            time.sleep(0.2)
    finally:
        run(ws, "serve", "--stop")


@pytest.mark.slow
def test_the_engine_learns_score_bounds_and_answers_as_in_process(workspace: Path) -> None:
    """An engine learns the bounds of its index's common terms in the background, prunes
    keyword searches with them, and prints what a search in process prints."""
    import random

    from tests.test_pruning import queries, write_files

    write_files(workspace, random.Random(11), range(120))
    env = {"MEMCLI_ENGINE_PRUNE_FROM": "40"}  # a small index: a term in 40 chunks is common
    assert run(workspace, "index", env=env).returncode == 0
    assert run(workspace, "serve", "--detach", "--json", env=env).returncode == 0
    try:
        deadline = time.monotonic() + 60
        while True:
            info = json.loads(run(workspace, "serve", "--status", "--json", env=env).stdout)
            known = info["engine"]["bounds"]
            if known["ready"]:
                break
            assert time.monotonic() < deadline, known
            time.sleep(0.2)
        assert known["terms"] >= 8 and known["pruned"] == 0
        asked = queries(random.Random(8), 18)
        through = [run(workspace, "search", q, "--json", env=env) for q in asked]
        info = json.loads(run(workspace, "serve", "--status", "--json", env=env).stdout)
        assert info["engine"]["requests"] == len(asked)
        assert info["engine"]["bounds"]["pruned"] >= len(asked) // 3
    finally:
        run(workspace, "serve", "--stop", env=env)
    alone = [run(workspace, "search", q, "--json", env=env) for q in asked]
    for q, a, b in zip(asked, through, alone, strict=True):
        assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr), q
        assert a.returncode == 0
