"""Gemini CLI: its ``settings.json`` (the hooks and the MCP server in one file),
``GEMINI.md``, and its chat files (``~/.gemini/tmp/<project>/chats/session-*.jsonl``).

Project scope: ``.gemini/settings.json`` and ``GEMINI.md`` in the project; user scope: the
same in ``$GEMINI_CLI_HOME/.gemini`` (default ``~/.gemini``). The hooks: ``SessionStart``
(the briefing), ``BeforeAgent`` (each prompt's recall: its ``additionalContext`` is added to
the prompt), ``PreCompress`` and ``SessionEnd`` (a detached flush); Gemini CLI's timeouts are
in milliseconds. memcli's read-only MCP tools are allowed without asking (``tools.allowed``:
``mcp_memcli_search``...): a headless ``gemini -p`` offers the model only the tools it may
run without asking. Gemini CLI reads a project's ``.gemini/`` in a trusted folder only.

Gemini CLI puts a hook's context into the prompt as ``<hook_context>...</hook_context>``,
with ``<`` and ``>`` escaped; a headless run's prompt (what ``BeforeAgent`` gets) already holds
the session start's. Those blocks are memcli's and Gemini CLI's, not the user's: they are
taken out of the prompt recall searches with and of the turns a flush reads, and so is the
first user message of a chat, Gemini CLI's ``<session_context>``.

A chat file is JSON Lines: a first record of metadata (``sessionId``, ``projectHash``,
``startTime``...), then messages ``{"id", "timestamp", "type", "content"}`` (``user`` and
``gemini`` are the turns; ``info``, ``error``, ``warning`` are not), a message written again
under the same id when it changes, ``{"$set": ...}`` metadata updates and
``{"$rewindTo": id}`` (the messages from that one on are gone); a ``$set`` may carry
``messages`` too. Older versions wrote one JSON
object with a ``messages`` list (``session-*.json``). Which project a folder of chats belongs
to is in ``~/.gemini/projects.json`` (``{"projects": {path: folder name}}``).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from memcli.agents.base import (
    READ_ONLY_TOOLS,
    Agent,
    Hooks,
    Layout,
    PastSession,
    Plan,
    folder_sessions,
    head_records,
    listing,
    matching,
    tool_file,
)

if TYPE_CHECKING:
    from memcli.agentsetup.change import Change

_TURNS = {"user": "user", "gemini": "assistant"}
_MESSAGE_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
_REGISTRY_BYTES = 4 * 1024 * 1024
#: Gemini CLI's rules for memcli's read-only tools: mcp_<server>_<tool>
ALLOW = tuple(f"mcp_memcli_{tool}" for tool in READ_ONLY_TOOLS)
_HOOK_OPEN, _HOOK_CLOSE = "<hook_context>", "</hook_context>"


def home(expand: bool = True) -> Path:
    """Gemini CLI's folder: ``$GEMINI_CLI_HOME/.gemini``, default ``~/.gemini``."""
    base = os.environ.get("GEMINI_CLI_HOME") or str(Path.home())
    folder = Path(base) / ".gemini"
    return folder.expanduser() if expand else folder


#: Its tools that read or edit one file, named by ``tool_input.file_path``.
FILE_TOOLS = ("read_file", "write_file", "replace")


