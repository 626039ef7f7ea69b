"""OpenCode: the MCP server in ``opencode.json``, the policy in ``AGENTS.md``, and a plugin
(``.opencode/plugins/memcli.js``) that gives a session its briefing and each prompt its
recall.

Project scope: ``opencode.json``, ``.opencode/plugins/memcli.js`` and ``AGENTS.md`` in the
project; user scope: ``opencode.json``, ``plugins/memcli.js`` and ``AGENTS.md`` in
``$XDG_CONFIG_HOME/opencode`` (default ``~/.config/opencode``). OpenCode has no command hooks:
its plugins are JavaScript modules it loads at start. memcli's plugin runs memcli's own hooks
(``memcli agent hook session-start`` and ``prompt``) on each user message (``chat.message``)
and adds what they give to the system prompt of that turn's model requests
(``experimental.chat.system.transform``). When a session goes idle (``session.idle``: a
turn is over) the plugin writes its messages, as OpenCode's API gives them with their text
parts only, to ``$XDG_DATA_HOME/opencode/memcli-sessions/<session id>.jsonl`` (one
``{"info", "parts"}`` record a line; a sub-agent's session is not written) and runs
memcli's session-end hook on that file: the turns not saved yet are flushed, as Codex's are at
each turn's end.

OpenCode keeps its sessions in a SQLite database (``opencode.db`` in its data folder: tables
``session``, ``message`` and ``part``, each row's ``data`` a JSON object). Import and catch-up
read it (read-only) and write each session found in the same form to the same folder, which
flush then reads.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memcli.agents.base import Agent, Layout, PastSession, Plan, folder_sessions

if TYPE_CHECKING:
    from memcli.agentsetup.change import Change

#: The first line of the plugin memcli writes: how status tells it is memcli's.
PLUGIN_MARK = "// memcli for OpenCode:"


def config_dir(expand: bool = True) -> Path:
    """``$XDG_CONFIG_HOME/opencode``, default ``~/.config/opencode``."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    folder = Path(base) / "opencode"
    return folder.expanduser() if expand else folder


