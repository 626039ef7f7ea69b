"""memcli and the real OpenCode CLI, offline: the config install writes is one OpenCode reads
(its own ``opencode mcp list`` connects to memcli's server), and uninstall gives the files back
byte for byte. A session against a loopback model is not run: see docs/agents.md."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.e2e.conftest import TIMEOUT, agent, memcli, project, quiet_env

CLOSED = "http://127.0.0.1:9/"
USER_CONFIG = b'{\n  "$schema": "https://opencode.ai/config.json",\n  "autoupdate": false\n}'


def opencode(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home = Path(os.environ["HOME"])
    return subprocess.run(
        [agent("opencode"), *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
        env=quiet_env(
            XDG_CONFIG_HOME=str(home / ".config"),
            OPENCODE_DISABLE_MODELS_FETCH="1",
            OPENCODE_DISABLE_AUTOUPDATE="1",
            # OpenCode installs its plugin SDK into a config folder with plugins: from a
            # registry that answers nothing here, so that no test reaches the network
            NPM_CONFIG_REGISTRY=CLOSED,
            BUN_CONFIG_REGISTRY=CLOSED,
        ),
    )


def test_opencode_reads_the_server_and_uninstall_gives_the_bytes_back(tmp_path: Path) -> None:
    root = project(tmp_path, "app", "Use Valkey for the session cache.")
    (root / "opencode.json").write_bytes(USER_CONFIG)
    run = memcli(root, "agent", "install", "opencode")
    assert run.returncode == 0, run.stderr
    listed = opencode(root, "mcp", "list")
    said = listed.stdout + listed.stderr
    assert listed.returncode == 0 and "memcli" in said and "connected" in said, said
    status = json.loads(memcli(root, "agent", "status", "--json").stdout)
    row = next(
        r for r in status["installed"] if (r["agent"], r["scope"]) == ("opencode", "project")
    )
    assert row["mcp"] and row["policy"] and row["hooks"] == ["session-start", "prompt"]
    assert memcli(root, "agent", "uninstall", "opencode").returncode == 0
    assert (root / "opencode.json").read_bytes() == USER_CONFIG
    # memcli's files are gone (what OpenCode itself wrote in .opencode/ stays)
    assert not (root / ".opencode" / "plugins").exists() and not (root / "AGENTS.md").exists()
    assert "memcli" not in opencode(root, "mcp", "list").stdout


def test_user_scope_is_read_from_opencode_s_config_folder(tmp_path: Path) -> None:
    root = project(tmp_path, "app", "Use Valkey for the session cache.")
    run = memcli(root, "agent", "install", "opencode", "--scope", "user")
    assert run.returncode == 0, run.stderr
    folder = Path(os.environ["HOME"]) / ".config" / "opencode"
    assert (folder / "plugins" / "memcli.js").is_file()
    listed = opencode(root, "mcp", "list")
    assert "memcli" in listed.stdout + listed.stderr
    assert memcli(root, "agent", "uninstall", "opencode", "--scope", "user").returncode == 0
    assert not (folder / "plugins").exists() and not (folder / "AGENTS.md").exists()
    assert "memcli" not in (folder / "opencode.json").read_text()  # OpenCode's own file