class Gemini(Agent):
    name = "gemini"
    title = "Gemini CLI"
    program = "gemini"
    #: event -> (Gemini CLI's event, matcher or None, timeout in milliseconds)
    hooks: ClassVar[Hooks] = {
        "session-start": ("SessionStart", None, 20000),
        "prompt": ("BeforeAgent", None, 10000),
        "pre-compact": ("PreCompress", None, 10000),
        "session-end": ("SessionEnd", None, 10000),
        "file": ("AfterTool", "|".join(FILE_TOOLS), 10000),
    }
    config_folders = (".gemini",)

    def layout(self, scope: str, project: Path) -> Layout:
        if scope == "project":
            settings = project / ".gemini" / "settings.json"
            return Layout(settings, settings, project / "GEMINI.md")
        folder = home(expand=False)
        return Layout(folder / "settings.json", folder / "settings.json", folder / "GEMINI.md")

    def homes(self) -> tuple[Path, ...]:
        return (home(expand=False),)

    def plan(self, p: Plan) -> list[Change]:
        from memcli.agentsetup.edits import (
            json_change,
            policy_change,
            set_hooks,
            set_members,
            set_server,
        )
        from memcli.errors import BadInput

        files = self.layout(p.scope, p.project)
        settings = files.servers

        def edit(data: dict[str, Any]) -> None:
            set_hooks(settings, data, self.hooks, p.hook_command, p.remove)
            set_server(data, "mcpServers", p.server_entry() if p.server else None)
            tools = data.get("tools")
            if tools is not None and not isinstance(tools, dict):
                raise BadInput(f'{settings}: "tools" is not an object', hint="fix it by hand")
            tools = dict(tools or {})
            set_members(settings, tools, "allowed", ALLOW, not p.server)
            if tools:
                data["tools"] = tools
            else:
                data.pop("tools", None)

        return [json_change(settings, edit), policy_change(files.policy, p.remove)]

    def install_note(self, scope: str) -> str | None:
        if scope == "project":
            return "Gemini CLI reads .gemini/settings.json in a trusted folder only"
        return None

    def compacts(self, payload: dict[str, Any]) -> bool:
        # Gemini CLI fires PreCompress ("auto") before every turn's check of its compression
        # threshold, whether it compresses or not: a flush each turn, an LLM request each. Its
        # chat file keeps every turn whatever it compresses, so the session's end saves them;
        # a /compress the user asks for ("manual") flushes first.
        return payload.get("trigger") != "auto"

    def prompt(self, payload: dict[str, Any]) -> Any:
        prompt = payload.get("prompt")
        return without_hook_context(prompt) if isinstance(prompt, str) else prompt

    def touched(self, payload: dict[str, Any]) -> list[str]:
        return tool_file(payload, FILE_TOOLS)

    def transcript_folders(self) -> tuple[Path, ...]:
        return (home() / "tmp",)

    def recognises(self, rec: dict[str, Any]) -> bool:
        if "sessionId" in rec and "projectHash" in rec:
            return True  # the metadata record (or an older chat file, whole)
        return rec.get("type") in _MESSAGE_TYPES and "id" in rec and "content" in rec

    def turns(self, records: list[Any]) -> Iterator[tuple[str, str]]:
        messages: dict[str, dict[str, Any]] = {}  # by id, in order; a later copy replaces
        for rec in _expanded(records):
            rewind = rec.get("$rewindTo")
            if rewind is not None:
                ids = list(messages)
                cut = ids.index(rewind) if rewind in messages else 0
                for gone in ids[cut:]:
                    del messages[gone]
            elif rec.get("type") in _MESSAGE_TYPES and "id" in rec:
                messages[str(rec["id"])] = rec
        for rec in messages.values():
            role = _TURNS.get(str(rec.get("type")))
            text = without_hook_context(_parts_text(rec.get("content")))
            if role is not None and not text.lstrip().startswith("<session_context>"):
                yield role, text

    def past_sessions(self, top: str, horizon: float) -> list[PastSession]:
        out = []
        for cwd, chats in _project_chats(top):
            head = functools.partial(_head, cwd=cwd)
            out += matching(self.name, listing(chats), top, horizon, head)
        return out

    def catch_up(self, root: Path, horizon: float) -> list[tuple[float, str, str]]:
        return folder_sessions(self, root, horizon)


def _expanded(records: list[Any]) -> Iterator[dict[str, Any]]:
    """The records, the ``messages`` of an older chat file's one object or of a ``$set``
    taken out."""
    for rec in records:
        if not isinstance(rec, dict):
            continue
        update = rec.get("$set")
        held: dict[str, Any] = update if isinstance(update, dict) else rec
        if isinstance(held.get("messages"), list) and (held is not rec or "sessionId" in rec):
            yield from (m for m in held["messages"] if isinstance(m, dict))
        elif held is rec:
            yield rec


def without_hook_context(text: str) -> str:
    """``text`` without the ``<hook_context>...</hook_context>`` blocks Gemini CLI adds to a
    prompt (a hook's context; found with ``str.find``, once over the text)."""
    out: list[str] = []
    pos = 0
    while (start := text.find(_HOOK_OPEN, pos)) >= 0:
        end = text.find(_HOOK_CLOSE, start)
        if end < 0:
            break
        out.append(text[pos:start])
        pos = end + len(_HOOK_CLOSE)
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out).strip()


def _parts_text(content: Any) -> str:
    """The text of a message's content: a string, a part or a list of parts (``{"text"}``;
    a thought, a function call or its response is no text)."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return ""
    texts = [
        part if isinstance(part, str) else part.get("text")
        for part in content
        if isinstance(part, str) or (isinstance(part, dict) and not part.get("thought"))
    ]
    return "\n".join(t for t in texts if isinstance(t, str) and t.strip())


def _project_chats(top: str) -> Iterator[tuple[str, Path]]:
    """``(project folder, its chats folder)`` of each project Gemini CLI registered at
    ``top`` or below it (``projects.json``)."""
    from memcli.capped import read_capped

    try:
        data = json.loads(read_capped(home() / "projects.json", _REGISTRY_BYTES))
    except (OSError, ValueError, RecursionError):
        return
    projects = data.get("projects") if isinstance(data, dict) else None
    for path, short in (projects or {}).items() if isinstance(projects, dict) else ():
        if not isinstance(path, str) or not isinstance(short, str) or "/" in short:
            continue
        real = os.path.realpath(path)
        if real == top or real.startswith(top.rstrip(os.sep) + os.sep):
            yield path, home() / "tmp" / short / "chats"


def _head(path: Path, cwd: str) -> tuple[str, str] | None:
    if not path.name.startswith("session-"):
        return None
    for rec in head_records(path):
        if "sessionId" in rec:
            return str(rec.get("sessionId") or ""), cwd
    return None
