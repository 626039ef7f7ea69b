"""The coding agent's own model as memcli's LLM: the agent CLI the user already has, run
headless with its own login (a subscription or a key), for flush and every other chat call.

``llm.model`` names it: ``claude-code`` (Claude Code's ``claude -p``, Haiku unless another
model follows: ``claude-code/sonnet``), ``codex`` (``codex exec``, the model of the user's
Codex config unless one follows: ``codex/gpt-5-mini``) or ``gemini`` (Gemini CLI's
``gemini -p``, its ``flash`` model (no routing request first) unless another follows:
``gemini/pro``, ``gemini/gemini-2.5-flash-lite``).

The child is a bare question and answer: it runs in an empty folder of its own, with no
tools, no MCP server, no hook (nor plugin, skill or slash command where the CLI allows), and
saves no session; :data:`CHILD_ENV` tells a memcli that it starts anyway (a hook of a
plugin it could not turn off) that it is such a child, and memcli's hooks then do nothing.
So saving a session never starts another session to save, and nothing spends the user's
quota but the one call.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from memcli.errors import ProviderError
from memcli.providers.config import ProviderConfig

if TYPE_CHECKING:
    from memcli.config import Settings

#: Set in the child's environment: a memcli hook that sees it does nothing.
CHILD_ENV = "MEMCLI_AGENT_CHILD"

#: What Claude Code sets for the processes it starts (a nested ``claude`` refuses to run
#: beside them): left out of the child's environment.
_PARENT_MARKS = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CODEX_SANDBOX", "CODEX_THREAD_ID")


class Backend(NamedTuple):
    """One agent CLI as a chat backend."""

    name: str  # what llm.model names: claude-code, codex
    program: str  # the executable looked up on PATH
    default_model: str  # "" for the CLI's own default


BACKENDS = {
    "claude-code": Backend("claude-code", "claude", "haiku"),
    "codex": Backend("codex", "codex", ""),
    "gemini": Backend("gemini", "gemini", "flash"),
}


def backend_of(model: str) -> tuple[Backend, str] | None:
    """``(backend, model)`` when ``model`` names an agent CLI (``claude-code``,
    ``claude-code/sonnet``, ``codex``, ``codex/gpt-5-mini``); None for any other model."""
    name, _, chosen = model.strip().partition("/")
    backend = BACKENDS.get(name)
    if backend is None:
        return None
    return backend, chosen.strip() or backend.default_model


def find(backend: Backend) -> str | None:
    """The backend's executable on PATH, or None."""
    return shutil.which(backend.program)


def own_model(settings: Settings, agent: str | None) -> str | None:
    """The agent CLI that saves ``agent``'s sessions when no ``llm.model`` is set: the agent
    itself (``claude-code``, ``codex``), when ``agent.own_model`` is on and its CLI is found;
    else None."""
    if not agent or not settings.get("agent.own_model"):
        return None
    found = backend_of(agent)
    return agent if found is not None and find(found[0]) else None


def session_saving(settings: Settings, agent: str | None = None) -> dict[str, Any]:
    """Whether the agents' sessions are saved as facts, and by what (``backend``): the
    ``llm.model`` (``litellm``, or an agent CLI it names), or with no model each agent's own
    CLI (``agent``: ``agents`` lists those found, ``agent``'s alone when given). Else
    ``on`` is false and ``why`` says so."""
    model = str(settings.get("llm.model") or "")
    if model:
        named = backend_of(model)
        backend = named[0].name if named is not None else "litellm"
        return {"on": True, "model": model, "backend": backend, "agents": [], "why": None}
    names = [agent] if agent in BACKENDS else list(BACKENDS)
    agents = [name for name in names if own_model(settings, name)]
    if agents:
        return {"on": True, "model": None, "backend": "agent", "agents": agents, "why": None}
    why = "no LLM model configured (llm.model): sessions are not saved as facts"
    if not settings.get("agent.own_model"):
        why += " (agent.own_model is off)"
    elif agent in BACKENDS:
        why += f" ({BACKENDS[agent].program} is not found on PATH)"
    return {"on": False, "model": None, "backend": None, "agents": [], "why": why}


