"""Shared fixtures: isolated user dirs, workspaces and a CLI runner."""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.testing
from typer.testing import CliRunner

from memcli.cli.app import app

pytest_plugins = ["tests.stub_openai", "tests.fake_embedder"]

# The real agent CLIs run only under `make e2e`, which installs them and names their folder.
collect_ignore_glob = [] if os.environ.get("E2E_AGENTS_BIN") else ["e2e/*"]


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point every user directory at a temporary folder; no MEMCLI_* leaks in."""
    home = tmp_path_factory.mktemp("home")
    for key in list(os.environ):
        if key.startswith("MEMCLI_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local/share"))
    monkeypatch.setenv("MEMCLI_CONFIG_DIR", str(home / "config"))
    monkeypatch.setenv("MEMCLI_CACHE_DIR", str(home / "cache"))
    monkeypatch.setenv("MEMCLI_RUNTIME_DIR", str(home / "run"))
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "memcli tests")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "tests@memcli.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "memcli tests")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "tests@memcli.invalid")
    monkeypatch.delenv("NO_COLOR", raising=False)
    return home


# Typer builds the Click command of the whole app on every CliRunner.invoke (about 15 ms of CPU,
# some 800 invocations in `make check`); memcli's app does not change while the tests run, so
# its command is built once per test process. Any other app is built on each call, as before;
# with a Typer that no longer has `_get_command`, everything is (only slower).
_build_command = getattr(typer.testing, "_get_command", None)


@functools.cache
def _app_command() -> Any:
    assert _build_command is not None
    return _build_command(app)


def _command_of(typer_app: typer.Typer) -> Any:
    assert _build_command is not None
    return _app_command() if typer_app is app else _build_command(typer_app)


if _build_command is not None:
    typer.testing._get_command = _command_of  # type: ignore[attr-defined,assignment]


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)

    def jsonl(self) -> list[Any]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]


class Cli:
    """Invoke the real Typer app against one workspace."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.runner = CliRunner()

    def __call__(self, *args: str, input: str | None = None) -> Run:
        result = self.runner.invoke(app, ["-w", str(self.root), *args], input=input)
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        return Run(result.exit_code, result.stdout, result.stderr)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An initialised workspace folder."""
    from memcli.notes.workspace import init_workspace

    root = tmp_path / "ws"
    root.mkdir()
    init_workspace(root)
    return root


@pytest.fixture
def cli(workspace: Path) -> Cli:
    return Cli(workspace)
