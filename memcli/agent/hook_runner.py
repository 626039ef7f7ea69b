"""``memcli agent hook EVENT``: what a coding agent runs at session start, on each prompt,
before compaction and at the session's end.

A hook reads the agent's JSON payload on stdin (``session_id``, ``transcript_path``, ``cwd``,
``hook_event_name``, ``source``, ``prompt``, ``trigger``) and prints at most one JSON object:

- ``session-start``: ``hookSpecificOutput.additionalContext`` holds the briefing
  (:meth:`memcli.memory.Memory.briefing`), for every start (startup, resume, clear, compact);
- ``prompt``: the memories recalled for the prompt, only when some score well enough;
- ``pre-compact`` and ``session-end``: nothing; a detached ``memcli agent flush-session``
  flushes the turns of the transcript not flushed before, and the hook returns at once.

A hook never fails the agent: whatever goes wrong (no workspace, a bad payload, a damaged
index, a provider that is down) it exits 0 and prints nothing, and the failure is written to
``.memcli/agent.log`` (read by ``memcli agent status`` and ``memcli doctor``).
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memcli.agentsetup.hooklog import EVENTS, log_event, log_path, shown

if TYPE_CHECKING:  # the service loads only when a hook needs it
    from memcli.config import Settings
    from memcli.memory import Memory
    from memcli.service.session_flush import SessionFlush

__all__ = ["run_due_flushes", "run_hook", "run_session_flush"]

#: What a session id may hold (both agents use UUIDs): it names files and log lines.


@functools.cache
def _session_id() -> re.Pattern[str]:
    """Compiled on first use: not on every start-up."""
    return re.compile(r"[\w.:-]{1,200}", re.ASCII)


#: Set by memcli for an agent CLI it runs as its own model (memcli.providers.agentcli): a hook
#: that sees it does nothing, so saving a session never starts another one to save.
CHILD_ENV = "MEMCLI_AGENT_CHILD"


def run_hook(event: str, raw: str, workspace: str | None = None) -> str:
    """The JSON the hook prints for ``event`` with payload ``raw`` ("" for nothing); nothing
    at all in an agent CLI that memcli runs as its model (:data:`CHILD_ENV`)."""
    if os.environ.get(CHILD_ENV):
        return ""
    root: Path | None = None
    try:
        payload = _payload(raw)
        root = _workspace_root(workspace, payload)
        if event == "session-start":
            return _context_output(event, _session_start(root, payload), payload)
        if event == "prompt":
            return _context_output(event, _prompt(root, payload), payload)
        if event == FILE_EVENT:
            return _file_touched(root, payload)
        if event in ("pre-compact", "session-end"):
            from memcli.agents.registry import calling

            if event == "session-end" or calling(event, payload).compacts(payload):
                _start_flush(root, event, payload)
            return ""
        known = ", ".join(EVENTS)
        raise ValueError(f"unknown hook event {event!r} (one of {known})")
    except Exception as exc:  # a hook must never break the agent: log, print nothing
        if root is None:  # the payload was unreadable: log in the workspace found without it
            try:
                root = _workspace_root(workspace, {})
            except Exception:
                root = None
        log_event(root, event, f"error: {_describe(exc)}")
        return ""


def _payload(raw: str) -> dict[str, Any]:
    if not raw.strip():
        return {}
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("the hook payload is not a JSON object")
    return data


def _workspace_root(explicit: str | None, payload: dict[str, Any]) -> Path:
    """The workspace: ``-w``, ``$MEMCLI_WORKSPACE``, else the nearest one at or above the
    payload's ``cwd`` (``$CLAUDE_PROJECT_DIR``, the current folder)."""
    from memcli.notes.workspace import find_workspace

    cwd = payload.get("cwd") or os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    return find_workspace(explicit, cwd=Path(str(cwd))).root


def _context_output(event: str, text: str, payload: dict[str, Any]) -> str:
    """The answer carrying ``text`` in the form of the agent that called (its module's
    :meth:`~memcli.agents.base.Agent.answer`); nothing for no text."""
    if not text:
        return ""
    from memcli.agents.registry import hook_answer

    return json.dumps(hook_answer(event, text, payload), ensure_ascii=False)


