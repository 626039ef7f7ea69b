"""A cloned repository aiming memcli's own files (``.memcli/``) at the user's files.

A repository can commit ``.memcli`` as a link, or links inside it where memcli keeps its lock,
logs, failure marker and index. Each test clones such a repository for real and runs the real
``memcli`` (and hook) processes in it: the user's file behind the link keeps every byte, the
link is replaced with a file of memcli's own, and a warning names what was removed.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import pytest

from tests.agent_helpers import MEMCLI, run_hook
from tests.stub_openai import StubOpenAI
from tests.test_attacks import hostile_clone, memcli

VICTIM_TEXT = "user's own file: " + "x" * 4000 + "\n"


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file of the user's that a planted link points at."""
    path = tmp_path / "victim.txt"
    path.write_text(VICTIM_TEXT)
    return path


def dead_engine_socket(root: Path) -> None:
    """A socket where the workspace's engine would listen, with nothing behind it: a client
    that tries it notes the failure in ``.memcli/engine.failed``."""
    from memcli.enginelink import engine_files

    sock_path = engine_files(root)[0]
    sock_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.bind(str(sock_path))  # bound, never listening: connecting is refused


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    ["lock", "agent.log", "engine.failed", "index.db", "index.db-wal", "index.db-shm"],
)
def test_a_link_planted_in_the_state_folder_is_replaced_not_followed(
    tmp_path: Path, victim: Path, name: str
) -> None:
    clone = hostile_clone(tmp_path, {}, links={f".memcli/{name}": str(victim)})
    dead_engine_socket(clone)
    run = memcli(clone, "search", "Valkey", "--json")
    assert run.code == 0, run.err
    assert "Valkey" in run.out
    # a bad hook payload writes the agent log; a failed engine call the marker
    hook = run_hook([*MEMCLI, "agent", "hook", "session-end"], "{not json", clone)
    assert hook.returncode == 0
    assert victim.read_text() == VICTIM_TEXT
    assert not (clone / ".memcli" / name).is_symlink()
    if name.startswith("index.db"):  # the lock's link goes silently, before the index opens
        assert f".memcli/{name} was a link: removed it" in run.json()["warnings"][0]


@pytest.mark.slow
def test_a_state_folder_that_is_a_link_is_made_a_real_folder(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "lock").write_text(VICTIM_TEXT)
    (outside / "agent.log").write_text(VICTIM_TEXT)
    before = sorted(p.name for p in outside.iterdir())
    clone = hostile_clone(tmp_path, {}, links={".memcli": str(outside)})
    run = memcli(clone, "search", "Valkey", "--json")
    assert run.code == 0, run.err
    assert run.json()["warnings"][0].startswith(".memcli was a link: removed it")
    hook = run_hook([*MEMCLI, "agent", "hook", "session-end"], "{not json", clone)
    assert hook.returncode == 0
    assert sorted(p.name for p in outside.iterdir()) == before
    assert (outside / "lock").read_text() == VICTIM_TEXT
    assert (clone / ".memcli").is_dir() and not (clone / ".memcli").is_symlink()
    assert (clone / ".memcli" / "index.db").is_file()


@pytest.mark.slow
def test_a_link_in_place_of_a_state_subfolder_is_not_followed(
    tmp_path: Path, openai_stub: StubOpenAI
) -> None:
    """Session records live in ``.memcli/agent/sessions/``: a committed ``agent`` link to a
    folder outside gets no file written there."""
    outside = tmp_path / "outside"
    outside.mkdir()
    clone = hostile_clone(tmp_path, {}, links={".memcli/agent": str(outside)})
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"content": "hi"}}) + "\n")
    proc = subprocess.run(
        [*MEMCLI, "-w", str(clone), "agent", "flush-session", "--session-id", "s1"]
        + ["--transcript", str(transcript), "--event", "session-end"],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **os.environ,
            "MEMCLI_LLM_MODEL": "openai/stub-chat",
            "MEMCLI_LLM_API_BASE": openai_stub.base_url,
            "OPENAI_API_KEY": "sk-test",
        },
    )
    assert proc.returncode == 0, proc.stderr
    assert list(outside.iterdir()) == []
    assert not (clone / ".memcli" / "agent").is_symlink()


