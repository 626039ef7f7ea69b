"""memcli agent install writes settings that run where the agent runs: real memcli processes
run the installed command lines in a shell with a desktop's PATH, a virtualenv without the MCP
SDK is a real one, and uninstall gives every file back byte for byte."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli

#: the virtualenv's console script, as pip made it
MEMCLI = Path(sys.executable).with_name("memcli")
DESKTOP_PATH = "/usr/bin:/bin"


def run(
    args: list[str], cwd: Path, *, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        input=stdin,
        env=env if env is not None else dict(os.environ),
        capture_output=True,
        text=True,
        timeout=120,
    )


def memcli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "memcli", *args], cwd)


def run_hook(command: str, payload: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The installed command line, run as the agent runs it: by a shell, with the PATH of
    an agent started from a desktop."""
    env = {**os.environ, "PATH": DESKTOP_PATH}
    return run(["/bin/sh", "-c", command], cwd, stdin=json.dumps(payload), env=env)


def hook_of(settings: Path, event: str) -> str:
    data = json.loads(settings.read_text("utf-8"))
    return str(data["hooks"][event][0]["hooks"][0]["command"])


def start_payload(cwd: Path) -> dict[str, str]:
    return {
        "session_id": "3f9a1c2e-0000-4000-8000-000000000001",
        "cwd": str(cwd),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }


