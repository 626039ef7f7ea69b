"""Conversations given to ``memcli flush``: parsing every supported format, and splitting.

Accepted input (UTF-8 text):

- a JSON array of ``{"role", "content"}`` messages (OpenAI style); ``content`` is a string,
  ``null`` (skipped) or a list of parts (strings or ``{"type": "text", "text": ...}`` objects;
  parts of other types such as images are ignored);
- a JSON object with such a ``messages`` array (a chat request body);
- JSON Lines: one message object per line;
- a plain transcript: lines starting ``user:``, ``assistant:``, ``system:``, ``tool:``,
  ``human:`` or ``ai:`` begin a message, other lines continue it;
- free text with no role markers: one user message.

Input that looks like JSON but is not valid, messages without a role, and binary data are
refused with :class:`BadInput` (exit 2). Empty input and messages without text are not errors:
they yield no messages.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from memcli.errors import BadInput

__all__ = ["Message", "parse", "split_for_context"]

_ROLE_LINE = re.compile(
    r"^[ \t]*(?:\*\*)?(user|assistant|system|tool|human|ai|developer)"
    r"(?:\*\*)?[ \t]*:(?:\*\*)?[ \t]?(.*)$",
    re.IGNORECASE,
)
# Input that does not parse as JSON is still meant as JSON (and refused) when it starts like
# JSON: "[{", "[]", '["', "[[", '{"' or "{}". Free text that merely starts with a bracket
# ("[draft] notes") is a transcript.
_JSON_ARRAY = re.compile(r'^\[\s*[\[{\]"]')
_JSON_OBJECT = re.compile(r'^\{\s*["}]')
_ALIASES = {"human": "user", "ai": "assistant"}
_TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})
#: Characters a message costs besides its content when rendered for the model.
MESSAGE_OVERHEAD = 32
#: Smallest part size :func:`split_for_context` accepts.
MIN_PART_CHARS = 100


@dataclass(frozen=True)
class Message:
    """One turn of a conversation."""

    role: str
    content: str


def parse(text: str) -> list[Message]:
    """Messages of a conversation in any supported format (see the module docstring)."""
    if "\x00" in text:
        raise BadInput("the conversation is binary data, not text")
    body = text.lstrip("\ufeff").strip()
    if not body:
        return []
    if body[0] in "[{":
        try:
            data = json.loads(body)
        except ValueError as exc:
            if body[0] == "{" and _first_line_is_json(body):
                return _from_json_lines(body)
            if _JSON_ARRAY.match(body) or _JSON_OBJECT.match(body):
                raise BadInput(
                    f"the conversation is not valid JSON: {exc}",
                    hint="give a JSON array of {role, content} messages, JSON Lines, or a "
                    "transcript",
                ) from None
        else:
            return _from_json(data)
    return _from_transcript(body)


def _from_json(data: Any) -> list[Message]:
    if isinstance(data, list):
        return _messages(data, "item")
    if isinstance(data, dict):
        if isinstance(data.get("messages"), list):
            return _messages(data["messages"], "message")
        return _messages([data], "line")
    raise BadInput(  # pragma: no cover - a text starting with '[' or '{' is a list or object
        "the conversation JSON is not a list of messages"
    )


def _first_line_is_json(body: str) -> bool:
    try:
        return isinstance(json.loads(body.splitlines()[0]), dict)
    except ValueError:
        return False


def _from_json_lines(body: str) -> list[Message]:
    items: list[Any] = []
    for n, line in enumerate(body.splitlines(), 1):
        if not line.strip():
            continue
        try:
            items.append(json.loads(line))
        except ValueError as exc:
            raise BadInput(
                f"line {n} of the conversation is not valid JSON: {exc}",
                hint="JSON Lines input needs one {role, content} object per line",
            ) from None
    return _messages(items, "line")


def _messages(items: list[Any], what: str) -> list[Message]:
    out: list[Message] = []
    for n, item in enumerate(items, 1):
        if not isinstance(item, dict):
            raise BadInput(
                f"conversation {what} {n} is not a message object",
                hint='each message is {"role": "...", "content": "..."}',
            )
        role = item.get("role")
        if not isinstance(role, str) or not role.strip():
            raise BadInput(f"conversation {what} {n} has no role", hint='add "role": "user"')
        content = _content(item.get("content"), what, n)
        if content.strip():
            out.append(Message(_role(role), content.strip()))
    return out


def _content(value: Any, what: str, n: int) -> str:
    if value is None:
        return ""  # e.g. an assistant turn that only called tools
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts: list[str] = []
        for part in value:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                kind = part.get("type", "text")
                if kind in _TEXT_PART_TYPES:
                    text = part.get("text")
                    if not isinstance(text, str):
                        raise BadInput(f"conversation {what} {n} has a text part without text")
                    texts.append(text)
            else:
                raise BadInput(f"conversation {what} {n} has a content part of the wrong type")
        return "\n".join(t for t in texts if t.strip())
    raise BadInput(
        f"conversation {what} {n} has content that is neither text nor a list of parts"
    )


def _role(role: str) -> str:
    name = role.strip().lower()
    return _ALIASES.get(name, name)


def _from_transcript(body: str) -> list[Message]:
    lines = body.splitlines()
    if not any(_ROLE_LINE.match(line) for line in lines):
        return [Message("user", body)]
    out: list[Message] = []
    role = "user"
    buf: list[str] = []

    def close() -> None:
        content = "\n".join(buf).strip()
        if content:
            out.append(Message(role, content))

    for line in lines:
        m = _ROLE_LINE.match(line)
        if m:
            close()
            role, buf = _role(m.group(1)), [m.group(2)]
        else:
            buf.append(line)
    close()
    return out


def message_cost(message: Message) -> int:
    """Characters a message takes in a request (content plus a fixed overhead)."""
    return len(message.content) + len(message.role) + MESSAGE_OVERHEAD


def split_for_context(messages: list[Message], max_chars: int) -> list[list[Message]]:
    """Pack messages, in order, into parts of at most ``max_chars`` characters each.

    A message longer than a part is cut at paragraph, line or word boundaries (hard cuts
    only when a single word is longer) and its pieces keep the message's role. An empty
    conversation has no parts.
    """
    if max_chars < MIN_PART_CHARS:
        raise ValueError(f"max_chars must be at least {MIN_PART_CHARS}")
    parts: list[list[Message]] = []
    current: list[Message] = []
    size = 0
    room = max(1, max_chars - MESSAGE_OVERHEAD)
    for message in messages:
        pieces = [message]
        if message_cost(message) > max_chars:
            width = max(1, room - len(message.role))
            pieces = [Message(message.role, p) for p in _cut(message.content, width)]
        for piece in pieces:
            cost = message_cost(piece)
            if current and size + cost > max_chars:
                parts.append(current)
                current, size = [], 0
            current.append(piece)
            size += cost
    if current:
        parts.append(current)
    return parts


def _cut(text: str, width: int) -> list[str]:
    """Pieces of ``text`` of at most ``width`` characters, cut at the widest boundary."""
    out: list[str] = []
    rest = text.strip()
    while len(rest) > width:
        window = rest[: width + 1]
        cut = width  # a hard cut when no boundary is found
        for sep in ("\n\n", "\n", " "):
            at = window.rfind(sep)
            if at > width // 2 or (sep == " " and at > 0):
                cut = at
                break
        piece, rest = rest[:cut].strip(), rest[cut:].strip()
        if piece:
            out.append(piece)
    if rest:
        out.append(rest)
    return out
