"""git run on a repository that someone else chose.

A clone may carry a folder shaped like a git folder (``HEAD``, ``objects/``, ``refs/`` and a
``config``): git's own discovery takes it for the repository when it is the workspace or a
folder above it, and its config then names commands for git to run (``core.fsmonitor``,
``core.hooksPath`` with committed hooks, ``core.sshCommand`` for a fetch, ``gpg.program``
with ``log.showSignature``). With git 2.39.5 the config must also set ``core.worktree``: a
folder git takes for a bare repository runs no fsmonitor. memcli finds the repository itself
(the nearest ``.git`` above the workspace), checks it, and names it on every git call, so no
command of memcli's runs what such a config names. The layouts:

* ``workspace``: the workspace folder is the fake git folder;
* ``parent``: a folder above the workspace is;
* ``gitfile``: the workspace has a ``.git`` file naming a fake git folder the clone holds
  (git refuses to check out a path named ``.git``, so a copy or an archive brings that file,
  not the clone: :func:`test_a_git_file_cannot_come_through_a_clone`);
* ``owner``: the repository above the workspace belongs to another user (git refuses it; a
  git folder named explicitly skips that check, so memcli makes it).

Each test builds the repository for real and runs the real ``memcli`` (and the real MCP
server for its ``status`` tool).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.test_attacks import git, memcli

MEMORY = "# Memory\n\n- The session cache is Valkey.\n"
HOOK_NAMES = (
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "post-index-change",
    "reference-transaction",
    "post-checkout",
    "post-merge",
    "pre-push",
)
OTHER_UID = 54321


def evil_config(pwned: Path, gpg: Path, worktree: str | None) -> str:
    """A git config whose every command setting touches ``pwned``."""
    core = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
    if worktree is not None:
        core += f"\tworktree = {worktree}\n"
    core += f'\tfsmonitor = "touch {pwned}; false"\n'
    core += "\thooksPath = hooks\n"
    core += f'\tsshCommand = "touch {pwned}; false"\n'
    return core + (
        '[remote "origin"]\n\turl = ssh://git.invalid/team/memory.git\n'
        "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
        '[branch "main"]\n\tremote = origin\n\tmerge = refs/heads/main\n'
        f"[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {gpg}\n"
    )


def forge_git_dir(
    tmp_path: Path, dest: Path, worktree: str | None, memory: str = "memory/MEMORY.md"
) -> None:
    """Write at ``dest`` a git folder (no ``.git`` in its name) with a signed commit of
    ``memory`` on ``main``, a config naming commands, and executable hooks that touch
    ``PWNED``."""
    pwned, gpg = tmp_path / "PWNED", tmp_path / "gpg"
    gpg.write_text(f"#!/bin/sh\ntouch {pwned}\nexit 1\n")
    gpg.chmod(0o755)
    forge = tmp_path / "forge"
    git(tmp_path, "init", "-q", "-b", "main", str(forge))
    (forge / memory).parent.mkdir(parents=True)
    (forge / memory).write_text(MEMORY)
    git(forge, "add", "-A")
    git(forge, "commit", "-qm", "memory")
    tree = git(forge, "rev-parse", "HEAD^{tree}").strip()
    signed = (
        f"tree {tree}\nauthor a <a@b> 1700000000 +0000\ncommitter a <a@b> 1700000000 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n AAAA\n -----END PGP SIGNATURE-----\n"
        "\nsigned\n"
    )
    sha = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
        cwd=forge,
        input=signed,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    git(forge, "update-ref", "refs/heads/main", sha)
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("HEAD", "index", "objects", "refs"):
        source = forge / ".git" / name
        if source.is_dir():
            shutil.copytree(source, dest / name, dirs_exist_ok=True)
        else:
            shutil.copy(source, dest / name)
    (dest / "config").write_text(evil_config(pwned, gpg, worktree))
    (dest / "hooks").mkdir(exist_ok=True)
    for name in HOOK_NAMES:
        hook = dest / "hooks" / name
        hook.write_text(f"#!/bin/sh\ntouch {pwned}\n")
        hook.chmod(0o755)


def clone_of(tmp_path: Path, build: Callable[[Path], None]) -> Path:
    """A repository ``build`` fills, committed and cloned as a user would."""
    origin = tmp_path / "origin"
    git(tmp_path, "init", "-q", "-b", "main", str(origin))
    build(origin)
    git(origin, "add", "-A")
    git(origin, "commit", "-qm", "team memory")
    git(tmp_path, "clone", "-q", str(origin), "clone")
    return tmp_path / "clone"


@dataclass
class Layout:
    ws: Path  # the workspace memcli runs in
    fake: Path | None  # the folder a git config came from (unchanged by memcli)
    real: Path | None  # the repository memcli must use (None: none may be used)


#: layout: (the fake git folder, its core.worktree, the file its commit holds, the workspace)
FAKES = {
    "workspace": ("notes", ".", "memory/MEMORY.md", "notes"),
    "parent": ("team", ".", "notes/memory/MEMORY.md", "team/notes"),
    "gitfile": ("evil", None, "memory/MEMORY.md", "notes"),
}


def make_layout(tmp_path: Path, kind: str) -> Layout:
    if kind in FAKES:
        fake, worktree, forged, ws = FAKES[kind]

        def build(origin: Path) -> None:
            forge_git_dir(tmp_path, origin / fake, worktree, forged)
            (origin / ws / "memory").mkdir(parents=True, exist_ok=True)
            (origin / ws / "memory" / "MEMORY.md").write_text(MEMORY)

        clone = clone_of(tmp_path, build)
        if kind == "gitfile":  # clone/notes/.git names clone/evil
            (clone / "notes" / ".git").write_text("gitdir: ../evil\n")
        return Layout(clone / ws, clone / fake, None if kind == "gitfile" else clone)
    assert kind == "owner"  # shared/.git belongs to another user; shared/notes is the workspace
    if os.geteuid() != 0:
        pytest.skip("needs root to give a repository to another user")
    shared = tmp_path / "shared"
    git(tmp_path, "init", "-q", "-b", "main", str(shared))
    (shared / "notes" / "memory").mkdir(parents=True)
    (shared / "notes" / "memory" / "MEMORY.md").write_text(MEMORY)
    git(shared, "add", "-A")
    git(shared, "commit", "-qm", "memory")
    forge_git_dir(tmp_path, tmp_path / "forged", None)  # the gpg script and hooks
    config = evil_config(tmp_path / "PWNED", tmp_path / "gpg", None).replace(
        "hooksPath = hooks", f"hooksPath = {tmp_path / 'forged' / 'hooks'}"
    )
    (shared / ".git" / "config").write_text(config)
    for path in (shared, *shared.rglob("*")):
        os.lchown(path, OTHER_UID, OTHER_UID)
    return Layout(shared / "notes", shared / ".git", None)


def snapshot(folder: Path | None, ws: Path) -> dict[str, bytes]:
    """Every file of ``folder`` but the workspace's own (memory files, .memcli)."""
    if folder is None:
        return {}
    skip = (ws / "memory", ws / ".memcli")
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and not any(s == p or s in p.parents for s in skip)
    }


