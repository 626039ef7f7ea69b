"""Conversations given to ``memcli flush``: parsing every supported format, and splitting.

Accepted input (UTF-8 text):

- a JSON array of ``{"role", "content"}`` messages (OpenAI style); ``content`` is a string,
  ``null`` (skipped) or a list of parts (strings or ``{"type": "text", "text": ...}`` objects;
  parts of other types such as images are ignored);
- a JSON object with such a ``messages`` array (a chat request body);
- JSON Lines: one message object per line;
- a coding agent's session file: a Claude Code transcript or a Codex rollout (JSON Lines of
  records, recognised by their shape; :mod:`memcli.flush.transcripts`): the user's and the
  assistant's text is kept, tool calls, tool results, thinking and summaries are dropped;
- a plain transcript: lines starting ``user:``, ``assistant:``, ``system:``, ``tool:``,
  ``human:`` or ``ai:`` begin a message, other lines continue it;
- free text with no role markers: one ``transcript`` message (``user`` for :func:`parse`).

Input that looks like JSON but is not valid, JSON that is not a list of messages (a number, an
object without ``messages``, items without ``role`` or ``content``, a role that is not a
string), an invalid line of JSON Lines, and binary data are refused with :class:`BadInput`
(exit 2). Empty input and messages without text are not errors: they yield no messages.

Text that starts with ``[`` or ``{`` only counts as JSON when it starts like JSON (``[{``,
``[]``, ``["``, ``[[``, ``{"`` or ``{}``), so notes such as ``[draft] ...`` are free text.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from memcli.errors import BadInput
from memcli.flush.transcripts import agent_format, agent_turns, strip_recalled

__all__ = [
    "Message",
    "conversation_hash",
    "parse",
    "parse_conversation",
    "render_transcript",
    "split_for_context",
]

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


#: Role of free text that has no role markers.
TRANSCRIPT = "transcript"
_JSON_TYPE_NAMES = {bool: "a boolean", int: "a number", float: "a number", str: "a string"}
_JSON_HINT = 'give a JSON array of {"role", "content"} messages, JSON Lines, or a transcript'


@dataclass(frozen=True)
class Message:
    """One turn of a conversation."""

    role: str  # "user", "assistant", "system", "tool", or "transcript" for free text
    content: str


def parse_conversation(raw: str) -> list[Message]:
    """Messages of a conversation in any supported format (see the module docstring)."""
    if "\x00" in raw:
        raise BadInput("the conversation is binary data, not text")
    body = raw.lstrip("\ufeff").strip()
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
                    f"the conversation is not valid JSON: {exc}", hint=_JSON_HINT
                ) from None
        else:
            return _from_json(data)
    elif body[0] in '"-0123456789tfn':
        try:
            scalar = json.loads(body)
        except ValueError:
            pass
        else:
            kind = "null" if scalar is None else _JSON_TYPE_NAMES.get(type(scalar), "a value")
            raise BadInput(
                f"the conversation is JSON {kind}, not a list of messages", hint=_JSON_HINT
            )
    return _from_transcript(body)


def parse(text: str) -> list[Message]:
    """Like :func:`parse_conversation`, with free text as a ``user`` message (what flush
    sends) and memcli's own recalled context taken out (it is not new knowledge)."""
    out: list[Message] = []
    for m in parse_conversation(text):
        content = strip_recalled(m.content).strip()
        if content:
            out.append(Message("user" if m.role == TRANSCRIPT else m.role, content))
    return out


def _from_json(data: Any) -> list[Message]:
    if isinstance(data, list):
        return _messages(list(enumerate(data, 1)), "item")
    if isinstance(data, dict):
        if "messages" in data:
            if not isinstance(data["messages"], list):
                raise BadInput(
                    '"messages" in the conversation JSON is not an array', hint=_JSON_HINT
                )
            return _messages(list(enumerate(data["messages"], 1)), "message")
        if "role" in data and agent_format([data]) is None:  # JSON Lines with one line
            return _messages([(1, data)], "line")
        if agent_format([data]) is not None:  # an agent's session file of one record
            return _from_records([data])
        raise BadInput('the conversation JSON object has no "messages" array', hint=_JSON_HINT)
    raise BadInput(  # pragma: no cover - a text starting with '[' or '{' is a list or object
        "the conversation JSON is not a list of messages"
    )


