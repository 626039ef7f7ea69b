"""``memcli agent import``: a project's past Claude Code and Codex sessions saved as facts,
through the real memcli and a stand-in agent CLI as its model (tests/test_agent_own_model)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.test_agent_own_model import agents_bin, calls, memcli, memory_text

__all__ = ["agents_bin"]  # the fixture, used by name


def claude_file(root: Path, name: str, fact: str, *, cwd: Path, age_days: float = 0) -> Path:
    """A Claude Code session file that ran in ``cwd``, telling ``fact``."""
    base = Path(os.environ["HOME"]) / ".claude" / "projects"
    folder = base / "".join(c if c.isalnum() else "-" for c in str(cwd.resolve()))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.jsonl"
    turns = [("user", f"Remember: {fact}"), ("assistant", "Noted.")]
    path.write_text(
        "".join(
            json.dumps(
                {
                    "type": role,
                    "sessionId": name,
                    "cwd": str(cwd),
                    "uuid": f"{name}-{i}",
                    "message": {"role": role, "content": text},
                }
            )
            + "\n"
            for i, (role, text) in enumerate(turns)
        )
    )
    when = time.time() - age_days * 86400
    os.utime(path, (when, when))
    return path


def codex_file(name: str, fact: str, *, cwd: Path) -> Path:
    folder = Path(os.environ["HOME"]) / ".codex" / "sessions" / "2026" / "11" / "30"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rollout-2026-11-30T10-00-00-{name}.jsonl"
    records = [
        {"type": "session_meta", "payload": {"id": name, "cwd": str(cwd)}},
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": f"Remember: {fact}"}],
            },
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.slow
def test_import_saves_this_project_s_sessions_once(
    workspace: Path, agents_bin: Path, tmp_path: Path
) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    (workspace / "api").mkdir()
    claude_file(workspace, "a1", "Deploys go out on Tuesdays.", cwd=workspace)
    claude_file(workspace, "a2", "The API runs on port 8081.", cwd=workspace / "api")
    claude_file(workspace, "old", "The office moved to Lyon.", cwd=workspace, age_days=90)
    claude_file(workspace, "x1", "Another project uses Oracle.", cwd=other)
    codex_file("c1", "Payments use Stripe webhooks.", cwd=workspace)

    listed = memcli(workspace, "agent", "import", "--dry-run", "--json")
    assert listed.returncode == 0, listed.stderr
    sessions = json.loads(listed.stdout)["sessions"]
    assert sorted(s["session_id"] for s in sessions) == ["a1", "a2", "c1"]
    assert calls(tmp_path) == []  # a dry run asks nothing

    first = memcli(workspace, "agent", "import", "--json")
    assert first.returncode == 0, first.stderr
    rows = json.loads(first.stdout)["sessions"]
    assert sum(r["written"] for r in rows) == 3
    text = memory_text(workspace)
    for fact in ("Deploys go out on Tuesdays.", "The API runs on port 8081.", "Stripe webhooks"):
        assert fact in text
    assert "Lyon" not in text and "Oracle" not in text
    assert sorted(c["name"] for c in calls(tmp_path)) == ["claude", "claude", "codex"]

    again = memcli(workspace, "agent", "import", "--json")
    assert again.returncode == 0, again.stderr
    assert sum(r["written"] for r in json.loads(again.stdout)["sessions"]) == 0
    assert len(calls(tmp_path)) == 3  # nothing sent twice
    assert memory_text(workspace) == text


@pytest.mark.slow
def test_an_import_cut_short_goes_on_where_it_stopped(
    workspace: Path, agents_bin: Path, tmp_path: Path
) -> None:
    claude_file(workspace, "b1", "The cache is Valkey.", cwd=workspace, age_days=2)
    claude_file(workspace, "b2", "Reviews need two approvals.", cwd=workspace, age_days=1)
    r = memcli(workspace, "agent", "import", "--max-sessions", "1")  # stops after the newest
    assert r.returncode == 0, r.stderr
    assert "Reviews need two approvals." in memory_text(workspace)
    assert "Valkey" not in memory_text(workspace)
    r = memcli(workspace, "agent", "import")
    assert r.returncode == 0, r.stderr
    assert "The cache is Valkey." in memory_text(workspace)
    assert len(calls(tmp_path)) == 2 and "2 session(s) read (1 fact(s) saved)" in r.stderr


def test_import_with_no_llm_says_so_and_reads_nothing(
    workspace: Path, agents_bin: Path, tmp_path: Path
) -> None:
    claude_file(workspace, "n1", "The cache is Valkey.", cwd=workspace)
    r = memcli(workspace, "agent", "import", MEMCLI_AGENT_OWN_MODEL="false")
    assert r.returncode == 2 and "no LLM model configured" in r.stderr, r.stderr
    assert calls(tmp_path) == [] and "Valkey" not in memory_text(workspace)


def test_install_offers_the_import_and_runs_nothing(
    workspace: Path, agents_bin: Path, tmp_path: Path
) -> None:
    claude_file(workspace, "i1", "The cache is Valkey.", cwd=workspace)
    r = memcli(workspace, "agent", "install", "claude-code")
    assert r.returncode == 0, r.stderr
    assert "1 earlier claude-code session(s) of this project found" in r.stderr
    assert "memcli agent import --agent claude-code" in r.stderr
    assert calls(tmp_path) == [] and "Valkey" not in memory_text(workspace)


@pytest.mark.slow
def test_ctrl_c_stops_an_import_and_the_next_one_goes_on(
    workspace: Path, agents_bin: Path, tmp_path: Path
) -> None:
    """Ctrl-C while the second session is asked: exit 130, the first session's facts kept;
    the next import asks only for what was not saved."""
    import signal
    import subprocess
    import sys

    claude_file(workspace, "c1", "The cache is Valkey.", cwd=workspace, age_days=1)
    claude_file(workspace, "c2", "Reviews need two approvals.", cwd=workspace, age_days=2)
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcli", "-w", str(workspace), "agent", "import"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "STAND_IN_SLOW": "30"},
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(
        "Reviews" in c["prompt"] for c in calls(tmp_path)
    ):
        time.sleep(0.1)
    assert "The cache is Valkey." in memory_text(workspace)  # the newest, saved first
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Reviews need two approvals." not in memory_text(workspace)
    again = memcli(workspace, "agent", "import", "--json")
    assert again.returncode == 0, again.stderr
    rows = {r["session_id"]: r for r in json.loads(again.stdout)["sessions"]}
    assert rows["c1"]["new_turns"] == 0 and rows["c2"]["written"] == 1
    assert "Reviews need two approvals." in memory_text(workspace)
