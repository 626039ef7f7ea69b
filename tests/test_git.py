"""Git history of memory: commit_paths, init's .gitattributes, add --commit, diff, log, status.

Every test works on real repositories created in tmp_path with the git executable.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memcli.errors import BadInput, GitError
from memcli.git.commit import commit_paths
from memcli.git.diff import diff
from memcli.notes.workspace import init_workspace
from tests.conftest import Cli


# -- helpers (also used by test_git_hooks.py and test_git_sync.py) --------------------------
def git(cwd: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def make_repo(path: Path, *, bare: bool = False) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main", *(["--bare"] if bare else []))
    return path


def repo_workspace(path: Path) -> Path:
    """A git repository with an initialised, committed workspace at its top."""
    make_repo(path)
    init_workspace(path)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "init memory")
    return path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(text)


def head(cwd: Path) -> str:
    return git(cwd, "rev-parse", "HEAD").strip()


def committed_files(cwd: Path, rev: str = "HEAD") -> list[str]:
    out = git(cwd, "show", "--name-only", "--format=", rev)
    return sorted(p for p in out.splitlines() if p)


# -- commit_paths -----------------------------------------------------------------------------
def test_commit_paths_commits_only_the_given_files(tmp_path: Path) -> None:
    root = repo_workspace(tmp_path / "r")
    fact = write(root / "memory" / "2026-11-22.md", "- 10:00 a fact\n")
    other = write(root / "notes.txt", "staged by the user\n")
    git(root, "add", "notes.txt")
    append(root / "memory" / "MEMORY.md", "- unstaged evergreen edit\n")

    sha = commit_paths(root, [fact], "memory: a fact")

    assert sha == head(root)
    assert committed_files(root) == ["memory/2026-11-22.md"]
    assert git(root, "log", "-1", "--format=%s").strip() == "memory: a fact"
    # the user's staged file is still staged, the other edit still unstaged
    assert git(root, "diff", "--cached", "--name-only").split() == [other.name]
    assert git(root, "diff", "--name-only").split() == ["memory/MEMORY.md"]


def test_commit_paths_nothing_to_commit_returns_empty(tmp_path: Path) -> None:
    root = repo_workspace(tmp_path / "r")
    before = head(root)
    assert commit_paths(root, [root / "memory" / "MEMORY.md"], "m") == ""
    assert commit_paths(root, [root / "memory" / "never-existed.md"], "m") == ""
    assert head(root) == before


def test_commit_paths_deletion_and_relative_paths_in_a_subfolder_workspace(
    tmp_path: Path,
) -> None:
    top = make_repo(tmp_path / "mono")
    ws = top / "team" / "mem"
    init_workspace(ws)
    sha1 = commit_paths(ws, [Path("memory/MEMORY.md")], "first")  # relative to ws
    assert sha1 and committed_files(top) == ["team/mem/memory/MEMORY.md"]
    (ws / "memory" / "MEMORY.md").unlink()
    sha2 = commit_paths(ws, [ws / "memory" / "MEMORY.md"], "drop")
    assert sha2 != sha1
    assert git(top, "ls-files").strip() == ""


def test_commit_paths_outside_git_or_outside_repo(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    init_workspace(plain)
    with pytest.raises(GitError, match="not in a git repository"):
        commit_paths(plain, [plain / "memory" / "MEMORY.md"], "m")
    root = repo_workspace(tmp_path / "r")
    with pytest.raises(GitError, match="not inside the git repository"):
        commit_paths(root, [plain / "memory" / "MEMORY.md"], "m")


# -- init --------------------------------------------------------------------------------------
def test_init_writes_union_gitattributes_only_in_a_repo(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    created = init_workspace(plain)
    assert ".gitattributes" not in created
    assert not (plain / ".gitattributes").exists()

    top = make_repo(tmp_path / "mono")
    ws = top / "sub"
    assert ".gitattributes" in init_workspace(ws)
    assert init_workspace(ws) == []  # idempotent
    paths = {
        "sub/memory/2026-11-22.md": "union",
        "sub/memory/coder/2026-11-22.md": "union",
        "sub/memory/a/b/2026-01-02-standup.md": "union",
        "sub/memory/MEMORY.md": "unspecified",
        "sub/memory/architecture.md": "unspecified",
        "sub/memory/2026-11-22.txt": "unspecified",
        "memory/2026-11-22.md": "unspecified",  # outside the workspace
    }
    out = git(top, "check-attr", "merge", "--", *paths)
    got = {line.split(": ")[0]: line.split(": ")[-1] for line in out.splitlines()}
    assert got == paths


def test_init_git_and_hooks(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    r = Cli(root)("init", "--git", "--hooks", "--json")
    assert r.exit_code == 0, r.stderr
    payload = r.json()
    assert "git repository" in payload["created"]
    assert ".gitattributes" in payload["created"]
    assert (root / ".git").is_dir()
    assert {h["name"]: h["state"] for h in payload["hooks"]} == {
        "post-commit": "installed",
        "post-merge": "installed",
        "post-checkout": "installed",
        "post-rewrite": "installed",
    }
    # again: nothing new, still a success
    again = Cli(root)("init", "--git", "--hooks", "--json").json()
    assert again["created"] == []


def test_init_hooks_outside_git_is_refused(tmp_path: Path) -> None:
    r = Cli(tmp_path / "plain")("init", "--hooks")
    assert r.exit_code == 3
    assert "not in a git repository" in r.stderr
    assert not (tmp_path / "plain" / "memory").exists()


# -- add --commit ------------------------------------------------------------------------------
@pytest.mark.slow
def test_add_commit_commits_only_that_file_and_names_the_fact(tmp_path: Path) -> None:
    root = repo_workspace(tmp_path / "r")
    append(root / "memory" / "MEMORY.md", "- hand edit, not committed\n")
    cli = Cli(root)
    r = cli(
        "add",
        "--commit",
        "--json",
        "--type",
        "decision",
        "--tag",
        "infra",
        "Use Valkey instead of Redis.",
    )
    assert r.exit_code == 0, r.stderr
    added = r.json()
    assert added["commit"] == head(root)
    assert committed_files(root) == [added["path"]]
    assert git(root, "log", "-1", "--format=%s").strip() == "memory: Use Valkey instead of Redis."
    assert git(root, "status", "--porcelain").strip() == "M memory/MEMORY.md"

    dup = cli("add", "--commit", "--json", "use valkey instead of redis").json()
    assert dup["added"] is False and dup["commit"] is None
    assert head(root) == added["commit"]


@pytest.mark.slow
def test_add_commit_redacts_before_the_commit_message(tmp_path: Path) -> None:
    root = repo_workspace(tmp_path / "r")
    secret = "sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6"
    r = Cli(root)("add", "--commit", "--json", f"the staging key is {secret}")
    assert r.exit_code == 0, r.stderr
    assert secret not in git(root, "log", "-1", "--format=%B")
    assert "REDACTED" in git(root, "log", "-1", "--format=%B")


def test_add_commit_outside_git_writes_nothing(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    init_workspace(plain)
    r = Cli(plain)("add", "--commit", "a fact that needs git")
    assert r.exit_code == 3
    assert "not in a git repository" in r.stderr
    assert list((plain / "memory").iterdir()) == [plain / "memory" / "MEMORY.md"]
    assert Cli(plain)("add", "works without git").exit_code == 0


# -- diff ------------------------------------------------------------------------------------
DAY = "memory/2026-11-22.md"


def _seed_history(root: Path) -> dict[str, str]:
    """Three commits: a day file, a second fact plus prose, a namespace file."""
    shas = {"init": head(root)}
    write(root / DAY, "# 2026-11-22\n\n- 09:00 [decision] Use Valkey. #infra #cache\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "day one")
    shas["one"] = head(root)
    append(root / DAY, "- 09:30 The build uses uv.\n  It replaced pip-tools.\n")
    append(root / "memory" / "MEMORY.md", "Plain prose written by hand.\n")
    git(root, "commit", "-q", "-am", "more")
    shas["two"] = head(root)
    write(root / "memory" / "coder" / "2026-11-22.md", "- 10:00 [procedure] Run make test.\n")
    write(root / "README.txt", "not memory\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "coder namespace")
    shas["three"] = head(root)
    return shas


@pytest.mark.slow
def test_diff_work_tree_staged_unstaged_and_untracked(tmp_path: Path) -> None:
    root = repo_workspace(tmp_path / "r")
    shas = _seed_history(root)
    cli = Cli(root)
    # unstaged: a new fact appended; a fact rewritten
    text = (root / DAY).read_text().replace("Use Valkey.", "Use Valkey 8.")
    write(root / DAY, text + "- 11:00 [incident] Cache node ran out of memory. #ops\n")
    # staged: a new evergreen line
    append(root / "memory" / "MEMORY.md", "- [constraint] Never store PII.\n")
    git(root, "add", "memory/MEMORY.md")
    # untracked: a new namespace file
    write(root / "memory" / "ops" / "runbook.md", "- Restart with systemctl.\n")
    # not memory: ignored
    append(root / "README.txt", "changed\n")

    r = cli("diff", "--json")
    assert r.exit_code == 0, r.stderr
    d = r.json()
    assert set(d) == {"from", "to", "files", "totals"}
    assert d["from"] == shas["three"] and d["to"] == "worktree"
    by_path = {f["path"]: f for f in d["files"]}
    assert set(by_path) == {DAY, "memory/MEMORY.md", "memory/ops/runbook.md"}

    day = by_path[DAY]
    assert day["status"] == "modified"
    assert set(day) >= {"path", "status", "added", "removed"}
    assert [(f["line"], f["text"], f["type"], f["tags"]) for f in day["added"]] == [
        (3, "Use Valkey 8.", "decision", ["infra", "cache"]),
        (6, "Cache node ran out of memory.", "incident", ["ops"]),
    ]
    assert [(f["line"], f["text"]) for f in day["removed"]] == [(3, "Use Valkey.")]

    ever = by_path["memory/MEMORY.md"]
    assert [(f["text"], f["type"], f["kind"]) for f in ever["added"]] == [
        ("Never store PII.", "constraint", "fact")
    ]
    assert by_path["memory/ops/runbook.md"]["status"] == "untracked"
    assert by_path["memory/ops/runbook.md"]["added"][0]["text"] == "Restart with systemctl."
    assert d["totals"] == {
        "files": 3,
        "added": 4,
        "removed": 1,
        "lines_added": 0,
        "lines_removed": 0,
        "changed": 0,
    }


@pytest.mark.slow
def test_diff_ranges_single_rev_and_since(tmp_path: Path) -> None:
    root = repo_workspace(tmp_path / "r")
    shas = _seed_history(root)
    cli = Cli(root)

    d = cli("diff", "--json", f"{shas['one']}..{shas['two']}").json()
    assert (d["from"], d["to"]) == (shas["one"], shas["two"])
    files = {f["path"]: f for f in d["files"]}
    assert [(f["line"], f["text"], f["kind"]) for f in files[DAY]["added"]] == [
        (4, "The build uses uv.\nIt replaced pip-tools.", "fact")
    ]
    prose = files["memory/MEMORY.md"]["added"]
    assert [(f["text"], f["kind"], f["type"]) for f in prose] == [
        ("Plain prose written by hand.", "line", None)
    ]
    assert d["totals"]["lines_added"] == 1

    d = cli("diff", "--json", "HEAD~1..").json()  # empty right side means HEAD
    assert [f["path"] for f in d["files"]] == ["memory/coder/2026-11-22.md"]
    assert d["files"][0]["status"] == "added"
    assert d["files"][0]["added"][0]["type"] == "procedure"

    # a single revision compares it with the work tree
    append(root / DAY, "- 12:00 uncommitted fact\n")
    d = cli("diff", "--json", shas["two"]).json()
    assert d["to"] == "worktree"
    texts = [x["text"] for f in d["files"] for x in f["added"]]
    assert texts == ["uncommitted fact", "Run make test."]

    # --since: everything since before the first commit (no commit predates 2000)
    d = cli("diff", "--json", "--since", "2000-01-01").json()
    assert d["from"] is None
    assert d["totals"]["added"] == 4  # Valkey, uv, make test, the uncommitted one
    d = cli("diff", "--json", "--since", "2099-01-01").json()
    assert d["from"] == shas["three"]  # the last commit before then: only the work tree change
    assert d["totals"]["added"] == 1

    # A...B starts at the merge base
    git(root, "checkout", "-q", "--", DAY)
    git(root, "switch", "-q", "-c", "side", shas["one"])
    write(root / "memory" / "side.md", "- side fact\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "side")
    d = cli("diff", "--json", "main...side").json()
    assert d["from"] == shas["one"]
    assert [f["path"] for f in d["files"]] == ["memory/side.md"]


@pytest.mark.slow
def test_diff_exit_codes_and_bad_input(tmp_path: Path) -> None:
    root = repo_workspace(tmp_path / "r")
    cli = Cli(root)
    r = cli("diff", "--json")
    assert r.exit_code == 1
    assert r.json()["files"] == [] and r.json()["totals"]["files"] == 0
    assert cli("diff").exit_code == 1
    assert cli("diff", "HEAD..HEAD", "--json").exit_code == 1

    r = cli("diff", "no-such-branch")
    assert r.exit_code == 2 and "unknown revision" in r.stderr
    r = cli("diff", "--since", "2020-01-01", "HEAD~1..HEAD")
    assert r.exit_code == 2
    r = cli("diff", "--since", "someday soon")
    assert r.exit_code == 2 and "--since expects a date YYYY-MM-DD" in r.stderr
    # the only commit is younger than two weeks: from before it, so MEMORY.md shows as added
    r = cli("diff", "--json", "--since", "2 weeks ago")
    assert r.exit_code == 0 and r.json()["from"] is None

    append(root / "memory" / "MEMORY.md", "- new\n")
    assert cli("diff", "--json").exit_code == 0


def test_diff_rename_delete_and_binary(tmp_path: Path) -> None:
    root = repo_workspace(tmp_path / "r")
    write(root / "memory" / "old-name.md", "- a fact that moves\n- another\n")
    write(root / "memory" / "gone.md", "- doomed fact\n")
    (root / "memory" / "blob.md").write_bytes(b"\x00\x01binary")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "files")
    git(root, "mv", "memory/old-name.md", "memory/new-name.md")
    append(root / "memory" / "new-name.md", "- added after the move\n")
    git(root, "rm", "-q", "memory/gone.md")
    (root / "memory" / "blob.md").write_bytes(b"\x00\x02binary")

    d = diff(root).as_dict()
    files = {f["path"]: f for f in d["files"]}
    moved = files["memory/new-name.md"]
    assert moved["status"] == "renamed" and moved["old_path"] == "memory/old-name.md"
    assert [x["text"] for x in moved["added"]] == ["added after the move"]
    assert moved["removed"] == []
    assert files["memory/gone.md"]["status"] == "deleted"
    assert [x["text"] for x in files["memory/gone.md"]["removed"]] == ["doomed fact"]
    assert files["memory/blob.md"]["binary"] is True


@pytest.mark.slow
def test_diff_human_output_and_stat(tmp_path: Path) -> None:
    root = repo_workspace(tmp_path / "r")
    _seed_history(root)
    cli = Cli(root)
    r = cli("diff", "HEAD~2..HEAD")
    assert r.exit_code == 0
    assert "memory/2026-11-22.md (modified)" in r.stdout
    assert "The build uses uv." in r.stdout
    assert "procedure" in r.stdout
    assert "3 files changed" in r.stdout
    r = cli("diff", "--stat", "HEAD~2..HEAD")
    lines = r.stdout.splitlines()
    assert lines[0].split("\t") == ["path", "status", "facts added", "facts removed", "other lines"]
    assert "memory/coder/2026-11-22.md\tadded\t+1\t-0\t+0 -0" in lines
    assert "memory/MEMORY.md\tmodified\t+0\t-0\t+1 -0" in lines


def test_diff_workspace_in_a_subfolder(tmp_path: Path) -> None:
    top = make_repo(tmp_path / "mono")
    write(top / "memory" / "decoy.md", "- not this workspace's memory\n")
    ws = top / "docs" / "mem"
    init_workspace(ws)
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", "init")
    append(ws / "memory" / "MEMORY.md", "- sub fact\n")
    append(top / "memory" / "decoy.md", "- other\n")
    d = Cli(ws)("diff", "--json").json()
    assert [f["path"] for f in d["files"]] == ["memory/MEMORY.md"]
    assert d["files"][0]["added"][0]["text"] == "sub fact"


def test_diff_before_the_first_commit(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    init_workspace(root)
    append(root / "memory" / "MEMORY.md", "- first fact\n")
    d = diff(root)
    assert d.old is None
    assert [f.status for f in d.files] == ["untracked"]
    with pytest.raises(BadInput):
        diff(root, "HEAD~1..HEAD")


# -- log ---------------------------------------------------------------------------------------
@pytest.mark.slow
def test_log_lists_memory_commits_with_fact_counts(tmp_path: Path) -> None:
    root = repo_workspace(tmp_path / "r")
    shas = _seed_history(root)
    write(root / "README.txt", "only docs\n")
    git(root, "commit", "-q", "-am", "docs only")
    r = Cli(root)("log", "--json")
    assert r.exit_code == 0, r.stderr
    commits = r.json()["commits"]
    assert [c["subject"] for c in commits] == ["coder namespace", "more", "day one", "init memory"]
    assert commits[0]["sha"] == shas["three"]
    assert (commits[1]["added"], commits[1]["removed"], commits[1]["files"]) == (1, 0, 2)
    assert set(commits[0]) >= {"sha", "short", "author", "date", "subject", "added", "removed"}
    limited = Cli(root)("log", "--json", "-n", "1").json()["commits"]
    assert [c["subject"] for c in limited] == ["coder namespace"]
    human = Cli(root)("log").stdout
    assert "day one" in human and "+1" in human


# -- status -----------------------------------------------------------------------------------
def test_status_git_field(tmp_path: Path) -> None:
    root = repo_workspace(tmp_path / "r")
    cli = Cli(root)
    g = cli("status", "--json").json()["git"]
    assert g == {"branch": "main", "dirty_memory_files": [], "ahead": None, "behind": None}
    append(root / "memory" / "MEMORY.md", "- x\n")
    write(root / "memory" / "ns" / "2026-11-22.md", "- y\n")
    write(root / "elsewhere.txt", "z\n")
    g = cli("status", "--json").json()["git"]
    assert g["dirty_memory_files"] == ["memory/MEMORY.md", "memory/ns/2026-11-22.md"]

    plain = tmp_path / "plain"
    init_workspace(plain)
    assert Cli(plain)("status", "--json").json()["git"] is None


# -- not a repository ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args",
    [
        ("diff",),
        ("log",),
        ("hooks", "install"),
        ("hooks", "status"),
        ("hooks", "uninstall"),
        ("sync",),
    ],
)
def test_git_commands_outside_git_exit_3(tmp_path: Path, args: tuple[str, ...]) -> None:
    plain = tmp_path / "plain"
    init_workspace(plain)
    r = Cli(plain)(*args)
    assert r.exit_code == 3, (args, r.stdout, r.stderr)
    assert "not in a git repository" in r.stderr
    assert "Traceback" not in r.stderr
