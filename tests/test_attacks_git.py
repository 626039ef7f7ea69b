"""A cloned repository that carries a folder shaped like a git folder (``HEAD``, ``objects/``,
``refs/`` and a ``config``) where the workspace is: git's own discovery takes that folder as the
repository, with its ``core.fsmonitor``, ``core.worktree`` and ``core.hooksPath``. memcli names
the repository it found itself on every git call, so none of its commands runs the command
the config names. Each test clones the repository for real and runs the real ``memcli``.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.test_attacks import git, hostile_clone, memcli

HOOK = '#!/bin/sh\ntouch "$PWNED"\n'


def fake_git_dir(pwned: Path, variant: str) -> dict[str, str]:
    """The committed files that make ``notes/`` look like a git folder to git."""
    core = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n"
    if variant == "fsmonitor":
        core += f'\tfsmonitor = "touch {pwned}; false"\n'
    elif variant == "hooksPath":
        core += "\thooksPath = hooks\n"
    files = {
        "notes/HEAD": "ref: refs/heads/main\n",
        "notes/objects/info/keep": "",
        "notes/refs/heads/keep": "",
        "notes/config": core,
        "notes/memory/MEMORY.md": "# Memory\n\n- The session cache is Valkey.\n",
    }
    for name in (
        "pre-commit",
        "post-commit",
        "commit-msg",
        "post-checkout",
        "reference-transaction",
    ):
        files[f"notes/hooks/{name}"] = HOOK.replace('"$PWNED"', str(pwned))
    return files


def hostile_workspace(tmp_path: Path, variant: str) -> tuple[Path, Path]:
    pwned = tmp_path / "PWNED"
    clone = hostile_clone(tmp_path, fake_git_dir(pwned, variant))
    for hook in (clone / "notes" / "hooks").iterdir():
        hook.chmod(0o755)
    return clone / "notes", pwned


def test_git_itself_would_take_the_committed_folder(tmp_path: Path) -> None:
    """The layout is live: plain git run in the workspace runs the config's command."""
    ws, pwned = hostile_workspace(tmp_path, "fsmonitor")
    subprocess.run(["git", "status"], cwd=ws, capture_output=True, check=False)
    assert pwned.exists()


COMMANDS: list[tuple[str, Callable[[Path], list[str]]]] = [
    ("status", lambda ws: ["status"]),
    ("status --json", lambda ws: ["status", "--json"]),
    ("diff", lambda ws: ["diff"]),
    ("log", lambda ws: ["log"]),
    ("add --commit", lambda ws: ["add", "--commit", "Deploys go out on Tuesdays"]),
    ("sync", lambda ws: ["sync"]),
    ("hooks install", lambda ws: ["hooks", "install"]),
    ("forget --commit", lambda ws: ["forget", "memory/MEMORY.md:3", "--reason", "x", "--commit"]),
]


@pytest.mark.parametrize("variant", ["fsmonitor", "hooksPath"])
@pytest.mark.parametrize(("name", "args"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_no_command_runs_what_a_committed_git_config_names(
    tmp_path: Path, variant: str, name: str, args: Callable[[Path], list[str]]
) -> None:
    ws, pwned = hostile_workspace(tmp_path, variant)
    run = memcli(ws, *args(ws))
    assert not pwned.exists(), (name, run.code, run.err)
    if name.startswith("add"):  # the user's real repository got the commit
        assert run.code == 0, run.err
        assert "Tuesdays" in git(ws.parent, "show", "HEAD")


def test_the_mcp_status_tool_runs_nothing(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from tests.test_mcp import session, text_of

    ws, pwned = hostile_workspace(tmp_path, "fsmonitor")

    async def body(s: object) -> str:
        return text_of(await s.call_tool("status", {}))  # type: ignore[attr-defined]

    answer = session(ws, body)
    assert '"branch": "main"' in answer  # the user's repository was asked
    assert not pwned.exists()