def _first_line_is_json(body: str) -> bool:
    try:
        return isinstance(json.loads(body.splitlines()[0]), dict)
    except ValueError:
        return False


def _from_json_lines(body: str) -> list[Message]:
    items: list[tuple[int, Any]] = []
    lines = body.splitlines()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            items.append((n, json.loads(line)))
        except ValueError as exc:
            if n == len(lines) and agent_format([item for _, item in items[:20]]):
                break  # an agent's session file read while its last record is being written
            raise BadInput(
                f"line {n} of the conversation is not valid JSON: {exc}",
                hint="JSON Lines input needs one {role, content} object per line",
            ) from None
    if agent_format([item for _, item in items[:20]]) is not None:
        return _from_records([item for _, item in items])
    return _messages(items, "line")


def _from_records(records: list[Any]) -> list[Message]:
    """The turns of a coding agent's session file (:mod:`memcli.flush.transcripts`)."""
    kind = agent_format(records[:20])
    assert kind is not None
    return [Message(role, text) for role, text in agent_turns(kind, records)]


def _messages(items: list[tuple[int, Any]], what: str) -> list[Message]:
    """Messages from ``(number, item)`` pairs; ``what`` names the number in errors."""
    out: list[Message] = []
    shape = 'each message is {"role": "...", "content": "..."}'
    for n, item in items:
        if not isinstance(item, dict):
            raise BadInput(f"conversation {what} {n} is not a message object", hint=shape)
        role = item.get("role")
        if role is None or (isinstance(role, str) and not role.strip()):
            raise BadInput(f"conversation {what} {n} has no role", hint='add "role": "user"')
        if not isinstance(role, str):
            raise BadInput(f"conversation {what} {n} has a role that is not a string", hint=shape)
        if "content" not in item:
            raise BadInput(f"conversation {what} {n} has no content", hint=shape)
        content = _content(item["content"], what, n)
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
    raise BadInput(f"conversation {what} {n} has content that is neither text nor a list of parts")


def _role(role: str) -> str:
    name = role.strip().lower()
    return _ALIASES.get(name, name)


def _from_transcript(body: str) -> list[Message]:
    lines = body.splitlines()
    if not any(_ROLE_LINE.match(line) for line in lines):
        return [Message(TRANSCRIPT, "\n".join(lines))]
    out: list[Message] = []
    role = TRANSCRIPT  # text before the first role line
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


def conversation_hash(messages: list[Message]) -> str:
    """SHA-256 (hex) of the conversation: same turns in any format or spacing, same hash.

    The canonical form is compact JSON of ``[role, content]`` pairs with the role lower-cased
    and every run of whitespace in the content collapsed to one space.
    """
    canon = [[m.role.strip().lower(), " ".join(m.content.split())] for m in messages]
    data = json.dumps(canon, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def render_transcript(messages: list[Message]) -> str:
    """``role: content`` blocks separated by blank lines."""
    return "\n\n".join(f"{m.role}: {m.content}" for m in messages)


def message_cost(message: Message) -> int:
    """Characters a message takes in a request (content plus a fixed overhead)."""
    return len(message.content) + len(message.role) + MESSAGE_OVERHEAD


def split_for_context(messages: list[Message], max_chars: int) -> list[list[Message]]:
    """Pack messages, in order, into parts of at most ``max_chars`` characters each.

    A part's size is the sum of :func:`message_cost`, which is never less than the length of
    :func:`render_transcript` of the part, so every part also renders to ``max_chars`` or less.
    A message longer than a part is cut at paragraph, line or word boundaries (hard cuts
    only when a single word is longer) and its pieces keep the message's role; only the
    whitespace at a cut is dropped. An empty conversation has no parts. ``max_chars`` below
    :data:`MIN_PART_CHARS` raises ``ValueError``, and a part can only be too big when a
    role name is longer than ``max_chars - MESSAGE_OVERHEAD``.
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


def agent_of(text: str) -> str | None:
    """The coding agent whose session file ``text`` is (``claude-code``, ``codex``), from
    its first records; None for anything else."""
    records = []
    for line in text.splitlines()[:40]:
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
        if len(records) == 20:
            break
    return agent_format(records) if records else None