def complete(messages: list[dict[str, Any]], cfg: ProviderConfig, json_mode: bool = True) -> str:
    """Ask the agent CLI ``cfg.model`` names (:func:`backend_of`) and return its answer's
    text; a CLI that is missing, fails, times out (``cfg.timeout``) or answers nothing is
    a ProviderError. Failed calls are retried up to ``cfg.max_retries`` times."""
    found = backend_of(cfg.model)
    if found is None:  # pragma: no cover - the caller checked
        raise ProviderError(f"{cfg.model} is not an agent CLI")
    backend, model = found
    program = find(backend)
    if program is None:
        raise ProviderError(
            f"llm.model {cfg.model}: '{backend.program}' is not found on PATH",
            hint=f"install {backend.name}, or set another llm.model",
        )
    system = "\n\n".join(m["content"] for m in messages if m.get("role") == "system")
    user = "\n\n".join(m["content"] for m in messages if m.get("role") != "system")
    import tempfile  # a call runs the CLI in a folder of its own

    failure = ""
    for _attempt in range(cfg.max_retries + 1):
        with tempfile.TemporaryDirectory(prefix="memcli-llm-") as folder:
            run = {"claude-code": _claude, "codex": _codex, "gemini": _gemini}[backend.name]
            try:
                return run(program, model, system, user, Path(folder), cfg.timeout)
            except _Failed as exc:
                failure = str(exc)
    raise ProviderError(
        f"LLM {cfg.model} failed: {failure}",
        hint=f"check that '{backend.program}' works and is logged in, or set another llm.model",
    )


class _Failed(Exception):
    """One call of the CLI failed (retried)."""


def child_env() -> dict[str, str]:
    """The environment of the child: this one, marked as memcli's child, without the marks
    of a running agent session."""
    env = {k: v for k, v in os.environ.items() if k not in _PARENT_MARKS}
    env[CHILD_ENV] = "1"
    return env


def _run(args: list[str], stdin: str, folder: Path, timeout: float, **extra: str) -> str:
    """Run the CLI in ``folder`` (its own process group, killed whole on a timeout)."""
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            args,
            cwd=folder,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**child_env(), **extra},
            start_new_session=True,
        )
    except OSError as exc:
        raise _Failed(f"cannot start {args[0]}: {exc.strerror}") from None
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.communicate()
        raise _Failed(f"no answer within {timeout:g} s (llm.timeout)") from None
    except BaseException:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        raise
    if proc.returncode != 0:
        last = (err.strip() or out.strip()).splitlines()[-1:] or [""]
        seconds = time.monotonic() - started
        raise _Failed(f"exit {proc.returncode} after {seconds:.1f} s: {last[0][:300]}")
    return out


def _claude(program: str, model: str, system: str, user: str, folder: Path, timeout: float) -> str:
    """``claude -p``: no tools, no MCP server, no hooks, no skills, no saved session."""
    args = [
        program,
        "-p",
        "--output-format",
        "json",
        "--no-session-persistence",
        "--tools",
        "",
        "--strict-mcp-config",
        "--disable-slash-commands",
        "--settings",
        json.dumps({"disableAllHooks": True}),
        "--setting-sources",
        "user",
    ]
    if model:
        args += ["--model", model]
    if system:
        args += ["--system-prompt", system]
    out = _run(args, user, folder, timeout)
    try:
        answer = json.loads(out)
    except ValueError:
        raise _Failed("the answer is not Claude Code's JSON") from None
    if not isinstance(answer, dict) or answer.get("is_error") or "result" not in answer:
        what = answer.get("result") if isinstance(answer, dict) else None
        raise _Failed(f"Claude Code answered an error: {str(what)[:300]}")
    return str(answer["result"])


#: Codex features turned off in the child: hooks, and every tool it offers by default (a
#: shell, images, sub-agents, goals, apps, plugins, skills, the browser).
_CODEX_OFF = (
    "hooks",
    "plugin_hooks",
    "shell_tool",
    "unified_exec",
    "view_image",
    "image_generation",
    "multi_agent",
    "goals",
    "sleep_tool",
    "tool_suggest",
    "skill_search",
    "apps",
    "plugins",
    "browser_use",
    "computer_use",
)


