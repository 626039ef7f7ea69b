"""What memcli knows of one coding agent, behind one interface: the files install writes and
how (:meth:`Agent.plan`), the hook events and how an answer carries context
(:meth:`Agent.answer`), where its session files are and how their records read
(:meth:`Agent.turn`), the past sessions of a project and the ones to catch up.

Nothing heavy is imported at load: the prompt hook loads this module on every prompt.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

if TYPE_CHECKING:
    from memcli.agentsetup.change import Change

#: The MCP tools that only read (their readOnlyHint, memcli.agent.mcp_server): allowed without
#: asking where the agent has a rule for it. Not imported from the server: that would import
#: the MCP SDK.
READ_ONLY_TOOLS = ("search", "context", "get", "status")
#: How much of a session file is read to find the folder it ran in.
HEAD_BYTES = 64 * 1024
SCOPES = ("project", "user")
#: memcli's hook event -> (the agent's event, matcher or None, timeout in its unit)
Hooks = dict[str, tuple[str, str | None, int]]


class PastSession(NamedTuple):
    """One session file of a project."""

    agent: str  # the agent's name: claude-code, codex, gemini
    session_id: str
    path: Path
    mtime: float
    cwd: str


class Layout(NamedTuple):
    """The files install writes for one agent in one scope."""

    hooks: Path | None  # the file holding the hooks (None: the agent has none)
    servers: Path  # the file holding the MCP server entry
    policy: Path  # the instructions file
    servers_first: bool = False  # listed (status, plan) with the servers' file first

    @property
    def files(self) -> tuple[Path, ...]:
        """Every file, each once, in the order install lists them."""
        order = (self.servers, self.hooks) if self.servers_first else (self.hooks, self.servers)
        return tuple(dict.fromkeys(p for p in (*order, self.policy) if p is not None))


class Plan(NamedTuple):
    """What an agent's :meth:`Agent.plan` is given."""

    ws_root: Path
    scope: str
    project: Path  # the folder the agent runs in
    remove: bool
    prog: list[str]  # how the agent starts memcli
    server: bool  # write the MCP server entry (the MCP extra is there)
    #: Claude Code's permission rules for the read-only tools of memcli's plugin, given when
    #: it is enabled (its hooks and server serve: none of memcli's are written, these rules
    #: are) and on uninstall (taken out)
    plugin: tuple[str, ...] = ()

    @property
    def here(self) -> Path | None:
        """The agent's folder, None in user scope (the workspace of the folder it runs in)."""
        return self.project if self.scope == "project" else None

    def hook_command(self, event: str) -> str:
        from memcli.agentsetup.commands import hook_command

        return hook_command(self.ws_root, self.here, self.prog, event)

    def server_entry(self) -> dict[str, Any]:
        from memcli.agentsetup.commands import server_entry

        return server_entry(self.ws_root, self.here, self.prog)


