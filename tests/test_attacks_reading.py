"""A cloned repository trying to make memcli read or show what is not memory: ``.env`` files
and git's own files through ``index.include`` or a committed link, and a ``memcli.toml`` that
never ends. Each test clones the hostile repository for real and runs the real ``memcli``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent_helpers import MEMCLI, context_of, run_hook
from tests.test_attacks import hostile_clone, memcli

ENV_SECRET = "DATABASE_PASSWORD=envsecretmarker\n"


@pytest.mark.slow
@pytest.mark.parametrize(
    "include",
    [
        '[".env", ".git/*", ".git/**/*", "memory/**/*.md"]',
        '["**/*"]',
        '["**/.env*", "sub/.git/config"]',
    ],
)
def test_env_files_and_git_folders_are_never_indexed(tmp_path: Path, include: str) -> None:
    clone = hostile_clone(
        tmp_path,
        {
            "memcli.toml": f"[index]\ninclude = {include}\n",
            ".env": ENV_SECRET,
            "sub/.env.local": ENV_SECRET,
            "sub/.git/config": "[core]\nenvsecretmarker = 1\n",
        },
    )
    (clone / ".git" / "description").write_text("envsecretmarker in git's own file\n")
    run = memcli(clone, "search", "envsecretmarker", "--json")
    assert run.code == 1, run.out + run.err  # nothing matched
    assert run.json()["results"] == [] and "envsecretmarker" not in run.err
    for path in (".env", ".git/config", "sub/.env.local"):
        got = memcli(clone, "get", f"{path}:1")
        assert got.code == 2 and "envsecretmarker" not in got.out + got.err, path


@pytest.mark.slow
def test_a_link_out_of_memory_is_never_followed(tmp_path: Path) -> None:
    """``memory/e.md -> ../.env`` (and a link to a file outside memory/) shows in no way of
    reading: search, the context block, the prompt hook, get."""
    clone = hostile_clone(
        tmp_path,
        {".env": ENV_SECRET, "notes/plan.md": "- envsecretmarker plan outside memory\n"},
        links={"memory/e.md": "../.env", "memory/plan.md": "../notes/plan.md"},
    )
    run = memcli(clone, "search", "envsecretmarker", "--json")
    assert run.code == 1
    assert run.json()["results"] == []
    warnings = json.loads(run.out)["warnings"]
    assert any("memory/e.md: skipped: symlink leads out of memory/" in w for w in warnings)
    ctx = memcli(clone, "search", "DATABASE_PASSWORD", "--format", "context")
    assert "envsecretmarker" not in ctx.out
    hook = run_hook(
        [*MEMCLI, "agent", "hook", "prompt"],
        {"prompt": "What is the DATABASE_PASSWORD for the plan?", "cwd": str(clone)},
        clone,
    )
    assert "envsecretmarker" not in context_of(hook, "UserPromptSubmit")
    assert memcli(clone, "get", "memory/e.md:1").code == 2


def test_a_link_inside_memory_is_still_followed(tmp_path: Path) -> None:
    clone = hostile_clone(
        tmp_path,
        {"memory/team/deploy.md": "- Deploys go out on Tuesdays.\n"},
        links={"memory/deploy.md": "team/deploy.md"},
    )
    run = memcli(clone, "search", "Tuesdays", "--json")
    assert run.code == 0
    assert {r["path"] for r in run.json()["results"]} == {
        "memory/team/deploy.md",
        "memory/deploy.md",
    }
