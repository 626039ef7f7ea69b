"""The agent's own model as memcli's LLM (``llm.model = claude-code`` or ``codex``, or none
with ``agent.own_model``): the real memcli runs a stand-in ``claude`` / ``codex`` program put
first on PATH, which records how it was run and answers as the real CLI does. The real CLIs
run in ``tests/e2e``."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.agent_helpers import MEMCLI, claude_transcript, run_hook, wait_for_log

pytestmark = pytest.mark.slow

FACT = "The staging database is db-stage-7."

#: A stand-in agent CLI: records argv, cwd and the child mark, reads its prompt, answers.
STAND_IN = """#!{python}
import json, os, sys
log = os.environ["STAND_IN_LOG"]
args = sys.argv[1:]
prompt = sys.stdin.read()
with open(log, "a") as f:
    f.write(json.dumps({{"name": os.path.basename(sys.argv[0]), "args": args, "cwd": os.getcwd(),
                        "child": os.environ.get("MEMCLI_AGENT_CHILD"), "prompt": prompt}}) + "\\n")
if "Reviews" in prompt and os.environ.get("STAND_IN_SLOW"):  # a slow answer, to interrupt
    import time
    time.sleep(float(os.environ["STAND_IN_SLOW"]))
import re
said = re.findall(r"Remember: ([^.]*[.])", prompt)
reply = json.dumps({{"facts": [{{"text": t, "type": "fact"}} for t in said or [{fact!r}]]}})
if os.path.basename(sys.argv[0]) == "codex":
    out = args[args.index("--output-last-message") + 1]
    open(out, "w").write(reply)
elif os.path.basename(sys.argv[0]) == "gemini":
    own = os.path.join(os.environ["GEMINI_CLI_HOME"], ".gemini")
    with open(log, "a") as f:
        f.write(json.dumps({{"settings": json.load(open(os.path.join(own, "settings.json"))),
                            "files": sorted(os.listdir(own)),
                            "system": open(os.environ["GEMINI_SYSTEM_MD"]).read()}}) + "\\n")
    print(json.dumps({{"session_id": "x", "response": reply, "stats": {{}}}}))
else:
    print(json.dumps({{"type": "result", "is_error": False, "result": reply}}))
"""


@pytest.fixture
def agents_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``claude`` and ``codex`` stand-ins first on PATH; their calls logged."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in ("claude", "codex"):
        path = folder / name
        path.write_text(STAND_IN.format(python=sys.executable, fact=FACT))
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("STAND_IN_LOG", str(tmp_path / "calls.jsonl"))
    for var in ("MEMCLI_LLM_MODEL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    return folder


def calls(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "calls.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def memcli(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MEMCLI, "-w", str(root), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )


def claude_session(name: str = "s1") -> Path:
    """A Claude Code transcript where Claude Code keeps them."""
    path = claude_transcript(f"{name}.jsonl")
    turns = [
        ("user", "Where is the staging database?"),
        ("assistant", "It is db-stage-7, in the eu-west region."),
    ]
    path.write_text(
        "".join(
            json.dumps(
                {
                    "type": role,
                    "sessionId": name,
                    "uuid": f"{name}-{i}",
                    "message": {"role": role, "content": text},
                }
            )
            + "\n"
            for i, (role, text) in enumerate(turns)
        )
    )
    return path


def memory_text(root: Path) -> str:
    return "".join(p.read_text() for p in (root / "memory").rglob("*.md"))


def test_a_claude_code_session_is_saved_by_claude_itself(
    workspace: Path, agents_bin: Path, tmp_path: Path
) -> None:
    """No llm.model, no API key: the session's own agent answers, as a bare question."""
    transcript = claude_session()
    r = memcli(workspace, "agent", "flush-session", "--session-id", "s1", "--transcript",
               str(transcript))  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert FACT in memory_text(workspace)
    (call,) = calls(tmp_path)
    assert call["name"] == "claude" and call["child"] == "1"
    args = call["args"]
    assert args[:3] == ["-p", "--output-format", "json"]
    for flag in ("--no-session-persistence", "--strict-mcp-config", "--disable-slash-commands"):
        assert flag in args
    assert args[args.index("--tools") + 1] == ""
    assert json.loads(args[args.index("--settings") + 1]) == {"disableAllHooks": True}
    assert args[args.index("--model") + 1] == "haiku"
    assert "db-stage-7" in call["prompt"]  # the conversation, on stdin
    assert not Path(call["cwd"]).exists()  # an empty folder of its own, gone after
    log = (workspace / ".memcli" / "agent.log").read_text()
    assert "1 fact(s) written (claude-code: 1 request(s) in" in log
    assert "asked claude-code for session s1's facts (1 of 1): answered in" in log


