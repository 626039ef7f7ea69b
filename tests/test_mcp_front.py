"""memcli mcp answers the handshake before the MCP SDK has loaded, and hands everything else
to the SDK server once it has (memcli.agent.mcp_front), over a real process's stdio."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")  # memcli[mcp]; `make test` installs it

from memcli import __version__
from memcli.agent import mcp_capture, mcp_server
from memcli.agent.mcp_front import REPLAY_ID, VERSION_META, load_wire
from memcli.agent.mcp_protocol import LISTEN_FOR, LISTENING, SERVER_META, SUBSCRIPTION
from tests.conftest import Cli

GATE = Path(__file__).with_name("mcp_gate")
CLIENT_META = "io.modelcontextprotocol/client"


def test_the_committed_handshake_is_what_the_sdk_answers() -> None:
    """mcp_wire.json is current: a tool, a description or an annotation changed without
    `python -m memcli.agent.mcp_capture` makes this fail."""
    assert mcp_capture.WIRE_FILE.read_text("utf-8") == mcp_capture.wire_text(), (
        "memcli/agent/mcp_wire.json is stale: run python -m memcli.agent.mcp_capture"
    )


class Server:
    """``memcli -w ROOT mcp`` with the SDK's import held (or broken) by tests/mcp_gate."""

    def __init__(self, root: Path, **env: str) -> None:
        path = os.pathsep.join(filter(None, [str(GATE), os.environ.get("PYTHONPATH")]))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memcli", "-w", str(root), "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": path, **env},
        )
        self.buffer = b""

    def send(self, method: str, id: Any = None, **params: Any) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if id is not None:
            message["id"] = id
        if params:
            message["params"] = params
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def read(self, timeout: float = 30) -> dict[str, Any]:
        """The next message the server writes (fails after ``timeout`` seconds)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            ready, _, _ = select.select([fd], [], [], timeout)
            assert ready, f"no answer within {timeout} s"
            chunk = os.read(fd, 65536)
            assert chunk, "the server closed stdout"
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        message: dict[str, Any] = json.loads(line)
        return message

    def close(self) -> tuple[int, str]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.buffer += self.proc.stdout.read()
        err = self.proc.stderr.read() if self.proc.stderr else b""
        return self.proc.returncode, err.decode()


def initialize(server: Server, version: str = "2025-06-18") -> dict[str, Any]:
    client = {"name": "test", "version": "1"}
    server.send("initialize", 0, protocolVersion=version, capabilities={}, clientInfo=client)
    return server.read()


@pytest.fixture
def facts(cli: Cli, workspace: Path) -> Path:
    assert cli("add", "--type", "decision", "Use Valkey for the session cache.").exit_code == 0
    return workspace


@pytest.mark.slow
def test_the_handshake_is_answered_before_the_sdk_has_loaded(facts: Path, tmp_path: Path) -> None:
    """initialize and tools/list come back while the SDK's import waits; a tool call made
    meanwhile is answered by the SDK server once it is up, and nothing else reaches the
    client (not the SDK's answer to the replayed initialize)."""
    gate = tmp_path / "gate"
    server = Server(facts, MEMCLI_TEST_MCP_GATE=str(gate))
    wire = load_wire()
    answer = initialize(server)
    assert answer["id"] == 0
    assert answer["result"]["protocolVersion"] == "2025-06-18"
    assert answer["result"]["serverInfo"] == {"name": "memcli", "version": __version__}
    assert answer["result"]["instructions"] == mcp_server.INSTRUCTIONS
    server.send("notifications/initialized")
    tools = wire["answers"]["2025-06-18"]["tools/list"]
    server.send("tools/list", 1)
    assert server.read() == {"jsonrpc": "2.0", "id": 1, **tools}
    server.send("ping", 2)
    assert server.read() == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert not gate.exists()  # all of that while the SDK was still loading
    server.send("tools/call", 3, name="search", arguments={"query": "session cache"})
    gate.touch()
    called = server.read()
    assert called["id"] == 3, called
    text = called["result"]["content"][0]["text"]
    assert "BEGIN MEMORY" in text and "Valkey" in text
    server.send("tools/list", 4)  # now the SDK server's own answer: the same
    assert server.read() == {"jsonrpc": "2.0", "id": 4, **tools}
    code, err = server.close()
    assert code == 0, err
    assert REPLAY_ID.encode() not in server.buffer and server.buffer.strip() == b""


@pytest.mark.slow
def test_a_client_of_per_request_envelopes_is_answered_before_the_sdk_has_loaded(
    facts: Path, tmp_path: Path
) -> None:
    """Claude Code speaks the 2026-07-28 protocol: server/discover, then lists, each request
    carrying its version in _meta; no initialize, so nothing is replayed."""
    gate = tmp_path / "gate"
    server = Server(facts, MEMCLI_TEST_MCP_GATE=str(gate))
    client = {CLIENT_META + "Info": {"name": "t", "version": "1"}, CLIENT_META + "Capabilities": {}}
    meta = {"_meta": {VERSION_META: "2026-07-28", **client}}
    server.send("server/discover", "probe", **meta)
    found = server.read()["result"]
    assert found["supportedVersions"] == ["2026-07-28"]
    assert found["_meta"][SERVER_META] == {"name": "memcli", "version": __version__}
    server.send("subscriptions/listen", "listen:0", notifications=LISTEN_FOR, **meta)
    acked = server.read()  # acknowledged here; the SDK server keeps the subscription
    assert acked["method"] == LISTENING and acked["params"]["_meta"][SUBSCRIPTION] == "listen:0"
    server.send("tools/list", 1, **meta)
    listed = server.read()
    assert listed["id"] == 1 and {t["name"] for t in listed["result"]["tools"]} >= {"search"}
    assert not gate.exists()
    args = {"name": "search", "arguments": {"query": "session cache"}}
    server.send("tools/call", 2, **args, **meta)
    gate.touch()
    called = server.read()  # and not the SDK server's acknowledgement first
    assert "Valkey" in called["result"]["content"][0]["text"], called
    code, err = server.close()
    assert code == 0, err


@pytest.mark.parametrize(("asked", "agreed"), [("2024-11-05", "2024-11-05"), ("2099-01-01", None)])
def test_the_protocol_version_is_agreed_as_the_sdk_would(
    facts: Path, tmp_path: Path, asked: str, agreed: str | None
) -> None:
    """A version the SDK speaks is echoed; another gets the newest it speaks by handshake."""
    server = Server(facts, MEMCLI_TEST_MCP_GATE=str(tmp_path / "never"))
    got = initialize(server, asked)["result"]["protocolVersion"]
    assert got == (agreed or load_wire()["handshake_versions"][-1])
    server.send("notifications/initialized")
    server.send("tools/list", 1)
    assert server.read()["result"] == load_wire()["answers"][got]["tools/list"]["result"]
    server.proc.kill()
    server.proc.wait()


@pytest.mark.slow
def test_an_sdk_that_cannot_load_is_an_error_to_each_request_not_a_hang(facts: Path) -> None:
    server = Server(facts, MEMCLI_TEST_MCP_BROKEN="1")
    assert initialize(server)["result"]["serverInfo"]["name"] == "memcli"
    server.send("notifications/initialized")
    server.send("tools/call", 1, name="search", arguments={"query": "cache"})
    error = server.read()
    assert error["id"] == 1 and "cannot serve" in error["error"]["message"], error
    code, err = server.close()
    assert code == 0 and "cannot start the MCP server" in err, err
