"""memcli and the real GitHub Copilot CLI, offline: a session needs a GitHub login, so what is
run is Copilot CLI's own reading of the files install writes (``copilot mcp list``,
``copilot instruction list``), and uninstall byte for byte. See docs/agents.md."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.e2e.conftest import TIMEOUT, agent, memcli, project, quiet_env

SERVERS = b'{"mcpServers": {"db": {"type": "local", "command": "pgmcp", "tools": ["*"]}}}'


def copilot_home() -> Path:
    return Path(os.environ["HOME"]) / ".copilot"


def copilot(root: Path, *args: str) -> str:
    run = subprocess.run(
        [agent("copilot"), *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
        env=quiet_env(COPILOT_HOME=str(copilot_home())),
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout + run.stderr


def trust(*folders: Path) -> None:
    """What trusting a folder in Copilot CLI records: it reads a project's servers then."""
    copilot_home().mkdir(parents=True, exist_ok=True)
    config = {"trusted_folders": [str(f) for f in folders]}
    (copilot_home() / "config.json").write_text(json.dumps(config))


def test_copilot_reads_the_project_s_server_and_policy(tmp_path: Path) -> None:
    root = project(tmp_path, "app", "Use Valkey for the session cache.")
    trust(root)
    (root / ".github").mkdir()
    (root / ".github" / "mcp.json").write_bytes(SERVERS)
    run = memcli(root, "agent", "install", "copilot")
    assert run.returncode == 0, run.stderr
    listed = copilot(root, "mcp", "list")
    assert "memcli" in listed and "db" in listed, listed
    assert ".github/copilot-instructions.md" in copilot(root, "instruction", "list")
    assert memcli(root, "agent", "uninstall", "copilot").returncode == 0
    assert (root / ".github" / "mcp.json").read_bytes() == SERVERS
    assert "memcli" not in copilot(root, "mcp", "list")


def test_user_scope_is_read_from_copilot_s_home(tmp_path: Path) -> None:
    root = project(tmp_path, "app", "Use Valkey for the session cache.")
    run = memcli(root, "agent", "install", "copilot", "--scope", "user")
    assert run.returncode == 0, run.stderr
    assert (copilot_home() / "hooks" / "memcli.json").is_file()
    assert "memcli" in copilot(root, "mcp", "list")
    assert memcli(root, "agent", "uninstall", "copilot", "--scope", "user").returncode == 0
    assert not (copilot_home() / "mcp-config.json").exists()
    assert not (copilot_home() / "hooks").exists()
