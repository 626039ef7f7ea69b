"""Files memcli reads for an agent, as a hostile project or a swapped file leaves them, with the
real ``memcli`` processes:

- ``agent install`` and ``uninstall`` keep an instructions or settings file's line endings
  (CRLF stays CRLF; uninstall gives back the very bytes);
- a FIFO where a settings or instructions file belongs, or a settings file nested deeper than
  any parser goes, is one line of bad input (exit 2), with nothing written;
- the detached ``agent flush-session``, and the ``--due`` flushes of failed sessions' records,
  read a transcript only through the hook's checks (no link out, no FIFO).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import prewarmed
from tests.agent_helpers import MEMCLI
from tests.stub_openai import StubOpenAI
from tests.test_attacks import CONV, Run

pytestmark = pytest.mark.slow

SECRET = "sEcReT" + "Conv4471"  # built at run time: no scanner takes this file for a leak


def run(root: Path, *args: str, timeout: float = 30) -> Run:
    """The real memcli in ``root``, with no provider (nothing here loads one)."""
    proc = subprocess.run(
        [*MEMCLI, *args], cwd=root, capture_output=True, text=True, timeout=timeout
    )
    return Run(proc)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A workspace that is also the agent's project (no git: as a folder that was copied)."""
    root = tmp_path / "project"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "MEMORY.md").write_text("# Memory\n\n- The cache is Valkey.\n")
    return root


def files_of(root: Path) -> dict[str, bytes | str]:
    """Every file under ``root`` but memcli's own folder: its bytes (a FIFO: 'fifo')."""
    out: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(".memcli") or path.is_dir():
            continue
        out[rel] = "fifo" if path.is_fifo() else path.read_bytes()
    return out


# -- line endings --------------------------------------------------------------------------
CRLF_FILES = {
    "claude-code": {
        "CLAUDE.md": b"# Shop\r\n\r\nRun make test before pushing.\r\n",
        ".claude/settings.json": b'{\r\n  "model": "opus"\r\n}\r\n',
    },
    "codex": {
        "AGENTS.md": b"# Shop\r\n\r\nRun make test before pushing.\r\n",
        ".codex/config.toml": b'model = "o3"\r\n\r\n[tui]\r\ntheme = "dark"\r\n',
    },
}


@pytest.mark.parametrize("agent", sorted(CRLF_FILES))
def test_install_keeps_crlf_and_uninstall_gives_back_the_bytes(project: Path, agent: str) -> None:
    for rel, data in CRLF_FILES[agent].items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_bytes(data)
    r = run(project, "agent", "install", agent)
    assert r.code == 0, r.err
    for rel in CRLF_FILES[agent]:
        written = (project / rel).read_bytes()
        assert written != CRLF_FILES[agent][rel], rel  # memcli's entries went in
        assert re.search(rb"(?<!\r)\n", written) is None, (rel, written)  # every line CRLF
    r = run(project, "agent", "uninstall", agent)
    assert r.code == 0, r.err
    for rel, data in CRLF_FILES[agent].items():
        assert (project / rel).read_bytes() == data, rel


# -- files that never end -------------------------------------------------------------------
@pytest.mark.parametrize("rel", ["CLAUDE.md", ".claude/settings.json"])
def test_a_fifo_for_a_file_install_reads_is_refused_at_once(project: Path, rel: str) -> None:
    (project / rel).parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(project / rel)
    before = files_of(project)
    for action in ("install", "uninstall"):
        r = run(project, "agent", action, "claude-code", timeout=20)  # not for ever
        assert r.code == 2, (action, r.code, r.err)
        assert "not a regular file" in r.err and len(r.err.strip().splitlines()) <= 2, r.err
        assert files_of(project) == before


def test_a_settings_file_nested_too_deep_is_bad_input(project: Path) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    before = files_of(project)
    r = run(project, "agent", "install", "claude-code")
    assert r.code == 2, (r.code, r.err)
    assert "nested too deeply" in r.err and len(r.err.strip().splitlines()) <= 2, r.err
    assert "--debug" not in r.err
    assert files_of(project) == before


# -- transcripts read again by the detached flush -----------------------------------------
def flush(root: Path, *args: str) -> Run:
    """``memcli agent flush-session ARGS`` as a hook starts it (LiteLLM imported already:
    :mod:`tests.prewarmed`), killed after 20 s (a FIFO read would wait for ever)."""
    command = ["agent", "flush-session", *args]
    return Run(prewarmed.run(command, root, dict(os.environ), timeout=20))


def log_of(root: Path) -> str:
    return (root / ".memcli" / "agent.log").read_text()


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[StubOpenAI]:
    with StubOpenAI() as stub:
        monkeypatch.setenv("MEMCLI_LLM_MODEL", "openai/stub-chat")
        monkeypatch.setenv("MEMCLI_LLM_API_BASE", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
        yield stub


def secret_conversation(tmp_path: Path) -> Path:
    """A conversation of the user's outside the workspace and the agents' folders."""
    path = tmp_path / "private" / "conv.json"
    path.parent.mkdir()
    path.write_text(CONV.replace("Valkey", SECRET))
    return path


def test_the_detached_flush_checks_the_transcript_again(
    project: Path, tmp_path: Path, server: StubOpenAI
) -> None:
    """The hook checked ``memory/t.json`` and started ``flush-session``; by the time it reads
    the file, it is a link to a file outside, or a FIFO: nothing is read, nothing sent."""
    secret = secret_conversation(tmp_path)
    swapped = {"t.json": lambda p: p.symlink_to(secret), "fifo.json": os.mkfifo}
    for i, (name, make) in enumerate(swapped.items()):
        path = project / "memory" / name
        make(path)
        r = flush(
            project, "--event", "session-end", "--session-id", f"s{i}", "--transcript", str(path)
        )
        assert r.code == 0, r.err  # a hook's flush: the failure is in the log
        last = log_of(project).splitlines()[-1]
        assert f"flush of session s{i}: transcript_path" in last, last
    assert server.requests == []


def test_due_flushes_read_only_what_the_hook_would(
    project: Path, tmp_path: Path, server: StubOpenAI
) -> None:
    """A workspace copied with its ``.memcli/`` brings failed sessions' records naming any
    file: ``--due`` reads none of them; a record naming a file the hook reads is flushed."""
    secret = secret_conversation(tmp_path)
    os.mkfifo(project / "memory" / "fifo.json")
    (project / "memory" / "ok.json").write_text(CONV)
    sessions = project / ".memcli" / "agent" / "sessions"
    sessions.mkdir(parents=True)
    for name, transcript in (
        ("outside", str(secret)),
        ("fifo", str(project / "memory" / "fifo.json")),
        ("ok", "memory/ok.json"),
    ):
        record = {"session": name, "transcript": transcript, "turns": [], "failed": "down"}
        (sessions / f"{name}.json").write_text(json.dumps(record))
    server.chat_replies = ['{"facts": []}']
    r = flush(project, "--event", "session-start", "--due")
    assert r.code == 0, r.err
    log = log_of(project)
    assert "flushed session ok" in log, log
    assert "flush of session outside: transcript_path" in log, log
    assert "flush of session fifo: transcript_path" in log, log
    assert len(server.requests) == 1 and SECRET not in json.dumps(server.requests)
    again = flush(project, "--event", "session-start", "--due")
    assert again.code == 0 and len(server.requests) == 1  # refused once: not tried again
