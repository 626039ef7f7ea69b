"""A loopback OpenAI-compatible stub server for tests (stdlib only).

Serves ``POST /v1/embeddings``, ``POST /v1/chat/completions`` and ``GET /v1/models`` on
127.0.0.1 with deterministic answers, logs every request, and can be told to fail, hang or
answer garbage. Embeddings are hashed bags of crudely stemmed words, so texts that share words
get similar vectors.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import struct
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

_WORD = re.compile(r"[a-z0-9]+")


def _stem(token: str) -> str:
    """Crude suffix stripping: enough to make 'indexing', 'indexed', 'indexes' meet."""
    for suffix, min_len in (("ing", 5), ("ed", 4), ("s", 3)):
        if token.endswith(suffix) and len(token) > min_len and not token.endswith("ss"):
            return token[: -len(suffix)]
    return token


def stub_vector(text: str, dims: int) -> list[float]:
    """Deterministic unit vector for ``text``: signed feature hashing of stemmed words."""
    vec = [0.0] * dims
    for token in _WORD.findall(text.lower()):
        digest = hashlib.blake2b(_stem(token).encode(), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        bucket = value % dims
        sign = 1.0 if (value >> 63) & 1 else -1.0
        vec[bucket] += sign
    norm = math.sqrt(sum(x * x for x in vec))
    if norm == 0.0:
        vec = [0.0] * dims
        vec[0] = 1.0
        return vec
    return [x / norm for x in vec]


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # handler threads are joined by server_close()
    block_on_close = True
    stub: StubOpenAI


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.0"  # one request per connection: nothing lingers after stop()
    timeout = 10  # socket timeout so a half-open client cannot pin a thread

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet."""

    def do_GET(self) -> None:
        self.server.stub._handle(self, "GET")

    def do_POST(self) -> None:
        self.server.stub._handle(self, "POST")


