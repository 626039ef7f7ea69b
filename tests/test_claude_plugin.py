"""memcli's Claude Code plugin: its files are current and made from what ``agent install``
writes; ``agent status``, doctor and ``agent install`` read Claude Code's record of it (as
the real CLI writes it: tests/e2e/test_claude_plugin.py), hostile records included."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memcli.agents.claude_plugin import files
from tests.conftest import Cli

ROOT = Path(__file__).resolve().parent.parent
EVENTS = ["session-start", "prompt", "pre-compact", "session-end", "file"]
ALLOW = [f"mcp__plugin_memcli_memcli__{t}" for t in ("search", "context", "get", "status")]


@pytest.fixture(autouse=True)
def claude_home(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Claude Code's folder in the test's HOME; this memcli on the PATH (the plugin's)."""
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    return Path(os.environ["HOME"]) / ".claude"


def install(home: Path, *, scope: str = "user", project: Path | None = None) -> Path:
    """What ``claude plugin install memcli@memcli`` leaves: the plugin in Claude Code's cache,
    its record in installed_plugins.json, and ``enabledPlugins`` in the scope's settings."""
    folder = home / "plugins" / "cache" / "memcli" / "memcli" / "0.1.0"
    for name, text in files().items():
        if name.startswith(".claude-plugin/memcli/"):
            path = folder / name.removeprefix(".claude-plugin/memcli/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    entry: dict[str, Any] = {"scope": scope, "installPath": str(folder), "version": "0.1.0"}
    if project is not None:
        entry["projectPath"] = str(project)
    record = {"version": 2, "plugins": {"memcli@memcli": [entry]}}
    (home / "plugins" / "installed_plugins.json").write_text(json.dumps(record))
    enable(home / "settings.json" if project is None else project / ".claude" / "settings.json")
    return folder


def enable(settings: Path, on: bool = True) -> None:
    data = json.loads(settings.read_text()) if settings.exists() else {}
    data.setdefault("enabledPlugins", {})["memcli@memcli"] = on
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(data))


def plugin_rows(cli: Cli) -> list[dict[str, Any]]:
    r = cli("agent", "status", "--json")
    assert r.exit_code == 0, r.stderr
    return [row for row in r.json()["installed"] if row["scope"] == "plugin"]


# -- the files ------------------------------------------------------------------------------


def test_the_committed_plugin_is_what_the_code_makes() -> None:
    stale = [n for n, text in files().items() if not (ROOT / n).is_file()
             or (ROOT / n).read_text("utf-8") != text]  # fmt: skip
    assert not stale, f"stale: {stale}; run make plugin"
    found = {p.relative_to(ROOT).as_posix() for p in (ROOT / ".claude-plugin").rglob("*")}
    assert {p for p in found if (ROOT / p).is_file()} == set(files()), "files nobody makes"


def test_the_plugin_hooks_are_the_ones_agent_install_writes(cli: Cli, workspace: Path) -> None:
    assert cli("agent", "install", "claude-code").exit_code == 0
    settings = json.loads((workspace / ".claude" / "settings.json").read_text())
    plugin = json.loads(files()[".claude-plugin/memcli/hooks/hooks.json"])

    def shape(table: dict[str, Any]) -> dict[str, Any]:
        return {
            event: [
                (g.get("matcher"), h["timeout"], h["command"].rsplit("agent hook ", 1)[1])
                for g in groups
                for h in g["hooks"]
            ]
            for event, groups in table["hooks"].items()
        }

    assert shape(plugin) == shape(settings)
    for groups in plugin["hooks"].values():
        assert groups[0]["hooks"][0]["command"].startswith("command -v memcli ")
    server = json.loads(files()[".claude-plugin/memcli/.mcp.json"])["mcpServers"]["memcli"]
    assert server == {"command": "memcli", "args": ["mcp"]}


def test_the_skill_is_the_policy_agent_install_writes(cli: Cli, workspace: Path) -> None:
    assert cli("agent", "install", "claude-code").exit_code == 0
    policy = (workspace / "CLAUDE.md").read_text().splitlines()[1:-1]  # within the markers
    skill = files()[".claude-plugin/memcli/skills/memory/SKILL.md"]
    head, body = skill.split("\n---\n\n", 1)
    assert body.splitlines() == policy
    assert head.startswith("---\nname: memory\ndescription: ")
    json.loads(head.split("description: ", 1)[1])  # quoted: YAML reads it whole


