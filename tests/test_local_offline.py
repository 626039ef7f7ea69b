"""A local model that is neither in the cache nor in ``embedding.model_path``, on a machine
that cannot reach the model hub: one clear warning at once, never fastembed's retries."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Cli

pytest.importorskip("fastembed")

pytestmark = pytest.mark.slow


def closed_port() -> int:
    """A loopback port nothing listens on (the hub the test points memcli at)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_model_that_cannot_be_fetched_fails_at_once(cli: Cli, workspace: Path) -> None:
    assert cli("add", "The session cache runs on Valkey.").exit_code == 0
    model = "local/sentence-transformers/all-MiniLM-L6-v2"
    assert cli("config", "set", "embedding.model", model).exit_code == 0
    env = {**os.environ, "HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}"}
    env.pop("MEMCLI_EMBEDDING_MODEL_PATH", None)
    for args in (["index"], ["search", "--json", "where do sessions live"]):
        r = subprocess.run(
            [sys.executable, "-m", "memcli", "-w", str(workspace), *args],
            capture_output=True,
            text=True,
            timeout=30,  # fastembed's own retries take about 40 s
            env=env,
        )
        assert r.returncode == 0, r.stderr
        said = r.stderr + r.stdout  # search --json gives its warnings in the JSON
        assert "127.0.0.1 cannot be reached to fetch it" in said, said
        assert "set embedding.model_path to a folder holding the model" in said
        assert "fastembed" not in r.stderr and "ERROR" not in r.stderr  # no log lines of its own
    assert '"mode": "keyword"' in r.stdout and "Valkey" in r.stdout
