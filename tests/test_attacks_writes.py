"""A cloned repository steering memcli's writes at files that are not memory: lifecycle
commands aimed at ``CLAUDE.md`` or ``README.md``, and ``agent install`` aimed through
committed links at the user's credentials and shell profile. Each test clones the repository
for real and runs the real ``memcli`` (and the real MCP server for the MCP tools).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_attacks import git, hostile_clone, memcli

DOC = "# Project\n\n- Run the tests before pushing.\n- Deploys go out on Tuesdays.\n"


@pytest.mark.parametrize(
    "args",
    [
        ["forget", "CLAUDE.md:3", "--reason", "wrong"],
        ["forget", "README.md:3", "--reason", "wrong", "--purge"],
        ["supersede", "CLAUDE.md:4", "Deploys go out on Wednesdays."],
        ["confirm", "README.md:4"],
    ],
    ids=["forget", "forget --purge", "supersede", "confirm"],
)
def test_lifecycle_commands_change_only_memory_files(tmp_path: Path, args: list[str]) -> None:
    clone = hostile_clone(
        tmp_path,
        {
            "CLAUDE.md": DOC,
            "README.md": DOC,
            "memcli.toml": '[index]\ninclude = ["memory/**/*.md", "*.md"]\n',
        },
    )
    run = memcli(clone, *args)
    assert run.code == 2, run.out + run.err
    assert "is not a memory file" in run.err and len(run.err.strip().splitlines()) <= 2
    assert (clone / "CLAUDE.md").read_bytes() == DOC.encode()
    assert (clone / "README.md").read_bytes() == DOC.encode()


def test_a_fact_found_by_id_outside_memory_is_refused(tmp_path: Path) -> None:
    """An id names a fact in any indexed file: one outside memory/ is refused the same."""
    from memcli.notes.entryparse import entry_id

    clone = hostile_clone(
        tmp_path,
        {"CLAUDE.md": DOC, "memcli.toml": '[index]\ninclude = ["memory/**/*.md", "*.md"]\n'},
    )
    fid = entry_id("Deploys go out on Tuesdays.")
    assert memcli(clone, "search", "Tuesdays").code == 0  # indexed
    run = memcli(clone, "forget", fid, "--reason", "wrong", "--purge")
    assert run.code == 2 and "is not a memory file" in run.err
    assert (clone / "CLAUDE.md").read_bytes() == DOC.encode()


@pytest.mark.parametrize(
    ("link", "target", "ref"),
    [("memory", ".", "memory/CLAUDE.md:3"), ("memory/docs", "..", "memory/docs/CLAUDE.md:3")],
    ids=["memory is a link to the top", "a folder in memory links out"],
)
def test_a_committed_link_does_not_make_claude_md_a_memory_file(
    tmp_path: Path, link: str, target: str, ref: str
) -> None:
    """``memory`` committed as a link to the workspace's top (or a folder in it linking
    out): ``memory/CLAUDE.md`` is CLAUDE.md, and stays untouched."""
    origin = tmp_path / "origin"
    git(tmp_path, "init", "-q", "-b", "main", str(origin))
    (origin / "CLAUDE.md").write_text(DOC)
    if link != "memory":
        (origin / "memory").mkdir()
        (origin / "memory" / "MEMORY.md").write_text("# Memory\n\n- A fact.\n")
    (origin / link).symlink_to(target)
    git(origin, "add", "-A")
    git(origin, "commit", "-qm", "team memory")
    git(tmp_path, "clone", "-q", str(origin), "clone")
    clone = tmp_path / "clone"
    for args in (["forget", ref, "--reason", "wrong", "--purge"], ["confirm", ref]):
        run = memcli(clone, *args)
        assert run.code == 2, run.out + run.err
        assert "is not a memory file" in run.err and len(run.err.strip().splitlines()) <= 2
    assert (clone / "CLAUDE.md").read_bytes() == DOC.encode()


@pytest.mark.slow
def test_the_mcp_lifecycle_tools_change_only_memory_files(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from tests.test_mcp import session, text_of

    clone = hostile_clone(tmp_path, {"CLAUDE.md": DOC})

    async def body(s: Any) -> list[Any]:
        return [
            await s.call_tool("forget", {"fact": "CLAUDE.md:3", "reason": "wrong"}),
            await s.call_tool("supersede", {"fact": "CLAUDE.md:4", "text": "Wednesdays."}),
            await s.call_tool("confirm", {"fact": "CLAUDE.md:3"}),
        ]

    for result in session(clone, body, prewarmed=True):
        assert result.is_error and "is not a memory file" in text_of(result)
    assert (clone / "CLAUDE.md").read_bytes() == DOC.encode()


SECRET = '{"auths": {"registry.example": {"auth": "c2VjcmV0bWFya2Vy"}}}\n'
PROFILE = "export AWS_SECRET_ACCESS_KEY=profilemarker\n"


@pytest.mark.parametrize(
    ("agent", "links"),
    [
        ("claude-code", {".claude/settings.json": "docker.json"}),
        ("claude-code", {"CLAUDE.md": "profile"}),
        ("claude-code", {".mcp.json": "docker.json"}),
        ("claude-code", {".claude": "home-claude"}),
        ("codex", {"AGENTS.md": "profile"}),
    ],
    ids=["settings.json", "CLAUDE.md", ".mcp.json", ".claude folder", "AGENTS.md"],
)
@pytest.mark.parametrize("action", ["install", "uninstall"])
def test_agent_install_never_goes_through_a_committed_link(
    tmp_path: Path, agent: str, links: dict[str, str], action: str
) -> None:
    private = tmp_path / "private"
    private.mkdir()
    (private / "docker.json").write_text(SECRET)
    (private / "profile").write_text(PROFILE)
    (private / "home-claude").mkdir()
    (private / "home-claude" / "settings.json").write_text(SECRET)
    before = {p: p.read_bytes() for p in private.rglob("*") if p.is_file()}
    clone = hostile_clone(
        tmp_path, {}, links={rel: str(private / target) for rel, target in links.items()}
    )
    run = memcli(clone, "agent", action, agent)
    assert run.code == 2, run.out + run.err
    assert "is a link" in run.err and len(run.err.strip().splitlines()) <= 2
    assert {p: p.read_bytes() for p in private.rglob("*") if p.is_file()} == before
    changed = git(clone, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert [line for line in changed if not line.startswith("?? .memcli/")] == []
    plain = [
        p
        for p in clone.rglob("*")
        if p.is_file()
        and ".git" not in p.parts
        and not p.is_symlink()
        and not any((clone / q).is_symlink() for q in p.relative_to(clone).parents)
    ]
    for path in plain:
        data = path.read_bytes()
        assert b"c2VjcmV0bWFya2Vy" not in data and b"profilemarker" not in data, path


def test_a_link_inside_the_project_is_kept_and_its_file_written(tmp_path: Path) -> None:
    """``CLAUDE.md -> AGENTS.md`` (one instructions file for both agents) is a common layout:
    install writes the policy into AGENTS.md and CLAUDE.md stays a link; uninstall takes it
    out again, byte for byte."""
    agents = "# Agents\n\nRun the tests before pushing.\n"
    clone = hostile_clone(tmp_path, {"AGENTS.md": agents}, links={"CLAUDE.md": "AGENTS.md"})
    run = memcli(clone, "agent", "install", "claude-code")
    assert run.code == 0, run.err
    assert (clone / "CLAUDE.md").is_symlink()
    assert "memcli:begin" in (clone / "AGENTS.md").read_text()
    assert memcli(clone, "agent", "uninstall", "claude-code").code == 0
    assert (clone / "CLAUDE.md").is_symlink()
    assert (clone / "AGENTS.md").read_text() == agents