@pytest.mark.parametrize("with_memcli", [True, False])
def test_a_plugin_hook_is_silent_without_memcli_or_a_workspace(
    tmp_path: Path, with_memcli: bool
) -> None:
    """As Claude Code runs it (``sh -c``), in a folder with no workspace: exit 0, nothing
    printed, whether memcli is on the PATH or not."""
    hooks = json.loads(files()[".claude-plugin/memcli/hooks/hooks.json"])["hooks"]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if with_memcli:
        (bin_dir / "memcli").symlink_to(Path(sys.executable).with_name("memcli"))
    for name in ("sh", "dirname", "cat"):  # a PATH with no memcli, but a shell
        if shutil.which(name):
            (bin_dir / name).symlink_to(shutil.which(name))  # type: ignore[arg-type]
    payload = json.dumps({"session_id": "s1", "cwd": str(tmp_path), "prompt": "which cache?"})
    for groups in hooks.values():
        command = groups[0]["hooks"][0]["command"]
        run = subprocess.run(
            ["/bin/sh", "-c", command],
            input=payload,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={"PATH": str(bin_dir), "HOME": os.environ["HOME"]},
            timeout=60,
        )
        assert (run.returncode, run.stdout) == (0, ""), (command, run.stderr)


# -- Claude Code's record -------------------------------------------------------------------


def test_status_and_doctor_see_an_enabled_plugin(
    cli: Cli, workspace: Path, claude_home: Path
) -> None:
    assert plugin_rows(cli) == []
    folder = install(claude_home)
    (row,) = plugin_rows(cli)
    assert row["plugin"] == {"id": "memcli@memcli", "scope": "user", "enabled": True}
    assert row["hooks"] == EVENTS and row["mcp"] and row["policy"]
    assert row["files"] == [str(folder)]
    r = cli("doctor", "--json", "--offline")
    (check,) = [c for c in r.json()["checks"] if c["name"] == "agent"]
    assert "claude-code (plugin)" in check["summary"]
    assert check["details"]["plugins"] == [row["plugin"]]
    table = cli("agent", "status")
    assert "plugin" in table.stdout


