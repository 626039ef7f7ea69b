"""Codex: its ``config.toml`` (the MCP server, its read-only tools approved, the hooks
feature), ``hooks.json`` and ``AGENTS.md``, and its rollouts
(``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`` and ``archived_sessions``).

Project scope: ``.codex/config.toml``, ``.codex/hooks.json`` and ``AGENTS.md`` in the
project, which Codex reads in a trusted project; user scope: the same files in
``$CODEX_HOME`` (default ``~/.codex``). Codex has no session end (Stop ends each turn): the
flush it starts takes only the turns not flushed.

A rollout is JSON Lines of ``{"type", "payload"}`` records (``session_meta``,
``response_item``, ``event_msg``, ``turn_context``, ``compacted``); the turns are
``response_item`` payloads of type ``message`` with ``input_text`` / ``output_text`` parts.
The older form has those payloads as the records themselves.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from memcli.agents.base import (
    READ_ONLY_TOOLS,
    Agent,
    Hooks,
    Layout,
    PastSession,
    Plan,
    head_records,
    matching,
    text_of,
    walk,
)

if TYPE_CHECKING:
    from memcli.agentsetup.change import Change

_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_ROLES = ("user", "assistant")


def home(expand: bool = True) -> Path:
    """``$CODEX_HOME``, default ``~/.codex``."""
    folder = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
    return folder.expanduser() if expand else folder


class Codex(Agent):
    name = "codex"
    title = "Codex"
    program = "codex"
    #: event -> (Codex's event, matcher or None, timeout in seconds)
    hooks: ClassVar[Hooks] = {
        "session-start": ("SessionStart", None, 20),
        "prompt": ("UserPromptSubmit", None, 10),
        "pre-compact": ("PreCompact", None, 10),
        "session-end": ("Stop", None, 10),
        "file": ("PostToolUse", "apply_patch|Bash", 10),
    }
    config_folders = (".codex",)
    servers_key = "mcp_servers"

    def layout(self, scope: str, project: Path) -> Layout:
        if scope == "project":
            folder = project / ".codex"
            return Layout(
                folder / "hooks.json", folder / "config.toml", project / "AGENTS.md", True
            )
        folder = home(expand=False)
        return Layout(folder / "hooks.json", folder / "config.toml", folder / "AGENTS.md", True)

    def homes(self) -> tuple[Path, ...]:
        return (home(expand=False),)

    def plan(self, p: Plan) -> list[Change]:
        from memcli.agentsetup.change import Change
        from memcli.agentsetup.edits import json_change, policy_change, set_hooks

        files = self.layout(p.scope, p.project)
        hooks_path = files.hooks
        assert hooks_path is not None

        def hooks(data: dict[str, Any]) -> None:
            set_hooks(hooks_path, data, self.hooks, p.hook_command, p.remove)

        before, after = _config(files.servers, p)
        return [
            Change(files.servers, before, after),
            json_change(hooks_path, hooks),
            policy_change(files.policy, p.remove),
        ]

    def server_in(self, path: Path) -> dict[str, Any] | None:
        import tomllib

        from memcli.agentsetup.edits import read_text
        from memcli.errors import BadInput

        try:
            data = tomllib.loads(read_text(path) or "")
        except (ValueError, RecursionError, BadInput):
            return None
        servers = data.get("mcp_servers")
        entry = servers.get("memcli") if isinstance(servers, dict) else None
        return entry if isinstance(entry, dict) else None

    def install_note(self, scope: str) -> str | None:
        return "Codex runs new hooks once you trust them (/hooks in codex)" + (
            ", and reads .codex/ in a trusted project only" if scope == "project" else ""
        )

    def touched(self, payload: dict[str, Any]) -> list[str]:
        tool_input = payload.get("tool_input")
        command = tool_input.get("command") if isinstance(tool_input, dict) else None
        if not isinstance(command, str):
            return []
        if payload.get("tool_name") == "apply_patch":
            return patch_paths(command)
        if payload.get("tool_name") == "Bash":
            return read_paths(command)
        return []

    def transcript_folders(self) -> tuple[Path, ...]:
        return home() / "sessions", home() / "archived_sessions"

    def recognises(self, rec: dict[str, Any]) -> bool:
        return rec.get("type") in _TYPES and isinstance(rec.get("payload"), dict)

    def turn(self, rec: dict[str, Any]) -> tuple[str, str] | None:
        item = rec.get("payload") if rec.get("type") == "response_item" else rec
        if not isinstance(item, dict) or item.get("type") != "message":
            return None
        role = item.get("role")
        if role not in _ROLES:
            return None  # developer and system messages are the agent's own instructions
        return str(role), text_of(item.get("content"))

    def past_sessions(self, top: str, horizon: float) -> list[PastSession]:
        files = (p for folder in self.transcript_folders() for p in walk(folder))
        return matching(self.name, files, top, horizon, _head)


def _head(path: Path) -> tuple[str, str] | None:
    for rec in head_records(path):
        payload = rec.get("payload")
        if rec.get("type") == "session_meta" and isinstance(payload, dict):
            return str(payload.get("id") or ""), str(payload.get("cwd") or "")
    return None


def _config(path: Path, p: Plan) -> tuple[str | None, str | None]:
    """``config.toml`` as it is and as it would be: memcli's server with its read-only tools
    approved (``codex exec``, approval policy never, runs them without asking) and
    ``[features] hooks = true`` unless the user chose; comments and layout kept."""
    import tomlkit  # a TOML writer that keeps the user's comments and layout

    from memcli.agentsetup.edits import newline_of, read_text, with_newline
    from memcli.errors import BadInput

    before = read_text(path)
    try:
        doc = tomlkit.parse(before or "")
    except Exception as exc:  # tomlkit's parse errors have no common public base
        raise BadInput(f"{path} is not valid TOML: {exc}", hint="fix it by hand") from None
    servers = doc.get("mcp_servers")
    if not p.server:
        if servers is not None and "memcli" in servers:
            del servers["memcli"]
            if not servers:
                del doc["mcp_servers"]
    else:
        if servers is None:
            servers = tomlkit.table(is_super_table=True)
            doc["mcp_servers"] = servers
        entry = tomlkit.table()
        for key, value in p.server_entry().items():
            entry[key] = value
        tools = tomlkit.table(is_super_table=True)
        for tool in READ_ONLY_TOOLS:
            approval = tomlkit.table()
            approval["approval_mode"] = "approve"
            tools[tool] = approval
        entry["tools"] = tools
        old = servers.get("memcli")
        if old is None or getattr(old, "unwrap", lambda: old)() != entry.unwrap():
            servers["memcli"] = entry  # an entry already as it should be keeps its layout
    if not p.remove:  # hooks run behind this feature (on by default in later Codex versions)
        features = doc.get("features")
        if features is None:
            features = tomlkit.table()
            doc["features"] = features
        if "codex_hooks" not in features and "hooks" not in features:  # the user's choice
            features["hooks"] = True  # its older name codex_hooks is still read
    nl = newline_of(before)  # the file's own line endings for what memcli writes
    after: str | None = tomlkit.dumps(doc)
    if after == "" and before is None:
        after = None
    elif p.remove and after != before and after is not None:  # no blank lines where it was
        after = after.rstrip("\r\n") + nl if after.strip() else None
    if after is not None and after != before:
        after = with_newline(after, nl)
    return before, after


#: The lines of an ``apply_patch`` patch that name the file each hunk edits.
_PATCH_FILE = ("*** Update File: ", "*** Add File: ")
#: Commands that print a file: what Codex runs to read one.
_READERS = frozenset({"cat", "head", "tail", "sed", "nl", "less", "more", "bat", "wc"})
#: The most files one call's answer names.
_MAX_TOUCHED = 3


def patch_paths(patch: str) -> list[str]:
    """The files an ``apply_patch`` patch adds or updates (deleted ones are gone)."""
    found = [
        line[len(prefix) :].strip()
        for line in patch.splitlines()
        for prefix in _PATCH_FILE
        if line.startswith(prefix)
    ]
    return list(dict.fromkeys(p for p in found if p))[:_MAX_TOUCHED]


def read_paths(command: str) -> list[str]:
    """The files a shell command that only prints files reads (``sed -n '1,80p' a.py``,
    ``cat a.py b.py``): its words after the command that are not options and look like a
    file name; none for any other command, a pipe or a chain."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return []
    if len(words) >= 3 and words[0].endswith("sh") and words[1] in ("-c", "-lc"):
        return read_paths(words[2])  # bash -lc "..."
    if not words or words[0] not in _READERS or any(w in ("|", "&&", ";", ">") for w in words):
        return []
    names = [w for w in words[1:] if not w.startswith("-") and "." in w.rsplit("/", 1)[-1]]
    return names[:_MAX_TOUCHED]