def _engine_text(
    root: Path, op: str, args: dict[str, Any], session: str | None = None
) -> str | None:
    """The text the workspace's engine gives for ``op`` ("" for nothing; with its model
    loaded, it spares the hook a model's load or LiteLLM's import on every prompt). None,
    whatever the reason, leaves the hook to work in process, which gives the same text and
    logs what fails. The entries the text quotes (the answer's ``given``) are recorded here
    as given to ``session``, the answer in hand: the engine records nothing, so that a hook
    that stopped waiting for it gives them in process."""
    try:
        from memcli.enginelink import engine_result  # a socket: no heavy imports

        result = engine_result(root, op, args)
    except Exception:
        return None
    text = result.get("text") if isinstance(result, dict) else None
    if result is None or not isinstance(text, str):
        return None
    given = result.get("given")  # a list of texts (engine_result checks it)
    if session is not None and given:
        from memcli.flush.given import Given, given_folder  # a file written: nothing heavy

        Given(given_folder(root), session).add(given)
    return text


def _session_start(root: Path, payload: dict[str, Any]) -> str:
    session = _session(payload)
    if session is not None and payload.get("source") in ("compact", "clear"):
        from memcli.flush.given import Given, given_folder  # a file removed: nothing heavy

        Given(given_folder(root), session).clear()  # the context lost what recall gave it
    settings = _settings(root)  # once: for the catch-up's check and the briefing
    try:  # the sessions due (a failed flush, one that ended without its end hook)
        _start_flush(root, "session-start", payload, own=False, settings=settings)
    except Exception as exc:  # never at the cost of the briefing
        log_event(root, "session-start", f"error: catch-up not started: {_describe(exc)}")
    text = _engine_text(root, "briefing", {})
    if text is not None:
        return text
    from memcli.memory import Memory

    with Memory.open(root, lenient=True, settings=settings) as mem:
        return mem.briefing().block.text


def _prompt(root: Path, payload: dict[str, Any]) -> str:
    from memcli.agents.registry import calling

    prompt = calling("prompt", payload).prompt(payload)
    if not isinstance(prompt, str):
        return ""
    session = _session(payload)
    text = _engine_text(root, "recall", {"prompt": prompt, "session": session}, session)
    if text is not None:
        return text
    from memcli.memory import Memory

    with Memory.open(root, lenient=True) as mem:
        ctx = mem.recall(prompt, session=session)
        return str(ctx.block.text) if ctx is not None else ""


#: ``memcli agent hook file``: a file read or edited (a tool call's hook: Claude Code's
#: PostToolUse, Gemini CLI's AfterTool, Codex's PostToolUse); the facts linked to it, as
#: context (:meth:`memcli.agents.base.Agent.touched` finds the files in the payload).
FILE_EVENT = "file"


def _file_touched(root: Path, payload: dict[str, Any]) -> str:
    from memcli.agents.registry import touched

    agent, paths = touched(payload)
    if not paths:
        return ""
    session = _session(payload)
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    asked = {"paths": paths, "session": session, "cwd": cwd}
    text = _engine_text(root, "file_context", asked, session)
    if text is None:
        from memcli.memory import Memory

        with Memory.open(root, lenient=True) as mem:
            text = mem.touched_context(paths, session=session, cwd=Path(cwd) if cwd else None)
    return json.dumps(agent.answer(FILE_EVENT, text), ensure_ascii=False) if text else ""


def _session(payload: dict[str, Any]) -> str | None:
    """The payload's session id, when it is one (it names a file)."""
    session = payload.get("session_id")
    if isinstance(session, str) and _session_id().fullmatch(session):
        return session
    return None