def data_dir() -> Path:
    """``$XDG_DATA_HOME/opencode``, default ``~/.local/share/opencode``: its database."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "opencode"


def sessions_dir() -> Path:
    """Where memcli's plugin (and import) write OpenCode's sessions for memcli to read."""
    return data_dir() / "memcli-sessions"


#: a session id OpenCode gives (``ses_...``): it names a file
_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")


class OpenCode(Agent):
    name = "opencode"
    title = "OpenCode"
    program = "opencode"
    config_folders = (".opencode", "plugins")
    servers_key = "mcp"

    def install_note(self, scope: str) -> str | None:
        return (
            "OpenCode gets the briefing, recall and session saving from memcli's plugin,"
            " loaded when OpenCode starts"
        )

    def layout(self, scope: str, project: Path) -> Layout:
        if scope == "project":
            plugin = project / ".opencode" / "plugins" / "memcli.js"
            return Layout(plugin, project / "opencode.json", project / "AGENTS.md", True)
        folder = config_dir(expand=False)
        plugin = folder / "plugins" / "memcli.js"
        return Layout(plugin, folder / "opencode.json", folder / "AGENTS.md", True)

    def homes(self) -> tuple[Path, ...]:
        return (config_dir(expand=False),)

    def plan(self, p: Plan) -> list[Change]:
        from memcli.agentsetup.change import Change
        from memcli.agentsetup.edits import json_change, policy_change, read_text, set_server

        files = self.layout(p.scope, p.project)
        assert files.hooks is not None

        def servers(data: dict[str, Any]) -> None:
            entry = p.server_entry()
            local = {"type": "local", "command": [entry["command"], *entry["args"]]}
            set_server(data, "mcp", {**local, "enabled": True} if p.server else None)

        before = read_text(files.hooks)
        after = None if p.remove else _plugin(p)
        return [
            json_change(files.servers, servers),
            Change(files.hooks, before, after),
            policy_change(files.policy, p.remove),
        ]

    def server_in(self, path: Path) -> dict[str, Any] | None:
        entry = super().server_in(path)
        command = entry.get("command") if entry is not None else None
        if not isinstance(command, list) or not command:
            return None
        return {"command": command[0], "args": command[1:]}

    def installed_hooks(self, files: Layout) -> list[str]:
        from memcli.agentsetup.edits import read_text
        from memcli.errors import BadInput

        try:
            text = read_text(files.hooks) if files.hooks is not None else None
        except BadInput:
            return []
        marked = text is not None and text.startswith(PLUGIN_MARK)
        return ["session-start", "prompt", "session-end"] if marked else []

    # -- sessions ----------------------------------------------------------------------------
    def transcript_folders(self) -> tuple[Path, ...]:
        return (sessions_dir(),)

    def recognises(self, rec: dict[str, Any]) -> bool:
        info = rec.get("info")
        return isinstance(info, dict) and "sessionID" in info and isinstance(rec.get("parts"), list)

    def turn(self, rec: dict[str, Any]) -> tuple[str, str] | None:
        info = rec.get("info")
        role = info.get("role") if isinstance(info, dict) else None
        if role not in ("user", "assistant"):
            return None
        texts = [
            part["text"]
            for part in rec.get("parts") or []
            if isinstance(part, dict)
            and part.get("type") == "text"
            and isinstance(part.get("text"), str)
            and not part.get("synthetic")
            and not part.get("ignored")
        ]
        text = "\n".join(t for t in texts if t.strip())
        return (str(role), text) if text else None

    def past_sessions(self, top: str, horizon: float) -> list[PastSession]:
        return list(_db_sessions(self.name, top, horizon))

    def catch_up(self, root: Path, horizon: float) -> list[tuple[float, str, str]]:
        return folder_sessions(self, root, horizon)


def _db_sessions(agent: str, top: str, horizon: float) -> Iterator[PastSession]:
    """The sessions of OpenCode's database that ran in ``top`` or below it, changed since
    ``horizon``, each written to :func:`sessions_dir` (read again only when it changed since
    it was written); a sub-agent's session, with a parent, is part of its parent's work: left
    out."""
    import memcli.index.db as sqlite  # hardened: no trusted schema, defensive mode

    found = data_dir() / "opencode.db"
    if not found.is_file():
        return
    try:
        con = sqlite.connect(found, readonly=True)
    except sqlite.database_errors():
        return
    try:
        rows = con.execute(
            "SELECT id, directory, time_updated FROM session"
            " WHERE parent_id IS NULL AND time_updated >= ? ORDER BY time_updated DESC",
            (int(horizon * 1000),),
        ).fetchall()
        for session_id, cwd, updated in rows:
            if not isinstance(session_id, str) or not _SESSION_ID.fullmatch(session_id):
                continue
            real = os.path.realpath(str(cwd or ""))
            if not cwd or not (real == top or real.startswith(top.rstrip(os.sep) + os.sep)):
                continue
            changed = float(updated) / 1000
            path = sessions_dir() / f"{session_id}.jsonl"
            try:
                fresh = not path.is_symlink() and path.stat().st_mtime >= changed
            except OSError:
                fresh = False
            try:
                if not fresh:
                    _write_session(path, changed, _records(con, session_id))
            except OSError:
                continue
            yield PastSession(agent, session_id, path, changed, str(cwd))
    except sqlite.database_errors():
        return
    finally:
        con.close()


def _records(con: Any, session_id: str) -> Iterator[dict[str, Any]]:
    """A session's messages as OpenCode's API gives them: ``{"info", "parts"}``, in order."""
    parts: dict[str, list[dict[str, Any]]] = {}
    for message_id, part_id, data in con.execute(
        "SELECT message_id, id, data FROM part WHERE session_id = ? ORDER BY time_created, id",
        (session_id,),
    ):
        part = _loads(data)
        if part is not None and part.get("type") == "text":  # as the plugin writes them
            parts.setdefault(message_id, []).append({"id": part_id, **part})
    for message_id, data in con.execute(
        "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id",
        (session_id,),
    ):
        info = _loads(data)
        if info is not None:
            info = {"id": message_id, "sessionID": session_id, **info}
            yield {"info": info, "parts": parts.get(message_id, [])}


def _loads(data: Any) -> dict[str, Any] | None:
    try:
        value = json.loads(data)
    except (TypeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _write_session(path: Path, changed: float, records: Iterator[dict[str, Any]]) -> None:
    """The session's records written to ``path``, its time set to the session's last change."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(rec, ensure_ascii=False) + "\n" for rec in records)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    os.utime(path, (changed, changed))


def _plugin(p: Plan) -> str:
    """The plugin's text: memcli's command line (``memcli [-w ROOT]``) written into it."""
    command = p.hook_command("prompt")
    import shlex

    words = shlex.split(command)[:-3]  # without "agent hook prompt"
    source = Path(__file__).with_name("opencode_plugin.js").read_text(encoding="utf-8")
    return source.replace("__MEMCLI__", json.dumps(words))