LAYOUTS = ["workspace", "parent", "gitfile", "owner"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["workspace", "parent", "gitfile"])
def test_git_itself_takes_the_chosen_folder(tmp_path: Path, kind: str) -> None:
    """The layouts are live: plain git run in the workspace runs the config's command (in
    the owner layout git refuses the repository by itself)."""
    layout = make_layout(tmp_path, kind)
    subprocess.run(["git", "status"], cwd=layout.ws, capture_output=True, check=False)
    assert (tmp_path / "PWNED").exists()


def _text() -> dict[str, Any]:
    return {"capture_output": True, "text": True, "check": False}


def test_a_git_file_cannot_come_through_a_clone(tmp_path: Path) -> None:
    """git refuses to check out a path named ``.git``: a ``.git`` file arrives only by a copy."""
    origin = tmp_path / "origin"
    git(tmp_path, "init", "-q", "-b", "main", str(origin))
    blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"], cwd=origin, input="gitdir: ../evil\n", **_text()
    ).stdout.strip()
    inner = subprocess.run(
        ["git", "mktree"], cwd=origin, input=f"100644 blob {blob}\t.git\n", **_text()
    ).stdout.strip()
    top = subprocess.run(
        ["git", "mktree"], cwd=origin, input=f"040000 tree {inner}\tnotes\n", **_text()
    ).stdout.strip()
    commit = git(origin, "commit-tree", top, "-m", "a .git file").strip()
    git(origin, "update-ref", "refs/heads/main", commit)
    subprocess.run(["git", "clone", "-q", str(origin), "clone"], cwd=tmp_path, **_text())
    assert not (tmp_path / "clone" / "notes" / ".git").exists()


COMMANDS: list[tuple[str, list[str]]] = [
    ("status", ["status"]),
    ("diff", ["diff"]),
    ("log", ["log"]),
    ("add --commit", ["add", "--commit", "Deploys go out on Tuesdays."]),
    ("forget --commit", ["forget", "memory/MEMORY.md:3", "--reason", "wrong", "--commit"]),
    ("sync", ["sync"]),
    ("hooks install", ["hooks", "install"]),
]


@pytest.mark.slow
@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize(("name", "args"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_no_command_runs_what_a_chosen_git_config_names(
    tmp_path: Path, kind: str, name: str, args: list[str]
) -> None:
    layout = make_layout(tmp_path, kind)
    before = snapshot(layout.fake, layout.ws)
    run = memcli(layout.ws, *args)
    assert not (tmp_path / "PWNED").exists(), (run.code, run.err)
    assert snapshot(layout.fake, layout.ws) == before  # nothing written to the chosen folder
    if layout.real is None:  # no repository memcli may use: git commands say so
        if name != "status":
            assert run.code != 0 and "git" in run.err, (run.code, run.err)
        return
    if name in ("add --commit", "forget --commit", "sync", "hooks install"):
        assert run.code == 0, run.err  # done, on the user's real repository:
    if name == "add --commit":
        assert "Tuesdays" in git(layout.real, "show", "HEAD")
    if name == "forget --commit":
        assert "retracted" in git(layout.real, "show", "HEAD")
    if name == "hooks install":
        assert "memcli-hook" in (layout.real / ".git" / "hooks" / "post-commit").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["workspace", "gitfile"])  # parent: as workspace; owner: as status
def test_the_mcp_status_tool_runs_nothing(tmp_path: Path, kind: str) -> None:
    pytest.importorskip("mcp")
    from tests.test_mcp import session, text_of

    layout = make_layout(tmp_path, kind)

    async def body(s: Any) -> str:
        return text_of(await s.call_tool("status", {}))

    answer = session(layout.ws, body, prewarmed=True)
    assert not (tmp_path / "PWNED").exists()
    if layout.real is not None:
        assert '"branch": "main"' in answer  # the user's repository was asked
