"""The real agent CLIs, headless, against a loopback model API (``make e2e``).

``E2E_AGENTS_BIN`` names the folder holding ``claude`` and ``codex`` (``make e2e`` installs
the pinned versions of tests/e2e/package.json there); without it these tests are not
collected. Every test gets a fresh HOME (tests/conftest.py), so the agents read only the
settings a test writes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.model_api import ModelAPI

MEMCLI = str(Path(sys.executable).with_name("memcli"))
TIMEOUT = 180


@pytest.fixture
def model() -> Iterator[ModelAPI]:
    api = ModelAPI()
    yield api
    api.close()


def agent(name: str) -> str:
    folder = os.environ.get("E2E_AGENTS_BIN", "")
    path = Path(folder) / name
    if not path.exists():
        pytest.fail(f"{name} is not installed in E2E_AGENTS_BIN={folder!r}: run make e2e")
    return str(path)


def quiet_env(**extra: str) -> dict[str, str]:
    """The environment an agent runs in: no telemetry, no updates, no error reports."""
    env = dict(os.environ)
    env.update(
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        NO_COLOR="1",
    )
    env.update(extra)
    return env


def memcli(
    root: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MEMCLI, *args], cwd=root, capture_output=True, text=True, timeout=120, env=env
    )


def project(tmp_path: Path, name: str, *facts: str) -> Path:
    """A git repository with a memcli workspace holding ``facts`` (none: no workspace)."""
    root = tmp_path / name
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    if facts:
        assert memcli(root, "init").returncode == 0
        for fact in facts:
            r = memcli(root, "add", "--type", "decision", fact)
            assert r.returncode == 0, r.stderr
    return root


def stale_linked_file(root: Path) -> str:
    """``jobs/export.py`` committed in ``root``, the fact naming it added, then the file
    changed in a commit dated two days on (the fact "may be stale" since); that commit's
    date, the index made again."""
    (root / "jobs").mkdir()
    (root / "jobs" / "export.py").write_text("def export(rows): ...\n")
    subprocess.run(["git", "add", "jobs"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "export"], cwd=root, check=True, env=quiet_env())
    assert memcli(root, "add", EXPORT_FACT).returncode == 0
    (root / "jobs" / "export.py").write_text("def export(rows, bom=False): ...\n")
    later = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(time.time() + 2 * 86400))
    dated = quiet_env(GIT_AUTHOR_DATE=later, GIT_COMMITTER_DATE=later)
    subprocess.run(["git", "commit", "-qam", "no BOM"], cwd=root, check=True, env=dated)
    assert memcli(root, "index").returncode == 0
    return later


#: The fact :func:`stale_linked_file` adds.
EXPORT_FACT = "jobs/export.py writes the CSV with a BOM so that Excel opens it."


def first_memory_blocks(text: str) -> int:
    return text.count("<<<BEGIN MEMORY")


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def which_node() -> str:
    node = shutil.which("node")
    assert node, "node is needed by the agent CLIs"
    return node


def counting_hooks(runs: Path, events: tuple[str, ...]) -> dict[str, Any]:
    """A ``hooks`` table whose command appends each hook's payload to ``runs``: every hook
    run of an agent, whoever started it."""
    count = {"hooks": [{"type": "command", "command": f"cat >> {runs}; echo >> {runs}"}]}
    return {"hooks": {event: [count] for event in events}}


def hook_runs(runs: Path) -> list[dict[str, Any]]:
    """The payloads :func:`counting_hooks` recorded."""
    return [json.loads(line) for line in runs.read_text().splitlines() if line.strip()]


def memory_text(root: Path) -> str:
    return "".join(p.read_text() for p in (root / "memory").rglob("*.md"))