class StubOpenAI:
    """OpenAI-compatible HTTP stub on 127.0.0.1; use as a context manager or start()/stop()."""

    def __init__(self, dims: int = 64) -> None:
        self.dims: int = dims
        self.fail_status: int | None = None
        self.fail_times: int = 0
        self.hang_seconds: float = 0.0
        self.garbage: bool = False
        #: "shape" (wrong count, ragged), "nonfinite" (NaN) or "text" (a body that is not JSON)
        self.garbage_kind: str = "shape"
        self.chat_replies: list[str] = []
        self.ignore_dimensions: bool = False  # answer with ``dims`` whatever was asked
        self.requests: list[dict[str, Any]] = []
        self.base_url: str = ""
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)  # notified on every logged request
        self._to_hold = 0  # embedding requests still to hold until release()
        self._released = threading.Event()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # lifecycle -----------------------------------------------------------------------------
    def start(self) -> StubOpenAI:
        """Bind to a free loopback port and serve in a background thread."""
        if self._server is not None:
            return self
        self._stopping.clear()
        server = _Server(("127.0.0.1", 0), _Handler)
        server.stub = self
        self._server = server
        port = server.server_address[1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name=f"stub-openai-{port}"
        )
        self._thread.daemon = True
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake hanging handlers and join every thread."""
        server, thread = self._server, self._thread
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        server.server_close()  # joins handler threads
        if thread is not None:
            thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> StubOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def count(self, path_suffix: str) -> int:
        """Number of logged requests whose path ends with ``path_suffix``."""
        with self._lock:
            return self._count(path_suffix)

    def _count(self, path_suffix: str) -> int:
        return sum(1 for r in self.requests if r["path"].endswith(path_suffix))

    def wait_for(self, path_suffix: str, n: int, timeout: float = 60.0) -> bool:
        """Wait until ``n`` requests ending with ``path_suffix`` arrived; False on timeout."""
        with self._arrived:
            return self._arrived.wait_for(lambda: self._count(path_suffix) >= n, timeout)

    def hold(self, n: int = 1) -> None:
        """Make the next ``n`` embedding requests wait (the client sees a busy provider) until
        :meth:`release`: a test knows a call is in flight without sleeping for it."""
        with self._lock:
            self._to_hold = n
            self._released.clear()

    def release(self) -> None:
        """Let the held requests (and any later ones) be answered."""
        with self._lock:
            self._to_hold = 0
        self._released.set()

    # request handling --------------------------------------------------------------------
    def _handle(self, h: _Handler, method: str) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = h.path.split("?", 1)[0]
        with self._lock:
            # Header names are case-insensitive in HTTP: kept lower-cased, looked up that way.
            headers = {k.lower(): v for k, v in h.headers.items()}
            self.requests.append({"path": path, "body": body, "headers": headers})
            self._arrived.notify_all()
            held = self._to_hold > 0 and path == "/v1/embeddings"
            if held:
                self._to_hold -= 1
            status = self.fail_status
            if status is not None and self.fail_times > 0:
                self.fail_times -= 1
                if self.fail_times == 0:
                    self.fail_status = None
            hang = self.hang_seconds
        if held:
            while not self._released.wait(0.05):
                if self._stopping.is_set():
                    return
        if hang > 0 and self._stopping.wait(hang):
            return
        try:
            if status is not None:
                self._send_error(h, status, "simulated failure")
            elif method == "POST" and path == "/v1/embeddings":
                self._embeddings(h, body)
            elif method == "POST" and path == "/v1/chat/completions":
                self._chat(h, body)
            elif method == "GET" and path == "/v1/models":
                self._send_json(
                    h,
                    200,
                    {
                        "object": "list",
                        "data": [
                            {"id": name, "object": "model", "created": 0, "owned_by": "stub"}
                            for name in ("stub-embed", "stub-chat")
                        ],
                    },
                )
            else:
                self._send_error(h, 404, f"no route for {method} {path}")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (e.g. after a timeout)

    def _embeddings(self, h: _Handler, body: Any) -> None:
        if not isinstance(body, dict) or "input" not in body:
            self._send_error(h, 400, "missing 'input'")
            return
        inp = body["input"]
        texts = [inp] if isinstance(inp, str) else inp
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            self._send_error(h, 400, "'input' must be a string or a list of strings")
            return
        dims = self.dims if self.ignore_dimensions else body.get("dimensions") or self.dims
        if not isinstance(dims, int) or dims <= 0:
            self._send_error(h, 400, "'dimensions' must be a positive integer")
            return
        vectors = [stub_vector(t, dims) for t in texts]
        if self.garbage:
            if self.garbage_kind == "text":
                self._send_raw(h, 200, b"<html>definitely not json</html>", "application/json")
                return
            if self.garbage_kind == "nonfinite":
                vectors = [[float("nan")] * dims for _ in vectors]
            else:  # "shape": one vector missing, the rest ragged
                vectors = [v[: max(1, dims - i)] for i, v in enumerate(vectors[:-1])] or [[]]
        b64 = body.get("encoding_format") == "base64"
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": (
                    base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode() if b64 else v
                ),
            }
            for i, v in enumerate(vectors)
        ]
        data.reverse()  # clients must sort by index
        tokens = sum(len(_WORD.findall(t.lower())) for t in texts)
        self._send_json(
            h,
            200,
            {
                "object": "list",
                "data": data,
                "model": body.get("model", "stub-embed"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    def _chat(self, h: _Handler, body: Any) -> None:
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            self._send_error(h, 400, "missing 'messages'")
            return
        if self.garbage:
            if self.garbage_kind == "text":
                self._send_raw(h, 200, b"<html>definitely not json</html>", "application/json")
                return
            content: str | None = None
        else:
            with self._lock:
                content = self.chat_replies.pop(0) if self.chat_replies else '{"facts": []}'
        self._send_json(
            h,
            200,
            {
                "id": f"chatcmpl-stub-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "stub-chat"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            },
        )

    # responses -----------------------------------------------------------------------------
    @staticmethod
    def _send_raw(h: _Handler, status: int, payload: bytes, ctype: str) -> None:
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(payload)))
        h.send_header("Connection", "close")
        h.end_headers()
        h.wfile.write(payload)

    def _send_json(self, h: _Handler, status: int, obj: Any) -> None:
        self._send_raw(h, status, json.dumps(obj).encode(), "application/json")

    def _send_error(self, h: _Handler, status: int, message: str) -> None:
        kind = {
            400: "invalid_request_error",
            401: "authentication_error",
            403: "permission_error",
            404: "not_found_error",
            429: "rate_limit_error",
        }.get(status, "server_error")
        self._send_json(
            h,
            status,
            {"error": {"message": message, "type": kind, "param": None, "code": str(status)}},
        )


@pytest.fixture
def openai_stub() -> Iterator[StubOpenAI]:
    """A started StubOpenAI, stopped (threads joined) after the test."""
    with StubOpenAI() as stub:
        yield stub
