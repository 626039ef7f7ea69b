"""The user's folders (config, cache, the engine's runtime folder) are platformdirs' answers,
worked out without importing it where that is plain (Linux, absolute XDG variables or HOME)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import platformdirs
import pytest

from memcli.config.layers import cache_dir, user_config_path
from memcli.enginelink import runtime_dir

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the XDG rules")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var in ("MEMCLI_CONFIG_DIR", "MEMCLI_CACHE_DIR", "MEMCLI_RUNTIME_DIR"):
        monkeypatch.delenv(var, raising=False)
    for var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"):
        monkeypatch.delenv(var, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.mark.parametrize("value", [None, "", "relative/dir", "/abs/xdg", "/abs/xdg/"])
@pytest.mark.parametrize("home_value", ["tmp", "tmp/", "relative"])
def test_config_and_cache_folders_are_platformdirs_own(
    home: Path, monkeypatch: pytest.MonkeyPatch, value: str | None, home_value: str
) -> None:
    monkeypatch.setenv("HOME", {"tmp": str(home), "tmp/": f"{home}/", "relative": "h"}[home_value])
    for var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        if value is not None:
            monkeypatch.setenv(var, value)
    assert user_config_path() == Path(
        platformdirs.user_config_dir("memcli", appauthor=False), "config.toml"
    )
    assert cache_dir() == Path(platformdirs.user_cache_dir("memcli", appauthor=False))


def _platformdirs_runtime() -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Path(platformdirs.user_runtime_dir("memcli"))


@pytest.mark.parametrize("mode", [0o700, 0o755])
def test_the_runtime_folder_is_platformdirs_own(
    home: Path, monkeypatch: pytest.MonkeyPatch, mode: int
) -> None:
    run = home / "run"
    run.mkdir()
    run.chmod(mode)  # 0755: not private, so not taken (platformdirs falls back, and so does memcli)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run))
    assert runtime_dir() == _platformdirs_runtime()
    assert (runtime_dir() == run / "memcli") is (mode == 0o700)


@pytest.mark.slow
def test_the_prompt_hook_does_not_import_platformdirs(home: Path, workspace: Path) -> None:
    # a short runtime folder, as /run/user/UID is: a socket path over 100 bytes goes to the
    # temporary folder instead (and imports tempfile)
    run = Path(tempfile.mkdtemp(prefix="rt-"))
    payload = json.dumps({"session_id": "s", "cwd": str(workspace), "prompt": "which cache?"})
    code = (
        "import runpy, sys; sys.argv = ['memcli', 'agent', 'hook', 'prompt'];"
        ' exec(\'try:\\n runpy.run_module("memcli", run_name="__main__")\\n'
        "except SystemExit:\\n pass');"
        " print(sorted(m for m in sys.modules if m.split('.')[0] in ('platformdirs', 'tempfile')),"
        " file=sys.stderr)"
    )
    try:
        r = subprocess.run(
            [sys.executable, "-c", code],
            input=payload,
            capture_output=True,
            text=True,
            cwd=workspace,
            env={**os.environ, "XDG_RUNTIME_DIR": str(run)},
            timeout=60,
        )
    finally:
        shutil.rmtree(run)
    assert r.returncode == 0, r.stderr[-500:]
    assert r.stderr.strip().splitlines()[-1] == "[]", r.stderr[-500:]