class Agent:
    """One coding agent. Subclasses set the names and override what differs."""

    name = ""  # as `memcli agent install NAME` takes it
    title = ""  # as people call it
    program = ""  # its CLI's executable
    #: memcli's hook event -> (the agent's event, matcher or None, timeout in its unit)
    hooks: ClassVar[Hooks] = {}
    #: folder names of its config that install may remove once emptied (project scope)
    config_folders: tuple[str, ...] = ()
    #: whether its sessions are saved as facts (memcli reads its session files)
    saves_sessions = True

    # -- set-up ------------------------------------------------------------------------------
    def layout(self, scope: str, project: Path) -> Layout:
        raise NotImplementedError

    def homes(self) -> tuple[Path, ...]:
        """Its own config folders, never removed by uninstall."""
        return ()

    def plan(self, p: Plan) -> list[Change]:
        raise NotImplementedError

    def server_in(self, path: Path) -> dict[str, Any] | None:
        """memcli's MCP server entry in ``path`` (a JSON ``mcpServers`` table by default)."""
        from memcli.agentsetup.edits import read_text
        from memcli.errors import BadInput

        try:
            data = json.loads(read_text(path) or "{}")
        except (ValueError, RecursionError, BadInput):
            return None
        servers = data.get(self.servers_key) if isinstance(data, dict) else None
        entry = servers.get("memcli") if isinstance(servers, dict) else None
        return entry if isinstance(entry, dict) else None

    servers_key = "mcpServers"

    def installed_hooks(self, files: Layout) -> list[str]:
        """memcli's hook events installed in ``files`` (its hooks table)."""
        from memcli.agentsetup.installed import installed_hooks

        return installed_hooks(files.hooks) if files.hooks is not None else []

    def install_note(self, scope: str) -> str | None:
        """A line install prints for this agent (what the user still has to do), or None."""
        return None

    # -- hooks -------------------------------------------------------------------------------
    def owns(self, payload: dict[str, Any]) -> bool:
        """Whether a hook payload is this agent's by its shape (an agent whose payload names
        no event)."""
        return False

    def compacts(self, payload: dict[str, Any]) -> bool:
        """Whether its pre-compact hook's ``payload`` says the context is being compacted
        (what a flush before it is for)."""
        return True

    def prompt(self, payload: dict[str, Any]) -> Any:
        """The user's prompt in a prompt hook's payload (what recall searches with)."""
        return payload.get("prompt")

    def touched(self, payload: dict[str, Any]) -> list[str]:
        """The files a tool call read or edited, from the file hook's payload (``tool_name``,
        ``tool_input``); none for another tool or agent."""
        return []

    def answer(self, event: str, text: str) -> dict[str, Any]:
        """The hook's answer carrying ``text`` as context the model reads."""
        name = self.hooks[event][0] if event in self.hooks else event
        return {"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}}

    # -- sessions ----------------------------------------------------------------------------
    def transcript_folders(self) -> tuple[Path, ...]:
        """Where it keeps session files (a hook's ``transcript_path`` is read only there or in
        the workspace)."""
        return ()

    def recognises(self, rec: dict[str, Any]) -> bool:
        """Whether ``rec``, one parsed record of a JSON Lines file, is of its session files."""
        return False

    def turns(self, records: list[Any]) -> Iterator[tuple[str, str]]:
        """``(role, text)`` of each user and assistant turn of its session file's records."""
        for rec in records:
            if isinstance(rec, dict):
                turn = self.turn(rec)
                if turn is not None:
                    yield turn

    def turn(self, rec: dict[str, Any]) -> tuple[str, str] | None:
        return None

    def past_sessions(self, top: str, horizon: float) -> list[PastSession]:
        """Its sessions that ran in the folder ``top`` (real path) or below it, changed since
        ``horizon``."""
        return []

    def catch_up(self, root: Path, horizon: float) -> list[tuple[float, str, str]]:
        """``(mtime, session id, path)`` of its session files of the workspace at ``root``
        changed since ``horizon``, which a session start flushes when memcli never did (a
        session that ended without its end hook)."""
        return []


def folder_sessions(agent: Agent, root: Path, horizon: float) -> list[tuple[float, str, str]]:
    """What :meth:`Agent.catch_up` gives for an agent whose :meth:`~Agent.past_sessions`
    name the folder they ran in: those run in ``root`` itself."""
    top = os.path.realpath(root)
    return [
        (s.mtime, s.session_id, str(s.path))
        for s in agent.past_sessions(top, horizon)
        if os.path.realpath(s.cwd) == top
    ]


def text_of(content: Any, kinds: Iterable[str] = ("text", "input_text", "output_text")) -> str:
    """The text of a message's content: a string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    kinds = frozenset(kinds)
    texts = [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") in kinds
        and isinstance(block.get("text"), str)
    ]
    return "\n".join(t for t in texts if t.strip())


def listing(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError:
        return []


def walk(folder: Path) -> Iterator[Path]:
    for dirpath, _dirs, names in os.walk(folder):
        for name in names:
            yield Path(dirpath) / name


def head_records(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of the first :data:`HEAD_BYTES` of a session file: a regular file only
    (a FIFO would block), never through a link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        data = os.read(fd, HEAD_BYTES)
    except OSError:
        return
    finally:
        os.close(fd)
    for line in data.decode("utf-8", errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict):
            yield rec


def matching(
    agent: str,
    files: Iterable[Path],
    top: str,
    horizon: float,
    head: Callable[[Path], tuple[str, str] | None],
    suffixes: tuple[str, ...] = (".jsonl",),
) -> list[PastSession]:
    """The session files among ``files`` changed since ``horizon`` whose folder (``head``:
    ``(session id, cwd)`` from a file's first records) is ``top`` or below it."""
    out = []
    for path in files:
        if path.suffix not in suffixes or path.is_symlink():
            continue
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        if mtime < horizon:
            continue
        found = head(path)
        if found is None:
            continue
        session_id, cwd = found
        real = os.path.realpath(cwd) if cwd else ""
        if real == top or real.startswith(top.rstrip(os.sep) + os.sep):
            out.append(PastSession(agent, session_id or path.stem, path, mtime, cwd))
    return out


def tool_file(payload: dict[str, Any], tools: tuple[str, ...]) -> list[str]:
    """``tool_input.file_path`` of a call of one of ``tools`` (a hook payload's ``tool_name``),
    as a list; none for another tool or a payload without it."""
    tool_input = payload.get("tool_input")
    path = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    if payload.get("tool_name") in tools and isinstance(path, str) and path:
        return [path]
    return []
