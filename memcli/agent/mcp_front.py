"""``memcli mcp``'s front: the handshake answered at once, the MCP SDK loaded behind it.

Importing the SDK takes one to several seconds, and neither Claude Code nor Codex waits that
long: a server still connecting is left out of the first model request. So the front answers
what a client asks first (``initialize`` or ``server/discover``, then the lists of tools,
prompts and resources) from ``mcp_wire.json``: what the SDK server answers to them for each
protocol version it speaks, captured by :func:`memcli.agent.mcp_capture.wire` (a test keeps
the file current), while a thread imports the SDK and builds the real server
(:mod:`memcli.agent.mcp_server`). Once it is up, every message goes to it: first the
client's ``initialize`` again, if it sent one (its answer is dropped: the client has one),
and what arrived meanwhile, then the rest as it comes. Tool calls are only ever answered by
the SDK server.

The protocol's descriptors are taken from fds 0 and 1; fd 0 then reads the null device and
fd 1 writes to stderr, so a child process or a stray print cannot touch the wire.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import sys
import threading
from importlib import resources
from typing import IO, Any

from memcli.agent.mcp_protocol import (
    LISTEN_FOR,
    LISTENING,
    SERVER_META,
    SUBSCRIPTION,
    VERSION_META,
)
from memcli.version import __version__

__all__ = ["REPLAY_ID", "VERSION_META", "serve"]

#: The id under which the client's ``initialize`` is replayed to the SDK server.
REPLAY_ID = "memcli-front-initialize"


def load_wire() -> dict[str, Any]:
    """The SDK server's answers to the handshake, as captured in ``mcp_wire.json``."""
    wire: dict[str, Any] = json.loads(
        resources.files("memcli.agent").joinpath("mcp_wire.json").read_text("utf-8")
    )
    return wire


class Wire:
    """The protocol's stdout: whole lines, one writer at a time, the SDK's answer to the
    replayed ``initialize`` dropped."""

    def __init__(self, fd: int) -> None:
        self._out = os.fdopen(fd, "wb", buffering=0)
        self._lock = threading.Lock()
        self._pending = ""
        self.replayed = False  #: the SDK server's answer to the replay was seen
        #: subscriptions acknowledged here (their ids as JSON): the SDK server's are dropped
        self.acknowledged: set[str] = set()

    def send(self, message: dict[str, Any]) -> None:
        self.write_line(json.dumps(message, separators=(",", ":"), ensure_ascii=False))

    def write_line(self, line: str) -> None:
        with self._lock:
            self._out.write(line.encode("utf-8") + b"\n")

    # the text-file face the SDK's stdio transport writes through
    def write(self, text: str) -> int:
        self._pending += text
        return len(text)

    def flush(self) -> None:
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            if not self.replayed and f'"{REPLAY_ID}"' in line:
                if json.loads(line).get("id") == REPLAY_ID:
                    self.replayed = True
                    continue
            if self.acknowledged and LISTENING in line:
                said = json.loads(line)
                key = json.dumps(said.get("params", {}).get("_meta", {}).get(SUBSCRIPTION))
                if said.get("method") == LISTENING and key in self.acknowledged:
                    self.acknowledged.discard(key)
                    continue
            self.write_line(line)