def _codex(program: str, model: str, system: str, user: str, folder: Path, timeout: float) -> str:
    """``codex exec``: read-only, no MCP server, no hooks, no saved session."""
    last = folder / "answer.txt"
    args = [
        program,
        "exec",
        "--ephemeral",
        "--skip-git-repo-check",
        "--ignore-rules",
        "--sandbox",
        "read-only",
        # as settings, not --disable: a Codex that has no such feature ignores the setting,
        # where --disable stops at an unknown name
        *(arg for feature in _CODEX_OFF for arg in ("-c", f"features.{feature}=false")),
        "-c",
        "mcp_servers={}",
        "-c",
        'model_reasoning_effort="low"',
        "-c",
        'web_search="disabled"',
        "-c",
        "tools.experimental_request_user_input={enabled=false}",
        "--color",
        "never",
        "--output-last-message",
        str(last),
    ]
    if model:
        args += ["--model", model]
    args.append("-")
    prompt = f"{system}\n\n{user}" if system else user
    _run(args, prompt, folder, timeout)
    try:
        text = last.read_text(encoding="utf-8")
    except OSError:
        raise _Failed("Codex wrote no answer") from None
    if not text.strip():
        raise _Failed("Codex answered nothing")
    return text


#: The files of Gemini CLI's folder that hold its login: the child's folder links to them.
_GEMINI_LOGIN = ("oauth_creds.json", "google_accounts.json", "installation_id", "user_id")


def _gemini(program: str, model: str, system: str, user: str, folder: Path, timeout: float) -> str:
    """``gemini -p``: Gemini CLI's folder of its own (``GEMINI_CLI_HOME``) in ``folder``,
    holding the user's login (links to its files, and the ``security.auth`` of their
    settings) and nothing else: no hooks (``hooksConfig.enabled`` off, and none set), no MCP
    server, extension, skill or memory file of the user's, no tools but what it offers
    without asking, turned off too; the chat it records is in ``folder``, removed with it.
    memcli's system text replaces Gemini CLI's own (``GEMINI_SYSTEM_MD``)."""
    # Gemini CLI's folder (memcli.agents.gemini.home: the providers do not import the agents)
    user_home = Path(os.environ.get("GEMINI_CLI_HOME") or Path.home()).expanduser() / ".gemini"
    own = folder / "home" / ".gemini"
    own.mkdir(parents=True)
    for name in _GEMINI_LOGIN:
        if (user_home / name).is_file():
            (own / name).symlink_to(user_home / name)
    settings: dict[str, Any] = {
        "hooksConfig": {"enabled": False},
        "tools": {"exclude": list(_GEMINI_TOOLS)},
        "telemetry": {"enabled": False},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }
    auth = _gemini_auth(user_home / "settings.json")
    if auth:
        settings["security"] = {"auth": auth}
    (own / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    work = folder / "work"
    work.mkdir()
    extra = {"GEMINI_CLI_HOME": str(folder / "home"), "GEMINI_CLI_NO_RELAUNCH": "true"}
    if system:
        (folder / "system.md").write_text(system, encoding="utf-8")
        extra["GEMINI_SYSTEM_MD"] = str(folder / "system.md")
    # --skip-trust: the folder is empty, made for this call
    args = [program, "--output-format", "json", "--approval-mode", "default", "--skip-trust"]
    if model:
        args += ["--model", model]
    args += ["-p", "Answer as the text above asks."]
    out = _run(args, user, work, timeout, **extra)
    try:
        answer = json.loads(out[out.find("{") :])
    except ValueError:
        raise _Failed("the answer is not Gemini CLI's JSON") from None
    if not isinstance(answer, dict) or answer.get("error") or "response" not in answer:
        what = answer.get("error") if isinstance(answer, dict) else None
        raise _Failed(f"Gemini CLI answered an error: {str(what)[:300]}")
    text = str(answer["response"] or "")
    if not text.strip():
        raise _Failed("Gemini CLI answered nothing")
    return text


#: Gemini CLI's own tools, left out of the child (a headless run offers those that need no
#: approval: the reading ones, web search and fetch)
_GEMINI_TOOLS = (
    "read_file",
    "read_many_files",
    "list_directory",
    "glob",
    "search_file_content",
    "grep_search",
    "google_web_search",
    "web_fetch",
    "save_memory",
    "write_todos",
    "run_shell_command",
    "write_file",
    "replace",
    "activate_skill",
    "codebase_investigator",
    "cli_help",
    "update_topic",
    "enter_plan_mode",
    "exit_plan_mode",
    "invoke_agent",
    "ask_user",
)


def _gemini_auth(path: Path) -> dict[str, Any] | None:
    """``security.auth`` of the user's Gemini CLI settings (how they log in), or None."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    security = data.get("security") if isinstance(data, dict) else None
    auth = security.get("auth") if isinstance(security, dict) else None
    return auth if isinstance(auth, dict) else None
