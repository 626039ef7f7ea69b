"""The capture of what the MCP SDK's server answers to what a client asks first, for every
protocol version it speaks (:func:`wire`), kept in ``mcp_wire.json`` for
:mod:`memcli.agent.mcp_front`, which answers from it while the SDK loads.
``python -m memcli.agent.mcp_capture`` writes the file anew."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from memcli.agent.mcp_protocol import LISTEN_FOR, LISTENING, VERSION_META
from memcli.agent.mcp_server import build_server, run_on
from memcli.agent.mcp_workspace import Engine

__all__ = ["FIRST_ASKED", "WIRE_FILE", "wire", "wire_text"]


class _Lines:
    """Collects what a server writes; :attr:`done` is set once ``expected`` lines are in."""

    def __init__(self, expected: int) -> None:
        self.text = ""
        self.expected = expected
        self.done = threading.Event()

    def write(self, text: str) -> int:
        self.text += text
        if self.text.count("\n") >= self.expected:
            self.done.set()
        return len(text)

    def flush(self) -> None:
        pass


#: What a client asks first, which memcli.agent.mcp_front answers from mcp_wire.json.
FIRST_ASKED = ("tools/list", "prompts/list", "resources/list", "ping")


def _answers(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The SDK server's first answer to each request of ``messages``, by method: its
    ``result`` or ``error``, or for ``subscriptions/listen`` the ``notification`` that
    acknowledges it. Its input stays open until each has one (requests still running at
    its end are cancelled)."""
    methods = {m["id"]: m["method"] for m in messages if "id" in m}
    out = _Lines(len(methods))
    engine = Engine(None)
    read, write = os.pipe()
    with os.fdopen(read, "r", encoding="utf-8") as stdin:
        serving = threading.Thread(target=run_on, args=(build_server(engine), stdin, out))
        serving.start()
        with os.fdopen(write, "w", encoding="utf-8") as pipe:
            pipe.write("".join(json.dumps(m) + "\n" for m in messages))
            pipe.flush()
            out.done.wait(60)
        serving.join(60)
    engine.close()
    answers: dict[str, Any] = {}
    for line in out.text.splitlines():
        said = json.loads(line)
        del said["jsonrpc"]
        if said.get("method") == LISTENING:
            answers.setdefault("subscriptions/listen", {"notification": said})
        elif "id" in said:
            answers.setdefault(methods[said.pop("id")], said)
    return answers


def wire() -> dict[str, Any]:
    """What the SDK server answers to what a client asks first, for every protocol version
    it speaks: ``initialize`` (a handshake version) or ``server/discover`` (a version of
    per-request envelopes), then :data:`FIRST_ASKED`. ``mcp_wire.json`` keeps it for
    :mod:`memcli.agent.mcp_front`, with memcli's version left out (filled in when served)."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    client = {"name": "memcli-wire", "version": "0"}
    by_version: dict[str, Any] = {}
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        asked = {"protocolVersion": version, "capabilities": {}, "clientInfo": client}
        by_version[version] = _answers(
            [
                {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": asked},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                *({"jsonrpc": "2.0", "id": i, "method": m} for i, m in enumerate(FIRST_ASKED, 1)),
            ]
        )
    for version in MODERN_PROTOCOL_VERSIONS:
        meta = {
            VERSION_META: version,
            "io.modelcontextprotocol/clientInfo": client,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        listen = {"_meta": meta, "notifications": LISTEN_FOR}
        by_version[version] = _answers(
            [
                {"jsonrpc": "2.0", "id": i, "method": m, "params": {"_meta": meta}}
                for i, m in enumerate(("server/discover", *FIRST_ASKED))
            ]
            + [
                {
                    "jsonrpc": "2.0",
                    "id": "listen",
                    "method": "subscriptions/listen",
                    "params": listen,
                }
            ]
        )
    return {
        "handshake_versions": list(HANDSHAKE_PROTOCOL_VERSIONS),
        "answers": _without_version(by_version),
    }


def _without_version(value: Any) -> Any:
    """``value`` with memcli's version (in a serverInfo) set to None."""
    if isinstance(value, list):
        return [_without_version(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: _without_version(v) for k, v in value.items()}
    for key in ("serverInfo", "io.modelcontextprotocol/serverInfo"):
        if isinstance(out.get(key), dict) and "version" in out[key]:
            out[key] = {**out[key], "version": None}
    return out


WIRE_FILE = Path(__file__).with_name("mcp_wire.json")


def wire_text() -> str:
    """``mcp_wire.json`` as :func:`wire` makes it now."""
    return json.dumps(wire(), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # python -m memcli.agent.mcp_capture: write mcp_wire.json anew
    WIRE_FILE.write_text(wire_text(), encoding="utf-8")