def test_a_plugin_whose_memcli_is_not_on_the_path_is_a_problem(
    cli: Cli, workspace: Path, claude_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(claude_home)
    monkeypatch.setenv("PATH", "/nonexistent")
    (row,) = plugin_rows(cli)
    assert row["mcp_problem"] == "memcli is not on the PATH, where the plugin runs it"
    (check,) = [
        c for c in cli("doctor", "--json", "--offline").json()["checks"] if c["name"] == "agent"
    ]
    assert check["status"] == "problem" and "pipx" in check["summary"], check


def test_the_settings_decide_whether_it_is_enabled(
    cli: Cli, workspace: Path, claude_home: Path
) -> None:
    """The user's settings, then the project's, then its local settings: the last wins."""
    install(claude_home)
    enable(workspace / ".claude" / "settings.json", on=False)
    (row,) = plugin_rows(cli)
    assert row["plugin"]["enabled"] is False and row["hooks"] == [] and not row["mcp"]
    enable(workspace / ".claude" / "settings.local.json", on=True)
    assert plugin_rows(cli)[0]["plugin"]["enabled"] is True


def test_a_project_install_serves_its_project_only(
    cli: Cli, workspace: Path, claude_home: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    install(claude_home, scope="project", project=other)
    assert plugin_rows(cli) == []
    install(claude_home, scope="project", project=workspace)
    assert plugin_rows(cli)[0]["plugin"]["scope"] == "project"


@pytest.mark.parametrize("damage", ["fifo", "huge", "deep", "not-json", "list", "link-out"])
def test_a_damaged_record_reads_as_no_plugin(
    cli: Cli, workspace: Path, claude_home: Path, tmp_path: Path, damage: str
) -> None:
    """Claude Code's files are read as hostile: a FIFO is not waited on, a huge or deeply
    nested file is not parsed, a project's settings link leading out of it is not followed;
    status and doctor still answer."""
    install(claude_home)
    record = claude_home / "plugins" / "installed_plugins.json"
    if damage == "link-out":  # the only enabling settings: a link out of the project
        outside = tmp_path / "elsewhere.json"
        (claude_home / "settings.json").rename(outside)
        (workspace / ".claude").mkdir()
        (workspace / ".claude" / "settings.json").symlink_to(outside)
    else:
        record.unlink()
    if damage == "fifo":
        os.mkfifo(record)
    elif damage == "huge":
        record.write_text('{"plugins": {"memcli@memcli": [' + " " * (5 << 20) + "]}}")
    elif damage == "deep":
        record.write_text('{"plugins": ' + "[" * 100_000 + "]" * 100_000 + "}")
    elif damage == "not-json":
        record.write_text('{"plugins": {"memcli@memcli": [{"scope": "user"')
    elif damage == "list":
        record.write_text('[{"plugins": 1}]')
    started = time.monotonic()
    assert not [row for row in plugin_rows(cli) if row["plugin"]["enabled"]]
    r = cli("doctor", "--json", "--offline")
    assert r.exit_code in (0, 1) and time.monotonic() - started < 30
    if damage == "link-out":  # install refuses to write through it (exit 2), as ever
        assert cli("agent", "install", "claude-code").exit_code == 2
        return
    assert cli("agent", "install", "claude-code").exit_code == 0  # hooks written: no plugin
    assert "hooks" in json.loads((workspace / ".claude" / "settings.json").read_text())


# -- agent install beside the plugin --------------------------------------------------------


def test_install_beside_the_plugin_writes_no_second_copy(
    cli: Cli, workspace: Path, claude_home: Path
) -> None:
    install(claude_home)
    (workspace / ".claude").mkdir()
    before = '{\n    "permissions": {"allow": ["Bash(ls)"]}\n}'
    (workspace / ".claude" / "settings.json").write_text(before)
    r = cli("agent", "install", "claude-code")
    assert r.exit_code == 0, r.stderr
    said = [line for line in r.stderr.splitlines() if "plugin" in line]
    assert len(said) == 1 and "memcli plugin (memcli@memcli, user scope)" in said[0], r.stderr
    data = json.loads((workspace / ".claude" / "settings.json").read_text())
    assert "hooks" not in data and "enabledMcpjsonServers" not in data
    assert data["permissions"]["allow"] == ["Bash(ls)", *ALLOW]
    assert not (workspace / ".mcp.json").exists()
    assert "memcli:begin" in (workspace / "CLAUDE.md").read_text()
    assert cli("agent", "install", "claude-code", "--json").json()["plugin"] == "memcli@memcli"
    assert cli("agent", "uninstall", "claude-code").exit_code == 0
    assert (workspace / ".claude" / "settings.json").read_text() == before


def test_hooks_beside_the_plugin_are_a_warning_and_install_takes_them_out(
    cli: Cli, workspace: Path, claude_home: Path
) -> None:
    assert cli("agent", "install", "claude-code").exit_code == 0
    install(claude_home)
    (twice,) = [w for w in cli("agent", "status", "--json").json()["warnings"] if "twice" in w]
    assert "installed in the project scope and by memcli's plugin" in twice
    doctor = cli("doctor", "--json", "--offline").json()
    (check,) = [c for c in doctor["checks"] if c["name"] == "agent"]
    assert twice in check["details"]["installed"]
    assert cli("agent", "install", "claude-code").exit_code == 0
    data = json.loads((workspace / ".claude" / "settings.json").read_text())
    assert "hooks" not in data and data["permissions"]["allow"] == ALLOW
    assert not (workspace / ".mcp.json").exists()
    assert not [w for w in cli("agent", "status", "--json").json()["warnings"] if "twice" in w]


def test_a_project_plugin_leaves_user_scope_hooks_to_install(
    cli: Cli, workspace: Path, claude_home: Path
) -> None:
    """Enabled for this project only, the plugin serves no other project: a user-scope
    install (every project) still writes its hooks; a project-scope one does not."""
    install(claude_home, scope="project", project=workspace)
    assert cli("agent", "install", "claude-code", "--scope", "user").exit_code == 0
    assert "hooks" in json.loads((claude_home / "settings.json").read_text())
    r = cli("agent", "install", "claude-code")
    assert r.exit_code == 0 and "memcli plugin (memcli@memcli, project scope)" in r.stderr
    assert "hooks" not in json.loads((workspace / ".claude" / "settings.json").read_text())