def test_llm_model_names_codex_and_its_model(
    workspace: Path, agents_bin: Path, tmp_path: Path
) -> None:
    conv = json.dumps([{"role": "user", "content": "The staging database is db-stage-7."}])
    r = subprocess.run(
        [*MEMCLI, "-w", str(workspace), "flush", "-", "--json"],
        input=conv,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "MEMCLI_LLM_MODEL": "codex/gpt-5-mini"},
    )
    assert r.returncode == 0, r.stderr
    assert FACT in memory_text(workspace)
    (call,) = calls(tmp_path)
    args = call["args"]
    assert call["name"] == "codex" and args[0] == "exec" and call["child"] == "1"
    for flag in ("--ephemeral", "--skip-git-repo-check"):
        assert flag in args
    assert "features.hooks=false" in args and "features.shell_tool=false" in args
    assert "mcp_servers={}" in args and args[args.index("--model") + 1] == "gpt-5-mini"


def test_own_model_off_or_cli_missing_saves_nothing(
    workspace: Path, agents_bin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcript = claude_session()
    r = memcli(workspace, "agent", "flush-session", "--session-id", "s1", "--transcript",
               str(transcript), MEMCLI_AGENT_OWN_MODEL="false")  # fmt: skip
    assert r.returncode != 0 and "no LLM model configured" in r.stderr
    (agents_bin / "claude").unlink()
    r = memcli(workspace, "agent", "status", "--json")
    flush = json.loads(r.stdout)["flush"]
    assert flush["on"] and flush["agents"] == ["codex"]  # codex is still there
    (agents_bin / "codex").unlink()
    r = memcli(workspace, "agent", "status", "--json")
    assert json.loads(r.stdout)["flush"]["on"] is False
    assert calls(tmp_path) == []


def test_an_untrusted_workspace_cannot_switch_it_on_or_raise_the_cap(
    workspace: Path, agents_bin: Path
) -> None:
    user = Path(os.environ["MEMCLI_CONFIG_DIR"]) / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("[agent]\nown_model = false\nmax_flushes_per_day = 2\n")
    (workspace / "memcli.toml").write_text(
        "[agent]\nown_model = true\nmax_flushes_per_day = 5000\n"
    )
    r = memcli(workspace, "config", "--json")
    values = {key: row["value"] for key, row in json.loads(r.stdout)["settings"].items()}
    assert values["agent.own_model"] is False and values["agent.max_flushes_per_day"] == 2
    r = memcli(workspace, "agent", "status", "--json")
    assert json.loads(r.stdout)["flush"]["on"] is False


def test_the_daily_cap_holds_background_flushes(
    workspace: Path, agents_bin: Path, tmp_path: Path
) -> None:
    env = {"MEMCLI_AGENT_MAX_FLUSHES_PER_DAY": "1"}
    first, second = claude_session("s1"), claude_session("s2")
    r = memcli(workspace, "agent", "flush-session", "--session-id", "s1", "--transcript",
               str(first), **env)  # fmt: skip
    assert r.returncode == 0, r.stderr
    r = memcli(workspace, "agent", "flush-session", "--session-id", "s2", "--transcript",
               str(second), **env)  # fmt: skip
    assert r.returncode != 0
    log = (workspace / ".memcli" / "agent.log").read_text()
    assert "agent.max_flushes_per_day 1" in log
    assert len(calls(tmp_path)) == 1  # the second one asked nothing
    record = workspace / ".memcli" / "agent" / "sessions" / "s2.json"
    assert "failed" in json.loads(record.read_text())  # due again on a later day


def test_hooks_do_nothing_in_memcli_s_own_agent_child(
    workspace: Path, agents_bin: Path, tmp_path: Path
) -> None:
    """Were the child's hooks to run (a plugin's, say), memcli's would start nothing: no
    flush of the child's session, no briefing, no log line."""
    assert memcli(workspace, "agent", "install", "claude-code").returncode == 0
    settings = json.loads((workspace / ".claude" / "settings.json").read_text())
    end = settings["hooks"]["SessionEnd"][0]["hooks"][0]["command"]
    start = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    transcript = claude_session()
    payload = {"session_id": "s1", "transcript_path": str(transcript), "cwd": str(workspace)}
    log = workspace / ".memcli" / "agent.log"
    child = {**os.environ, "MEMCLI_AGENT_CHILD": "1"}
    for command in (end, start):
        proc = subprocess.run(
            command,
            shell=True,
            input=json.dumps(payload),
            text=True,
            capture_output=True,
            cwd=workspace,
            env=child,
            timeout=60,
        )
        assert proc.returncode == 0 and proc.stdout == ""
    assert not log.exists() or "s1" not in log.read_text()
    assert calls(tmp_path) == []
    # the same hook in the agent itself saves the session (through the stand-in claude)
    proc = run_hook(end, {**payload, "hook_event_name": "SessionEnd"}, workspace)
    assert proc.returncode == 0
    wait_for_log(workspace, "flushed session s1")
    assert [c["child"] for c in calls(tmp_path)] == ["1"]


def test_install_says_what_saves_sessions(workspace: Path, agents_bin: Path) -> None:
    r = memcli(workspace, "agent", "install", "claude-code")
    assert r.returncode == 0, r.stderr
    assert "sessions are not saved" not in r.stderr
    assert "saved as facts by the agent's own model and login: claude-code (claude)" in r.stderr
    assert "agent.own_model false" in r.stderr


def test_status_and_doctor_say_which_backend_saves_sessions(
    workspace: Path, agents_bin: Path
) -> None:
    status = json.loads(memcli(workspace, "status", "--json").stdout)["sessions"]
    assert status == {
        "on": True,
        "model": None,
        "backend": "agent",
        "agents": ["claude-code", "codex"],
        "why": None,
    }
    doctor = json.loads(memcli(workspace, "doctor", "--json").stdout)
    (llm,) = [c for c in doctor["checks"] if c["name"] == "llm"]
    assert "saved by the agent's own CLI (claude-code, codex)" in llm["summary"]
    named = memcli(workspace, "status", "--json", MEMCLI_LLM_MODEL="claude-code/sonnet")
    assert json.loads(named.stdout)["sessions"]["backend"] == "claude-code"
    (agents_bin / "claude").unlink()
    doctor = json.loads(
        memcli(workspace, "doctor", "--json", MEMCLI_LLM_MODEL="claude-code").stdout
    )
    (llm,) = [c for c in doctor["checks"] if c["name"] == "llm"]
    assert llm["status"] == "problem" and "'claude' is not found on PATH" in llm["summary"]


def test_llm_model_names_gemini_cli_with_a_folder_of_its_own(
    workspace: Path, agents_bin: Path, tmp_path: Path
) -> None:
    """``gemini -p`` runs with Gemini CLI's folder in memcli's own temporary one: the user's
    login (linked) and the way they log in, none of their hooks, servers or chats."""
    stand_in = agents_bin / "gemini"
    stand_in.write_text(STAND_IN.format(python=sys.executable, fact=FACT))
    stand_in.chmod(stand_in.stat().st_mode | stat.S_IXUSR)
    user = Path(os.environ["HOME"]) / ".gemini"
    user.mkdir()
    (user / "oauth_creds.json").write_text("{}")
    hooks = {"SessionEnd": [{"hooks": [{"type": "command", "command": "memcli agent hook x"}]}]}
    settings = {"security": {"auth": {"selectedType": "oauth-personal"}}, "hooks": hooks,
                "mcpServers": {"memcli": {"command": "memcli"}}}  # fmt: skip
    (user / "settings.json").write_text(json.dumps(settings))
    conv = json.dumps([{"role": "user", "content": "The staging database is db-stage-7."}])
    r = subprocess.run(
        [*MEMCLI, "-w", str(workspace), "flush", "-", "--json"],
        input=conv,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "MEMCLI_LLM_MODEL": "gemini"},
    )
    assert r.returncode == 0, r.stderr
    assert FACT in memory_text(workspace)
    call, seen = calls(tmp_path)
    args = call["args"]
    assert call["name"] == "gemini" and call["child"] == "1" and "db-stage-7" in call["prompt"]
    assert args[args.index("--model") + 1] == "flash" and "--output-format" in args
    assert call["cwd"].startswith(tempfile.gettempdir()) and not os.path.exists(call["cwd"])
    own = seen["settings"]
    assert own["hooksConfig"] == {"enabled": False} and "hooks" not in own
    assert "mcpServers" not in own and "read_file" in own["tools"]["exclude"]
    assert own["security"] == settings["security"]
    assert seen["files"] == ["oauth_creds.json", "settings.json"]
    assert "facts" in seen["system"]