@pytest.mark.slow
def test_an_installed_hook_runs_from_a_desktop_path(
    workspace: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # memcli on the PATH of the shell that installs (an activated virtualenv)
    monkeypatch.setenv("PATH", f"{MEMCLI.parent}{os.pathsep}{os.environ['PATH']}")
    assert run(["memcli", "add", "Card numbers must never be logged."], workspace).returncode == 0
    r = run(["memcli", "agent", "install", "claude-code"], workspace)
    assert r.returncode == 0, r.stderr

    command = hook_of(workspace / ".claude" / "settings.json", "SessionStart")
    assert os.path.isabs(shlex.split(command)[0])
    done = run_hook(command, start_payload(workspace), workspace)
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Card numbers must never be logged." in context
    server = json.loads((workspace / ".mcp.json").read_text())["mcpServers"]["memcli"]
    assert os.path.isabs(server["command"])


# -- the MCP extra ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def no_mcp_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real virtualenv holding everything memcli's has but the MCP SDK (its packages
    linked from this one, so that nothing is downloaded)."""
    venv = tmp_path_factory.mktemp("no-mcp") / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = Path(sysconfig.get_paths()["purelib"])
    new_site = next((venv / "lib").glob("python*/site-packages"))
    for entry in site.iterdir():
        if entry.name == "mcp" or entry.name.startswith("mcp-"):
            continue
        if not (new_site / entry.name).exists():
            (new_site / entry.name).symlink_to(entry)
    python = venv / "bin" / "python"
    assert subprocess.run([python, "-c", "import mcp"], capture_output=True).returncode != 0
    assert subprocess.run([python, "-c", "import memcli"], capture_output=True).returncode == 0
    return python


@pytest.mark.slow
def test_without_the_mcp_sdk_no_server_is_installed_and_doctor_says_so(
    workspace: Path, isolated_env: Path, no_mcp_python: Path
) -> None:
    r = run([str(no_mcp_python), "-m", "memcli", "agent", "install", "claude-code"], workspace)
    assert r.returncode == 0, r.stderr
    said = [line for line in r.stderr.splitlines() if "MCP" in line]
    assert len(said) == 1 and "memcli[mcp]" in said[0], r.stderr  # one clear line
    assert not (workspace / ".mcp.json").exists()  # a server that could not start
    settings = json.loads((workspace / ".claude" / "settings.json").read_text())
    assert "enabledMcpjsonServers" not in settings and "permissions" not in settings
    assert set(settings["hooks"]) == {
        "SessionStart",
        "UserPromptSubmit",
        "PreCompact",
        "SessionEnd",
        "PostToolUse",
    }

    # an entry that names this memcli (as an earlier install wrote it): it cannot start
    entry: dict[str, Any] = {"command": str(no_mcp_python), "args": ["-m", "memcli", "mcp"]}
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"memcli": entry}}))
    served = run([entry["command"], *entry["args"]], workspace)
    assert served.returncode == 2 and "memcli[mcp]" in served.stderr

    status = memcli("agent", "status", "--json", cwd=workspace)
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    row = next(
        i for i in data["installed"] if i["agent"] == "claude-code" and i["scope"] == "project"
    )
    assert row["mcp"] and "has no MCP SDK" in row["mcp_problem"]
    assert any("cannot start" in w for w in data["warnings"])
    human = memcli("agent", "status", cwd=workspace)
    assert "cannot start" in human.stdout + human.stderr

    doctor = memcli("doctor", "--offline", "--json", cwd=workspace)
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["agent"]["status"] == "problem"
    assert "cannot start" in checks["agent"]["summary"] and doctor.returncode != 0


# -- uninstall, byte for byte ---------------------------------------------------------------
SETTINGS_4 = (
    json.dumps(
        {
            "model": "opus",
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": "./g.sh"}]}
                ]
            },
            "permissions": {"allow": ["Bash(make test)"]},
        },
        indent=4,
    )
    + "\n"
)


def snapshot(*paths: Path) -> dict[Path, bytes | None]:
    return {p: p.read_bytes() if p.exists() else None for p in paths}


def test_uninstall_gives_back_every_file_byte_for_byte(cli: Cli, workspace: Path) -> None:
    settings = workspace / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(SETTINGS_4)
    (workspace / "CLAUDE.md").write_text("# Shop\n\nRun make test.")  # no final newline
    (workspace / ".mcp.json").write_text("")  # there, empty
    files = (settings, workspace / "CLAUDE.md", workspace / ".mcp.json")
    before = snapshot(*files)

    assert cli("agent", "install", "claude-code").exit_code == 0
    assert snapshot(*files) != before
    assert json.loads(settings.read_text())["model"] == "opus"
    r = cli("agent", "uninstall", "claude-code")
    assert r.exit_code == 0, r.stderr
    assert snapshot(*files) == before


def test_uninstall_removes_what_install_made(cli: Cli, workspace: Path) -> None:
    assert cli("agent", "install", "claude-code").exit_code == 0
    assert cli("agent", "uninstall", "claude-code").exit_code == 0
    for name in (".claude", ".mcp.json", "CLAUDE.md"):
        assert not (workspace / name).exists(), name


def test_a_file_keeps_its_indentation_without_the_record(
    cli: Cli, workspace: Path, isolated_env: Path
) -> None:
    from memcli.agentsetup.record import record_path

    settings = workspace / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(SETTINGS_4.rstrip("\n"))
    assert cli("agent", "install", "claude-code").exit_code == 0
    installed = settings.read_text()
    assert '\n    "model": "opus",' in installed and not installed.endswith("\n")
    record_path().unlink()  # the cache was cleared: the settings are rewritten, as they were
    assert cli("agent", "uninstall", "claude-code").exit_code == 0
    assert settings.read_text() == SETTINGS_4.rstrip("\n")


# -- scopes ---------------------------------------------------------------------------------
def new_workspace(path: Path, fact: str) -> Path:
    path.mkdir()
    assert memcli("init", cwd=path).returncode == 0
    assert memcli("add", fact, cwd=path).returncode == 0
    return path


@pytest.mark.slow
def test_user_scope_hooks_find_the_workspace_of_each_session(
    tmp_path: Path, isolated_env: Path
) -> None:
    a = new_workspace(tmp_path / "a", "Project A deploys with Helm.")
    b = new_workspace(tmp_path / "b", "Project B deploys with Nomad.")
    plain = tmp_path / "plain"
    plain.mkdir()
    r = memcli("agent", "install", "claude-code", "--scope", "user", cwd=a)
    assert r.returncode == 0, r.stderr

    command = hook_of(isolated_env / ".claude" / "settings.json", "SessionStart")
    for project, mine, other in ((a, "Helm", "Nomad"), (b, "Nomad", "Helm")):
        done = run_hook(command, start_payload(project / "src"), tmp_path)
        assert done.returncode == 0, done.stderr
        context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
        assert mine in context and other not in context
    nothing = run_hook(command, start_payload(plain), tmp_path)
    assert nothing.returncode == 0 and nothing.stdout == ""
    assert "every project" in r.stderr  # the scope, told truthfully


def test_both_scopes_warn_that_hooks_would_run_twice(cli: Cli, workspace: Path) -> None:
    assert "run twice" not in cli("agent", "install", "claude-code").stderr
    r = cli("agent", "install", "claude-code", "--scope", "user")
    assert r.exit_code == 0
    assert r.stderr.count("hooks would run twice") == 1
    data = cli("agent", "status", "--json").json()
    assert sum("hooks would run twice" in w for w in data["warnings"]) == 1
    assert "hooks would run twice" in cli("agent", "status").stderr


def test_codex_project_scope_writes_the_projects_codex_layer(
    cli: Cli, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tomllib

    home = tmp_path / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(home))
    config = workspace / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('# mine\nmodel = "o3"')  # no final newline
    before = config.read_bytes()

    r = cli("agent", "install", "codex")
    assert r.exit_code == 0, r.stderr
    assert "project scope: this project" in r.stderr and "trust" in r.stderr
    assert not home.exists()  # the user's Codex settings are left alone
    conf = tomllib.loads(config.read_text())
    assert conf["model"] == "o3"
    assert conf["mcp_servers"]["memcli"]["args"][-1] == "mcp"
    assert "-w" not in conf["mcp_servers"]["memcli"]["args"]
    assert conf["features"]["hooks"] is True
    hooks = json.loads((workspace / ".codex" / "hooks.json").read_text())["hooks"]
    wanted = {
        "SessionStart": "session-start",
        "UserPromptSubmit": "prompt",
        "PreCompact": "pre-compact",
        "Stop": "session-end",
        "PostToolUse": "file",
    }
    assert set(hooks) == set(wanted)
    assert hooks["PostToolUse"][0]["matcher"] == "apply_patch|Bash"
    for name, event in wanted.items():
        words = shlex.split(hooks[name][0]["hooks"][0]["command"])
        assert os.path.isabs(words[0]) and words[-3:] == ["agent", "hook", event]

    assert cli("agent", "status", "--json").json()["installed"][2]["hooks"] == list(wanted.values())
    assert cli("agent", "uninstall", "codex").exit_code == 0
    assert config.read_bytes() == before
    assert not (workspace / ".codex" / "hooks.json").exists()
    assert not (workspace / "AGENTS.md").exists()
