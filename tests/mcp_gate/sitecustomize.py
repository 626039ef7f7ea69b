"""Loaded by a ``memcli mcp`` under test (this folder on PYTHONPATH): makes importing the MCP
SDK wait until the file ``$MEMCLI_TEST_MCP_GATE`` exists, or fail when
``$MEMCLI_TEST_MCP_BROKEN`` is set, so tests can see what the server answers meanwhile."""

from __future__ import annotations

import os
import sys
import time
from importlib.abc import MetaPathFinder
from typing import Any


class _Gate(MetaPathFinder):
    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name != "mcp.server":
            return None
        if os.environ.get("MEMCLI_TEST_MCP_BROKEN"):
            raise ImportError("the SDK is broken here", name=name)
        gate = os.environ.get("MEMCLI_TEST_MCP_GATE", "")
        deadline = time.monotonic() + 60
        while gate and not os.path.exists(gate) and time.monotonic() < deadline:
            time.sleep(0.02)
        return None  # then found as usual


sys.meta_path.insert(0, _Gate())
