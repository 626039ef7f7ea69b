"""The prewarmed launcher the attack tests use runs memcli as ``python -m memcli`` would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import prewarmed

pytestmark = pytest.mark.slow


def initialised(folder: Path) -> dict[str, str]:
    """``memcli init`` in ``folder``; the environment to run memcli in there."""
    env = dict(os.environ)
    init = [sys.executable, "-m", "memcli", "init", "-q"]
    assert subprocess.run(init, cwd=folder, env=env, timeout=120).returncode == 0
    return env


def both(args: list[str], cwd: Path, env: dict[str, str], input: str | None = None):
    """The same command run by the launcher and by a plain subprocess."""
    plain = subprocess.run(
        [sys.executable, "-m", "memcli", *args],
        cwd=cwd,
        env=env,
        input=input,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return prewarmed.run(args, cwd, env, input=input), plain


def test_output_exit_code_folder_and_input_match_a_plain_process(tmp_path: Path) -> None:
    env = initialised(tmp_path)
    warm, plain = both(["add", "--json", "-"], tmp_path, env, input="Releases leave on Thursdays\n")
    assert warm.returncode == plain.returncode == 0, warm.stderr
    warm, plain = both(["search", "--json", "Thursdays"], tmp_path, env)
    assert warm.returncode == plain.returncode == 0
    assert warm.stdout == plain.stdout and "Thursdays" in warm.stdout
    warm, plain = both(["get", "memory/../../etc/passwd"], tmp_path, env)
    assert warm.returncode == plain.returncode != 0
    assert warm.stderr == plain.stderr and warm.stderr.startswith("Error:")


def test_the_child_reads_its_own_environment_and_imports_memcli_afresh(tmp_path: Path) -> None:
    (tmp_path / "probe.py").write_text(
        "import os, sys, tempfile, time\n"
        "print(tempfile.gettempdir(), time.tzname[0], sys.argv[1:], sys.stdin.read(),\n"
        "      'memcli' in sys.modules, 'litellm' in sys.modules, sys.path[0] == os.getcwd())\n"
        "sys.exit(3)\n"
    )
    (tmp_path / "temp").mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path / "temp"), "TZ": "JST-9"}
    warm = prewarmed.run(["a b"], tmp_path, env, input="typed", module="probe")
    assert warm.returncode == 3, warm.stderr
    assert warm.stdout.split() == [str(tmp_path / "temp"), "JST", "['a", "b']", "typed"] + [
        "False",
        "True",
        "True",
    ]


def test_a_command_that_runs_too_long_is_killed(tmp_path: Path) -> None:
    (tmp_path / "slow.py").write_text("import time\nprint('started', flush=True)\ntime.sleep(60)\n")
    warm = prewarmed.run([], tmp_path, dict(os.environ), timeout=1, module="slow")
    assert warm.returncode == -9 and warm.stdout == "started\n"


def test_the_launcher_runs_memcli_on_its_own_streams(tmp_path: Path) -> None:
    """``prewarmed.command`` (what the MCP client starts): the child reads and writes the
    launcher's own stdin and stdout, and its exit code is the launcher's."""
    env = initialised(tmp_path)
    added = subprocess.run(
        prewarmed.command(["add", "--json", "-"]),
        cwd=tmp_path,
        env=env,
        input="Releases leave on Thursdays\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert added.returncode == 0 and '"added": true' in added.stdout, added.stderr
    refused = subprocess.run(
        prewarmed.command(["get", "memory/../../etc/passwd"]),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 2 and refused.stderr.startswith("Error:")