def _start_flush(
    root: Path,
    event: str,
    payload: dict[str, Any],
    *,
    own: bool = True,
    settings: Settings | None = None,
) -> None:
    """Start ``memcli agent flush-session`` in its own session, detached from the agent: the
    session's new turns (``own``), then the sessions due (:meth:`sessions_due`). Nothing
    starts when no LLM is configured (a flush could only fail; ``agent status`` says so)."""
    session = payload.get("session_id")
    transcript = payload.get("transcript_path")
    if own and (not isinstance(session, str) or not session.strip()):
        raise ValueError("the hook payload has no session_id")
    if isinstance(session, str) and session and not _session_id().fullmatch(session):
        raise ValueError(f"the hook payload's session_id is not an id: {shown(session)}")
    if own and (not isinstance(transcript, str) or not transcript.strip()):
        raise ValueError("the hook payload has no transcript_path")
    if not llm_configured(root, settings):
        return
    args = [sys.executable, "-m", "memcli", "-q", "-w", str(root), "agent", "flush-session"]
    args += ["--event", event, "--due"]
    if own:
        from memcli.flush.source import agent_file  # a path check: no flush code loads

        # only a file of the workspace or of the agents' transcript folders, checked before
        # anything is started: a refused path is logged and nothing is read
        transcript = str(agent_file(str(transcript), root, "transcript_path"))
        args += ["--session-id", str(session), "--transcript", transcript]
    elif isinstance(session, str) and session:
        args += ["--session-id", session]  # the session asking: not due, it has just begun
    import subprocess  # only a flush starts a process: not on the prompt hook's path

    from memcli.statedir import open_state

    fd = open_state(log_path(root), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    with os.fdopen(fd, "ab") as err:
        subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,  # outlives the hook, and the agent's process group
            close_fds=True,
        )


def _settings(root: Path) -> Settings | None:
    """The workspace's settings, a bad value leaving the one below it (as ``Memory.open``'s
    ``lenient``); None when they cannot be read (the caller then reads them itself)."""
    from memcli.config import load_settings

    try:
        return load_settings(root, problems=[])
    except Exception:
        return None


def llm_configured(root: Path, settings: Settings | None = None) -> bool:
    """Whether a flush can run: the workspace's settings (``settings``, or read here) name an
    LLM model, or an agent's own CLI may save its sessions (``agent.own_model``, that CLI
    found)."""
    from memcli.providers.agentcli import BACKENDS, own_model

    try:
        if settings is None:
            settings = _settings(root)
        if settings is None:
            return False
        if settings.get("llm.model"):
            return True
        return any(own_model(settings, name) for name in BACKENDS)
    except Exception:
        return False


def run_due_flushes(mem: Memory, event: str, current: str | None = None) -> list[SessionFlush]:
    """Flush the sessions due (:meth:`memcli.memory.Memory.sessions_due`) with the one
    ``mem`` the command opened, each logged; one that fails is recorded for the next try and
    the others go on."""
    done = []
    for session_id, transcript in mem.sessions_due(current):
        try:
            done.append(run_session_flush(mem, session_id, transcript, f"{event} (due)"))
        except Exception:
            continue  # logged, and recorded as failed: tried again by a later hook
    return done


def run_session_flush(mem: Memory, session_id: str, transcript: str, event: str) -> SessionFlush:
    """Flush a session's new turns (:meth:`memcli.memory.Memory.flush_session`) with the
    ``mem`` the command opened, logging the outcome; errors are logged and raised."""
    root = mem.ws.root
    started = time.monotonic()
    try:
        done = mem.flush_session(session_id, transcript, background=True)
    except Exception as exc:
        log_event(root, event, f"error: flush of session {shown(session_id)}: {_describe(exc)}")
        raise
    flushed = done.result
    written = len(flushed.written) if flushed is not None else 0
    for n, seconds in enumerate(flushed.calls if flushed is not None else [], 1):
        assert flushed is not None
        log_event(
            root,
            event,
            f"asked {flushed.model} for session {shown(session_id)}'s facts"
            f" ({n} of {len(flushed.calls)}): answered in {seconds:.1f} s",
        )
    asked = (
        f" ({flushed.model}: {flushed.requests} request(s) in {time.monotonic() - started:.1f} s)"
        if flushed is not None and flushed.model
        else ""
    )
    log_event(
        root,
        event,
        f"flushed session {shown(session_id)}: {done.new_turns} new of {done.turns} turns,"
        f" {written} fact(s) written{asked}",
    )
    return done


def _describe(exc: BaseException) -> str:
    from memcli.errors import MemcliError

    if isinstance(exc, MemcliError):
        return exc.message
    return f"{type(exc).__name__}: {exc}"
