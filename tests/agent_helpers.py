"""Running memcli's agent hooks as an agent does: a real process, the payload on stdin."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

MEMCLI = [sys.executable, "-m", "memcli"]


def run_hook(
    command: list[str] | str, payload: dict[str, Any] | str, cwd: Path
) -> subprocess.CompletedProcess[str]:
    """Run a hook command (a list, or a shell command line as the agent's settings hold it)
    with ``payload`` on stdin, in ``cwd``."""
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        command,
        input=data,
        capture_output=True,
        text=True,
        cwd=cwd,
        shell=isinstance(command, str),
        timeout=60,
    )


def context_of(proc: subprocess.CompletedProcess[str], event: str) -> str:
    """The additionalContext a hook printed for ``event`` ('' when it printed nothing)."""
    assert proc.returncode == 0, proc.stderr
    if not proc.stdout.strip():
        return ""
    out = json.loads(proc.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == event
    return str(out["hookSpecificOutput"]["additionalContext"])


def wait_for_log(root: Path, needle: str, timeout: float = 60.0) -> str:
    """The agent log once it holds ``needle`` (the detached flush writes it when done)."""
    log = root / ".memcli" / "agent.log"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_text("utf-8") if log.exists() else ""
        if needle in text:
            return text
        time.sleep(0.05)
    raise AssertionError(f"{needle!r} never logged; log: {log.read_text() if log.exists() else ''}")


def claude_transcript(name: str) -> Path:
    """A path for a session file where Claude Code keeps them (``~/.claude/projects/<project>/``,
    in the test's home): the only place, besides the workspace, a hook reads a transcript."""
    import os

    folder = Path(os.environ["HOME"]) / ".claude" / "projects" / "-work-project"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name
