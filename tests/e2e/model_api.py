"""A loopback stand-in for the model APIs the agent CLIs call: Anthropic's Messages API
(Claude Code), OpenAI's Responses API (Codex) and Google's Gemini API (Gemini CLI:
``generateContent``, ``streamGenerateContent``, ``countTokens``), streamed as server-sent
events where the client asks so.

It records every request and answers by a small script: when the request offers memcli's
``search`` tool and :attr:`ModelAPI.tool_query` is set, the first answer of a turn calls it;
once a tool result comes back the answer is :attr:`ModelAPI.final_text`; anything else (the
agents' own side requests: titles, summaries, compaction) is answered with a short text.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MEMCLI_SEARCH = "mcp__memcli__search"
#: The tools that read one file: Claude Code's, Gemini CLI's, Codex's shell (``cat``).
READERS = ("Read", "read_file", "exec_command")


def _last_tool_anthropic(messages: list[dict[str, Any]]) -> str | None:
    """The tool whose result the last message carries (Messages API), or None."""
    last = messages[-1].get("content") if messages else None
    results = (
        [b.get("tool_use_id") for b in last or [] if isinstance(b, dict)]
        if isinstance(last, list)
        else []
    )
    for message in reversed(messages[:-1]):
        for block in message.get("content") or []:
            if (
                isinstance(block, dict)
                and block.get("type") == "tool_use"
                and block.get("id") in results
            ):
                return str(block.get("name"))
    return None


def _openai_tool_names(tools: list[Any]) -> list[str]:
    """The names of the tools a Responses request offers; a namespace's tools as
    ``NAMESPACE__NAME`` (Codex puts an MCP server's tools in a namespace ``mcp__SERVER``)."""
    names = []
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            names += [f"{tool.get('name')}__{t.get('name')}" for t in tool.get("tools") or []]
        elif tool.get("name"):
            names.append(str(tool["name"]))
    return names


def _last_tool_openai(items: list[dict[str, Any]]) -> str | None:
    """The tool whose output the last input item is (Responses API), or None."""
    if not items or items[-1].get("type") != "function_call_output":
        return None
    call = items[-1].get("call_id")
    for item in reversed(items):
        if item.get("type") == "function_call" and item.get("call_id") == call:
            space = item.get("namespace")
            return f"{space}__{item.get('name')}" if space else str(item.get("name"))
    return "?"


def _last_tool_gemini(contents: list[dict[str, Any]]) -> str | None:
    """The tool whose response the last content carries (Gemini API), or None."""
    parts = contents[-1].get("parts") if contents else None
    for part in parts or []:
        if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
            return str(part["functionResponse"].get("name"))
    return None


class ModelAPI:
    """Serves both APIs on one loopback port until :meth:`close`."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []  #: {"path", "body"} of each POST
        self.tool_query: str | None = None  #: call memcli's search tool with this query
        self.search_tool = MEMCLI_SEARCH  #: its name (a plugin's server names it otherwise)
        self.read_path = ""  #: a file the model reads with its agent's tool (READERS), then answers
        self.final_text = "Done."
        self.fail_with: int | None = None  #: answer every request with this HTTP status
        #: the answer to memcli's own question for facts (a request offering no tool whose
        #: text asks for ``{"facts": ...}``: memcli running the agent CLI as its model)
        self.facts_reply: str | Callable[[dict[str, Any]], str] | None = None
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                self._json(200, {"data": [], "models": []})

            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(size) if size else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"raw": raw.decode("utf-8", "replace")}
                path = self.path.split("?", 1)[0]
                with api._lock:
                    api.requests.append({"path": path, "body": body})
                if api.fail_with is not None:
                    self._json(api.fail_with, {"error": {"message": "down", "type": "api_error"}})
                elif path.endswith("/messages/count_tokens"):
                    self._json(200, {"input_tokens": 100})
                elif path.endswith("/messages"):
                    self._stream(api.anthropic(body))
                elif path.endswith("/responses"):
                    self._stream(api.openai(body))
                elif path.endswith(":countTokens"):
                    self._json(200, {"totalTokens": 100})
                elif path.endswith(":streamGenerateContent"):
                    self._stream(("", chunk) for chunk in [api.gemini(body)])
                elif path.endswith(":generateContent"):
                    self._json(200, api.gemini(body))
                else:
                    self._json(404, {"error": {"message": f"no {path} here"}})

            def _json(self, status: int, data: dict[str, Any]) -> None:
                out = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def _stream(self, events: Iterator[tuple[str, dict[str, Any]]]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for name, data in events:
                    head = f"event: {name}\n" if name else ""
                    self.wfile.write(f"{head}data: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -- what was sent ------------------------------------------------------------------------
    def bodies(self, kind: str) -> list[dict[str, Any]]:
        """The bodies of the requests to ``/messages`` or ``/responses``, in order."""
        with self._lock:
            return [r["body"] for r in self.requests if r["path"].endswith(f"/{kind}")]

    # -- the script -------------------------------------------------------------------------
    def _reply(self, tools: list[str], last_tool: str | None, offered: str) -> tuple[str, str]:
        """("text", text) or ("tool", name) for a request offering ``tools`` (by name; any
        tool name in ``offered``, the request's text, may be loaded by ToolSearch) after a
        result of ``last_tool``."""
        search = next((t for t in tools if "memcli" in t and t.endswith("search")), None)
        reader = next((t for t in READERS if t in tools), None)
        if self.read_path and reader:  # read a file once, then answer
            return ("text", self.final_text) if last_tool == reader else ("tool", reader)
        if last_tool is not None and "memcli" in last_tool:
            return "text", self.final_text
        if not self.tool_query:
            return "text", self.final_text if tools else "ok"
        if search:
            return "tool", search
        if last_tool == "ToolSearch":  # it loaded the tool: call it
            return "tool", self.search_tool
        if "ToolSearch" in tools and self.search_tool in offered:  # a deferred tool: load it
            return "tool", "ToolSearch"
        return "text", self.final_text if tools else "ok"

    def anthropic(self, body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        tools = [t.get("name", "") for t in body.get("tools") or []]
        messages = body.get("messages") or [{}]
        kind, value = self._reply(tools, _last_tool_anthropic(messages), json.dumps(body))
        if self.asks_for_facts(body, tools):
            kind, value = "text", self._facts(body)
        n = next(self._ids)
        usage = {"input_tokens": 10, "output_tokens": 5}
        yield (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_{n}",
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model", "stub"),
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": usage,
                },
            },
        )
        if kind == "tool":
            block = {"type": "tool_use", "id": f"toolu_{n}", "name": value, "input": {}}
            select = {"query": f"select:{self.search_tool}", "max_results": 1}
            args = self._args() if value != "ToolSearch" else select
            args = self._read_args(value) if value == "Read" else args
            delta = {"type": "input_json_delta", "partial_json": json.dumps(args)}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": value or ""}
            stop = "end_turn"
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        )
        yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": 0}
        yield (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        )
        yield "message_stop", {"type": "message_stop"}

    def openai(self, body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        tools = _openai_tool_names(body.get("tools") or [])
        items = [i for i in body.get("input") or [] if isinstance(i, dict)]
        kind, value = self._reply(tools, _last_tool_openai(items), "")
        if self.asks_for_facts(body, tools):
            kind, value = "text", self._facts(body)
        n = next(self._ids)
        rid = f"resp_{n}"
        if kind == "tool":
            space, _, name = value.rpartition("__")
            item: dict[str, Any] = {
                "type": "function_call",
                "id": f"fc_{n}",
                "call_id": f"call_{n}",
                "name": name,
                "arguments": json.dumps(
                    self._read_args(name) if value in READERS else self._args()
                ),
                "status": "completed",
            }
            if space:
                item["namespace"] = space
        else:
            item = {
                "type": "message",
                "id": f"msg_{n}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": value or "", "annotations": []}],
            }
        base = {"id": rid, "object": "response", "model": body.get("model", "stub")}
        yield (
            "response.created",
            {
                "type": "response.created",
                "response": {**base, "status": "in_progress", "output": []},
            },
        )
        yield (
            "response.output_item.added",
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": item,
            },
        )
        if kind == "text":
            yield (
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": 0,
                    "content_index": 0,
                    "delta": value or "",
                },
            )
        yield (
            "response.output_item.done",
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": item,
            },
        )
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        yield (
            "response.completed",
            {
                "type": "response.completed",
                "response": {**base, "status": "completed", "output": [item], "usage": usage},
            },
        )

    def gemini(self, body: dict[str, Any]) -> dict[str, Any]:
        """One ``GenerateContentResponse`` (the whole answer, or one chunk of a stream)."""
        tools = [
            str(f.get("name"))
            for t in body.get("tools") or []
            if isinstance(t, dict)
            for f in t.get("functionDeclarations") or []
        ]
        contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]
        kind, value = self._reply(tools, _last_tool_gemini(contents), "")
        if self.asks_for_facts(body, tools):
            kind, value = "text", self._facts(body)
        if kind == "tool":
            args = self._read_args(value) if value in READERS else self._args()
            part: dict[str, Any] = {"functionCall": {"name": value, "args": args}}
        else:
            part = {"text": value or ""}
        return {
            "candidates": [
                {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": 10,
                "candidatesTokenCount": 5,
                "totalTokenCount": 15,
            },
            "modelVersion": "stub",
        }

    def asks_for_facts(self, body: dict[str, Any], tools: list[str]) -> bool:
        """Whether ``body`` is memcli's question for facts (see :attr:`facts_reply`)."""
        if self.facts_reply is None or any("memcli" in t for t in tools):
            return False
        return '{\\"facts\\": [{\\"text\\"' in json.dumps(body)

    def _facts(self, body: dict[str, Any]) -> str:
        reply = self.facts_reply
        return reply(body) if callable(reply) else str(reply)

    def memcli_questions(self) -> list[dict[str, Any]]:
        """The bodies of memcli's questions for facts, in order."""
        with self._lock:
            bodies = [r["body"] for r in self.requests]
        return [b for b in bodies if '{\\"facts\\": [{\\"text\\"' in json.dumps(b)]

    def _args(self) -> dict[str, Any]:
        return {"query": self.tool_query or ""}

    def _read_args(self, tool: str) -> dict[str, Any]:
        """The arguments of ``tool`` (:data:`READERS`) reading :attr:`read_path`."""
        if tool == "exec_command":
            return {"cmd": f"cat {self.read_path}"}
        return {"file_path": self.read_path}