class Front:
    """Reads the client's messages; answers the handshake until the SDK server is up, then
    hands every message to it."""

    def __init__(self, workspace: str | None, wire: Wire) -> None:
        self.workspace = workspace
        self.wire = wire
        self.answers = load_wire()
        self._lock = threading.Lock()
        self._held: list[bytes] = []  #: messages for the SDK server before it is up
        self._initialize: bytes | None = None  #: the client's initialize, answered here
        self._agreed: str | None = None  #: the protocol version it agreed
        self._to_sdk: queue.SimpleQueue[bytes | None] | None = None
        self.failed: str | None = None  #: why the SDK server could not start
        self.engine: Any = None
        self.done = threading.Event()
        #: no workspace here (user scope, a folder never initialised): no tools, no word
        self.bare = workspace is None and not _has_workspace()

    # -- the client's side ------------------------------------------------------------------
    def receive(self, line: bytes) -> None:
        """One line from the client."""
        with self._lock:
            if self._to_sdk is not None:
                self._to_sdk.put(line)
                return
            try:
                message = json.loads(line)
            except ValueError:
                message = None
            asks = isinstance(message, dict) and "id" in message
            answer = self._known(message, line) if asks and self.failed is None else None
            if answer is not None:
                self.wire.send(answer)
            elif self.failed is not None and asks:
                self.wire.send(self._error(message))
            else:
                self._held.append(line)

    def _known(self, message: dict[str, Any], line: bytes) -> dict[str, Any] | None:
        """The SDK server's answer to ``message`` as ``mcp_wire.json`` has it, or None."""
        method = message.get("method")
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        meta = params.get("_meta")
        version = meta.get(VERSION_META) if isinstance(meta, dict) else None
        if version is None and method == "initialize":
            versions = self.answers["handshake_versions"]
            asked = params.get("protocolVersion")
            version = self._agreed = asked if asked in versions else versions[-1]
            self._initialize = line
        version = version or self._agreed
        known = self.answers["answers"].get(version, {}).get(method)
        if known is None:
            return None
        if self.bare and method in ("initialize", "tools/list"):
            known = _bare(known, method)
        if method == "subscriptions/listen":
            # acknowledged here, held for the SDK server, whose own acknowledgement is dropped
            if params.get("notifications") != LISTEN_FOR:
                return None
            self.wire.acknowledged.add(json.dumps(message["id"]))
            self._held.append(line)
            note = known["notification"]
            meta = {**note["params"]["_meta"], SUBSCRIPTION: message["id"]}
            return {"jsonrpc": "2.0", **note, "params": {**note["params"], "_meta": meta}}
        return {"jsonrpc": "2.0", "id": message["id"], **_stamped(known)}

    def _error(self, message: dict[str, Any]) -> dict[str, Any]:
        error = {"code": -32603, "message": f"memcli mcp cannot serve: {self.failed}"}
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}

    def end(self) -> None:
        """The client closed its side."""
        with self._lock:
            if self._to_sdk is not None:
                self._to_sdk.put(None)
            else:
                self.done.set()

    # -- the SDK's side ---------------------------------------------------------------------
    def start(self) -> None:
        threading.Thread(target=self._run_sdk, name="memcli-mcp-sdk", daemon=True).start()

    def _run_sdk(self) -> None:
        import logging  # with the SDK, after the handshake

        logging.basicConfig(
            stream=sys.stderr, level=logging.WARNING, format="memcli mcp: %(message)s"
        )
        try:
            import memcli.agent.mcp_server as mcp_server  # the SDK: seconds to import

            self.engine = mcp_server.Engine(self.workspace)
            server = mcp_server.build_server(self.engine, tools=not self.bare)
        except Exception as exc:  # an SDK that cannot load: say so to every request
            print(f"memcli mcp: cannot start the MCP server: {exc}", file=sys.stderr)
            with self._lock:
                self.failed = f"{type(exc).__name__}: {exc}"
                held, self._held = self._held, []
                for line in held:
                    try:
                        message = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(message, dict) and "id" in message:
                        self.wire.send(self._error(message))
            return
        read, write = os.pipe()
        feed: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        with self._lock:
            if self._initialize is not None:
                replay = json.loads(self._initialize)
                replay["id"] = REPLAY_ID
                feed.put(json.dumps(replay).encode())
            else:
                self.wire.replayed = True
            for line in self._held:
                feed.put(line)
            self._held = []
            ended = self.done.is_set()
            self._to_sdk = feed
        if ended:
            feed.put(None)
        threading.Thread(target=_pump, args=(feed, write), daemon=True).start()
        try:
            with os.fdopen(read, "r", encoding="utf-8", errors="replace") as stdin:
                mcp_server.run_on(server, stdin, self.wire)
        finally:  # ended, or failed: the process must not wait for it
            self.done.set()


def _has_workspace() -> bool:
    """Whether the folder memcli runs in has a workspace (``$MEMCLI_WORKSPACE`` counts)."""
    from memcli.errors import MemcliError
    from memcli.notes.workspace import find_workspace  # paths only: no index, no settings

    try:
        find_workspace(None)
    except MemcliError:
        return False
    return True


def _bare(answer: dict[str, Any], method: str) -> dict[str, Any]:
    """``answer`` as a server with no workspace gives it: no tools, no instructions."""
    result = dict(answer.get("result") or {})
    if method == "tools/list":
        result["tools"] = []
    else:
        result.pop("instructions", None)
    return {**answer, "result": result}


def _stamped(answer: dict[str, Any]) -> dict[str, Any]:
    """``answer`` with memcli's version in its serverInfo (``mcp_wire.json`` leaves it out)."""
    result = answer.get("result")
    if not isinstance(result, dict):
        return answer
    result = dict(result)
    if isinstance(result.get("serverInfo"), dict):
        result["serverInfo"] = {**result["serverInfo"], "version": __version__}
    meta = result.get("_meta")
    if isinstance(meta, dict) and isinstance(meta.get(SERVER_META), dict):
        result["_meta"] = {**meta, SERVER_META: {**meta[SERVER_META], "version": __version__}}
    return {**answer, "result": result}


def _pump(feed: queue.SimpleQueue[bytes | None], fd: int) -> None:
    """Lines from ``feed`` into the SDK server's stdin, until None."""
    with os.fdopen(fd, "wb", buffering=0) as pipe:
        while (line := feed.get()) is not None:
            pipe.write(line if line.endswith(b"\n") else line + b"\n")


def _claim_stdio() -> tuple[IO[bytes], int]:
    """The protocol's stdin and stdout descriptors; fds 0 and 1 no longer reach them."""
    proto_in, proto_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return os.fdopen(proto_in, "rb"), proto_out


def serve(workspace: str | None) -> int:
    """Serve over stdio until the client closes its side or sends SIGINT (exit 130); a call
    still running does not keep the process alive."""
    stdin, out = _claim_stdio()
    front = Front(workspace, Wire(out))

    def interrupted(signum: int, frame: Any) -> None:
        _leave(front, 130)

    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:  # ignored: leave it so
        signal.signal(signal.SIGINT, interrupted)
    front.start()
    for line in iter(stdin.readline, b""):
        if line.strip():
            front.receive(line)
    front.end()
    front.done.wait()
    _leave(front, 0)
    return 0


def _leave(front: Front, code: int) -> None:
    if front.engine is not None:
        front.engine.close()
    sys.stderr.flush()
    os._exit(code)  # worker threads still in a call must not outlive the client