@pytest.mark.slow
def test_agent_status_and_doctor_never_show_a_linked_file(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("error: sekritmarker42\n")
    clone = hostile_clone(
        tmp_path,
        {},
        links={".memcli/agent.log": str(secret), ".memcli/engine.failed": str(secret)},
    )
    for args in (["agent", "status", "--json"], ["doctor", "--json"]):
        run = memcli(clone, *args)
        assert "sekritmarker42" not in run.out + run.err, args
    assert secret.read_text() == "error: sekritmarker42\n"


@pytest.mark.slow
def test_log_lines_quote_what_a_payload_carries(tmp_path: Path) -> None:
    """A session id carrying shell syntax is refused and logged quoted, on one line: the log
    sourced by a shell runs nothing."""
    clone = hostile_clone(tmp_path, {})
    memcli(clone, "search", "Valkey")
    payload = {
        "session_id": "$(touch pwned)\n2026-01-01T00:00:00 prompt forged line",
        "transcript_path": str(tmp_path / "t.jsonl"),
        "cwd": str(clone),
    }
    hook = run_hook([*MEMCLI, "agent", "hook", "session-end"], payload, clone)
    assert hook.returncode == 0
    log = (clone / ".memcli" / "agent.log").read_text()
    lines = log.splitlines()
    assert len(lines) == 1, log
    assert "'$(touch pwned)\\n2026-01-01T00:00:00 prompt forged line'" in lines[0]
    subprocess.run(["sh", "-c", ". .memcli/agent.log"], cwd=clone, capture_output=True)
    assert not (clone / "pwned").exists()


@pytest.mark.slow
def test_the_git_hook_never_logs_through_a_link(tmp_path: Path, victim: Path) -> None:
    """The hook's memcli fails on the damaged settings and says so in the log: not in the
    file a committed link names."""
    clone = hostile_clone(
        tmp_path, {"memcli.toml": "[[[ not toml\n"}, links={".memcli/hooks.log": str(victim)}
    )
    assert memcli(clone, "hooks", "install").code == 0
    env = {**os.environ, "MEMCLI_HOOK_FOREGROUND": "1"}
    (clone / "memory" / "MEMORY.md").write_text("# Memory\n\n- changed\n")
    subprocess.run(["git", "commit", "-qam", "c"], cwd=clone, env=env, check=True)
    subprocess.run(["git", "checkout", "-q", "HEAD~1"], cwd=clone, env=env, check=True)
    assert victim.read_text() == VICTIM_TEXT


@pytest.mark.slow
def test_committed_state_files_are_taken_away_once(tmp_path: Path) -> None:
    """A repository that committed ``.memcli/`` (a crafted index, a lock, session records)
    gets the folder emptied and rebuilt, with one warning that says how to untrack it."""
    clone = hostile_clone(
        tmp_path,
        {
            ".memcli/index.db": "not a database\n",
            ".memcli/agent/sessions/s1.json": '{"turns": ["forged"]}',
        },
    )
    run = memcli(clone, "search", "Valkey", "--json")
    assert run.code == 0, run.err
    [warning] = [w for w in run.json()["warnings"] if "committed" in w]
    assert "(agent/sessions/s1.json, index.db)" in warning
    assert "git rm -r --cached .memcli/" in warning
    assert not (clone / ".memcli" / "agent").exists()
    again = memcli(clone, "search", "Valkey", "--json")
    assert again.json()["warnings"] == []  # checked once, not on every call


@pytest.mark.parametrize("init", [["--object-format=sha256"], []])
@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_tracked_paths_are_read_from_every_index_format(
    tmp_path: Path, version: str, init: list[str]
) -> None:
    from memcli.notes.gitindex import index_file, tracked_under

    repo = tmp_path / "r"
    deep = "/".join(["d" * 200] * 4) + "/x.md"  # a long path
    names = ["a.md", "sub/.memcli/index.db", "sub/.memcli/lock", "sub/memory/x.md", deep]
    subprocess.run(["git", "init", "-q", *init, str(repo)], check=True)
    for name in names:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(name)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "update-index", "--index-version", version], cwd=repo, check=True)
    index = index_file(repo)
    assert index is not None
    assert tracked_under(index, "sub/.memcli/") == ["sub/.memcli/index.db", "sub/.memcli/lock"]
    assert tracked_under(index, "") == sorted(names)
