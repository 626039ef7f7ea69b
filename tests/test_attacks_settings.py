"""A cloned repository's ``memcli.toml`` spending the user's money, holding processes, wiping
shared state, swapping the prompt behind a trusted file, or never ending. Each test clones the
hostile repository for real and runs the real ``memcli`` against a recording loopback server.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from memcli.config import REGISTRY
from tests.stub_openai import StubOpenAI
from tests.test_attacks import hostile_clone, memcli


def llm_env(server: StubOpenAI) -> dict[str, str]:
    """The user's own LLM settings (environment): always honoured."""
    return {
        "MEMCLI_LLM_MODEL": "openai/stub-chat",
        "MEMCLI_LLM_API_BASE": server.base_url,
        "OPENAI_API_KEY": "sk-user",
    }


def conversation(chars: int) -> str:
    turns: list[dict[str, str]] = []
    n = 0
    while sum(len(t["content"]) for t in turns) < chars:
        n += 1
        turns.append({"role": "user", "content": f"Turn {n}: the deploy runs on Tuesdays. " * 8})
    return json.dumps(turns)


@pytest.mark.slow
def test_untrusted_llm_limits_cannot_multiply_requests(
    tmp_path: Path, openai_stub: StubOpenAI
) -> None:
    toml = "[llm]\nmax_chars = 100\nmax_requests = 10000\nmax_retries = 20\n"
    clone = hostile_clone(tmp_path, {"memcli.toml": toml})
    run = memcli(
        clone, "flush", "--dry-run", "-", input=conversation(30_000), **llm_env(openai_stub)
    )
    assert run.code == 0, run.err
    sent = openai_stub.count("/chat/completions")
    assert 1 <= sent <= 6, sent  # 30k characters in parts of near 8,000 (300+ before)
    assert "keeping llm.max_chars, llm.max_requests, llm.max_retries within safe bounds" in run.err
    got = memcli(clone, "config", "get", "--json", "llm.max_chars").json()
    assert got["value"] == 8000
    # once trusted, the file's values apply as written
    assert memcli(clone, "trust").code == 0
    assert memcli(clone, "config", "get", "--json", "llm.max_chars").json()["value"] == 100


@pytest.mark.parametrize(
    ("toml", "key", "safe"),
    [
        ("[cache]\nmax_mb = 0\n", "cache.max_mb", 512.0),
        ("[engine]\nautostart = true\nidle_timeout = 0\n", "engine.autostart", False),
        ("[engine]\nautostart = true\nidle_timeout = 0\n", "engine.idle_timeout", 1.0),
        ("[agent]\nbriefing_tokens = 100000\n", "agent.briefing_tokens", 4000),
        ("[index]\nchunk_chars = 50\n", "index.chunk_chars", 200),
    ],
)
def test_untrusted_shared_state_and_processes_are_gated_or_clamped(
    tmp_path: Path, toml: str, key: str, safe: object
) -> None:
    clone = hostile_clone(tmp_path, {"memcli.toml": toml})
    got = memcli(clone, "config", "get", "--json", key)
    assert got.code == 0, got.err
    assert got.json()["value"] == safe


@pytest.mark.slow
def test_an_untrusted_engine_setting_starts_no_process(tmp_path: Path) -> None:
    clone = hostile_clone(
        tmp_path, {"memcli.toml": "[engine]\nautostart = true\nidle_timeout = 0\n"}
    )
    assert memcli(clone, "search", "Valkey").code == 0
    time.sleep(0.5)
    run_dir = Path(os.environ["MEMCLI_RUNTIME_DIR"])
    assert not run_dir.exists() or not list(run_dir.glob("*.sock"))


def test_every_costly_setting_is_gated_or_clamped() -> None:
    """The registry review, held: settings that spend money (requests, retries, chunk count,
    tokens handed to an agent), hold a process or wait are trust-gated or have a safe range."""
    costly = {
        "embedding.batch_size",
        "embedding.timeout",
        "embedding.max_retries",
        "llm.timeout",
        "llm.max_retries",
        "llm.max_chars",
        "llm.max_requests",
        "index.max_file_mb",
        "index.chunk_chars",
        "index.lock_timeout",
        "git.sync_timeout",
        "engine.idle_timeout",
        "agent.briefing_tokens",
        "agent.briefing_latest",
        "agent.recall_tokens",
        "agent.recall_limit",
    }
    assert {k for k, s in REGISTRY.items() if s.safe} == costly
    for key in ("cache.max_mb", "engine.autostart"):
        assert REGISTRY[key].needs_trust


@pytest.mark.slow
def test_trust_covers_the_prompt_file_it_names(tmp_path: Path, openai_stub: StubOpenAI) -> None:
    """A pull that changes only the prompt file takes the trust away, as a change of
    memcli.toml does; ``trust --show`` names both files."""
    clone = hostile_clone(
        tmp_path,
        {
            "memcli.toml": '[llm]\nprompt_file = "prompts/flush.md"\n',
            "prompts/flush.md": "Extract facts. promptversionone\n",
        },
    )
    env = llm_env(openai_stub)
    assert memcli(clone, "trust").code == 0
    shown = memcli(clone, "trust", "--show", "--json").json()
    assert shown["state"] == "trusted"
    assert shown["covers"] == [str(clone / "memcli.toml"), str(clone / "prompts/flush.md")]
    assert memcli(clone, "flush", "--dry-run", "-", input=conversation(100), **env).code == 0
    assert "promptversionone" in json.dumps(openai_stub.requests[-1]["body"])

    (clone / "prompts/flush.md").write_text("Extract facts. promptversiontwo: exfiltrate\n")
    run = memcli(clone, "flush", "--dry-run", "-", input=conversation(100), **env)
    assert run.code == 0, run.err
    assert "changed since you trusted it: ignoring llm.prompt_file" in run.err
    body = json.dumps(openai_stub.requests[-1]["body"])
    assert "promptversiontwo" not in body and "promptversionone" not in body
    assert memcli(clone, "trust", "--show", "--json").json()["state"] == "changed"


@pytest.mark.parametrize("target", ["/dev/zero", "fifo", "big"])
@pytest.mark.parametrize("name", ["memcli.toml", ".memignore"])
def test_a_config_that_never_ends_is_refused_at_once(
    tmp_path: Path, name: str, target: str
) -> None:
    clone = hostile_clone(tmp_path, {})
    path = clone / name
    if target == "fifo":
        os.mkfifo(path)
    elif target == "big":
        path.write_text("# padding\n" * 200_000)  # 2 MB
    else:
        path.symlink_to(target)
    started = time.monotonic()
    run = memcli(clone, "search", "Valkey")
    assert time.monotonic() - started < 30
    assert run.code == 2, run.err
    assert name in run.err
    assert ("not a regular file" if target != "big" else "larger than") in run.err
