"""Bad files in memory/: skipped or decoded with a warning, never a crash, never a leak."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.test_reliability import everything_under, index_bytes, memcli


def _paths(cli: Cli) -> list[str]:
    r = cli("files", "--json")
    assert r.exit_code == 0, r.stderr
    return [f["path"] for f in r.json()["files"]]


@pytest.mark.slow
def test_bad_files_are_skipped_or_decoded_with_warnings(cli: Cli, workspace: Path) -> None:
    mem = workspace / "memory"
    (mem / "good.md").write_text("- the deploy window is tuesday\n")
    (mem / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + os.urandom(4000))
    (mem / "latin1.md").write_bytes("- caf\xe9 menu: the ocelot special\n".encode("latin-1"))
    huge = b"- the gigantic narwhal\n" * (6 * 1024 * 1024 // 23) + b"- the final walrus\n"
    (mem / "huge.md").write_bytes(huge)  # > 5 MiB
    (mem / "empty.md").write_bytes(b"")
    (mem / "blank.md").write_text("\n\n   \n")
    (mem / "one-long-line.md").write_text("lemur " * 400_000)  # 2.4 MB, no newline
    (mem / "crlf.md").write_bytes(b"# Title\r\n\r\n- windows line endings armadillo\r\n")

    r = cli("index", "--json")
    assert r.exit_code == 0, r.stderr
    err = r.stderr
    assert "memory/binary.md: skipped: binary file" in err
    assert "memory/latin1.md: invalid UTF-8" in err and "replacement" in err
    assert "memory/huge.md: 6.0 MiB is over index.max_file_mb (5.0 MiB)" in err
    assert "empty.md" not in err and "blank.md" not in err  # empty files are fine, not warned
    indexed = _paths(cli)
    assert "memory/binary.md" not in indexed
    assert "memory/huge.md" in indexed  # up to the cap, never dropped whole
    assert {"memory/latin1.md", "memory/empty.md", "memory/good.md"} <= set(indexed)
    chunks = {f["path"]: f["chunks"] for f in cli("files", "--json").json()["files"]}
    assert chunks["memory/empty.md"] == 0 and chunks["memory/blank.md"] == 0

    # Invalid UTF-8 is indexed with U+FFFD in place of the bad byte; the rest is searchable.
    hit = cli("search", "--json", "ocelot").json()["results"][0]
    assert hit["path"] == "memory/latin1.md" and "\ufffd" in hit["snippet"]
    assert cli("search", "--json", "narwhal").json()["results"][0]["path"] == "memory/huge.md"
    assert cli("search", "--json", "walrus").exit_code == 1  # past the cap: not indexed
    assert b"walrus" not in index_bytes(workspace)
    assert cli("search", "--json", "armadillo").json()["results"][0]["path"] == "memory/crlf.md"
    assert (
        cli("search", "--json", "lemur").json()["results"][0]["path"] == "memory/one-long-line.md"
    )
    # The cap is a setting: raised, the whole huge file is indexed.
    (workspace / "memcli.toml").write_text("[index]\nmax_file_mb = 10\n")
    assert cli("index").exit_code == 0
    assert cli("search", "--json", "walrus").json()["results"][0]["path"] == "memory/huge.md"
    # get prints an invalid UTF-8 file with replacement characters, not a crash.
    r = cli("get", "memory/latin1.md")
    assert r.exit_code == 0 and "\ufffd" in r.stdout


def _mkdirs_iteratively(base: Path, depth: int) -> Path:
    """os.makedirs itself recurses, so build the chain one mkdir at a time."""
    p = base
    for _ in range(depth):
        p = p / "d"
        p.mkdir()
    return p


def _rmdirs_iteratively(top: Path) -> None:
    """Remove a deep chain deepest first (shutil.rmtree, also pytest's, recurses)."""
    chain = [top]
    while (chain[-1] / "d").is_dir():
        chain.append(chain[-1] / "d")
    for folder in reversed(chain):
        for child in folder.iterdir():
            if not child.is_dir():
                child.unlink()
        folder.rmdir()


@pytest.fixture
def deep_chain(workspace: Path) -> Iterator[int]:
    depth = sys.getrecursionlimit() + 100
    yield depth
    _rmdirs_iteratively(workspace / "memory" / "d")


@pytest.mark.slow
def test_deeply_nested_folders(workspace: Path, deep_chain: int) -> None:
    depth = deep_chain
    deep = _mkdirs_iteratively(workspace / "memory", depth)
    (deep / "deep.md").write_text("- the deepest wombat\n")
    r = memcli(workspace, "index", "--json")
    assert r.returncode == 0, r.stderr
    r = memcli(workspace, "search", "--json", "wombat")
    assert r.returncode == 0, r.stderr
    hit = json.loads(r.stdout)["results"][0]
    assert hit["path"] == "memory/" + "d/" * depth + "deep.md"
    r = memcli(workspace, "get", hit["path"] + ":1:1")
    assert r.returncode == 0 and r.stdout == "- the deepest wombat\n"


@pytest.mark.slow
def test_symlink_loops_do_not_hang(cli: Cli, workspace: Path) -> None:
    mem = workspace / "memory"
    (mem / "a.md").symlink_to("b.md")
    (mem / "b.md").symlink_to("a.md")
    (mem / "self.md").symlink_to("self.md")
    (mem / "sub").mkdir()
    (mem / "sub" / "real.md").write_text("- a real kiwi fact\n")
    (mem / "sub" / "up").symlink_to("..")  # folder loop back to memory/
    (mem / "sub" / "again").symlink_to("../sub")  # folder loop to itself
    (mem / "alias").symlink_to("sub")  # the same folder under two names

    r = memcli(workspace, "index", "--json")  # a subprocess: a hang fails on the timeout
    assert r.returncode == 0, r.stderr
    assert "memory/a.md: skipped" in r.stderr and "memory/self.md: skipped" in r.stderr
    paths = _paths(cli)
    assert sum(p.endswith("/real.md") for p in paths) == 1  # each folder visited once
    assert not any("/up/" in p or "/again/" in p for p in paths)
    for args in (["get", "memory/a.md"], ["add", "--to", "self.md", "x"]):
        r = memcli(workspace, *args)
        assert r.returncode == 2, (args, r.stderr)
        assert "Traceback" not in r.stderr


# Runs the real CLI with a Python audit hook that records every file the process opens whose
# real path is inside OUTSIDE. Exits 99 (and lists them) if there was any.
AUDITED = textwrap.dedent(
    """
    import os, sys
    outside = os.path.realpath(sys.argv[1])
    opened = []
    def hook(event, args):
        if event in ("open", "os.listdir", "os.scandir") and args and args[0] is not None:
            if isinstance(args[0], int):
                return
            real = os.path.realpath(os.fsdecode(args[0]))
            if real == outside or real.startswith(outside + os.sep):
                opened.append(real)
    sys.addaudithook(hook)
    sys.argv = ["memcli", *sys.argv[2:]]
    from memcli.cli.app import main
    try:
        main()
    finally:
        if opened:
            sys.stderr.write(f"OPENED OUTSIDE: {opened}\\n")
            sys.stderr.flush()
            os._exit(99)
    """
)


@pytest.mark.slow
def test_symlinks_leaving_workspace_are_never_read(tmp_path: Path, workspace: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "notes").mkdir(parents=True)
    secret = "- the outside secret is tangerine-7731\n"
    (outside / "secret.md").write_text(secret)
    (outside / "notes" / "more.md").write_text(secret)
    mem = workspace / "memory"
    (mem / "leak.md").symlink_to(outside / "secret.md")  # absolute link to a file
    (mem / "rel-leak.md").symlink_to(Path("../../outside/secret.md"))  # relative link
    (mem / "folder").symlink_to(outside / "notes", target_is_directory=True)
    (mem / "inside.md").write_text("- the inside fact is mango\n")
    (mem / "inside-link.md").symlink_to("inside.md")  # staying inside is fine

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", AUDITED, str(outside), "-w", str(workspace), *args],
            capture_output=True,
            text=True,
            timeout=120,
        )

    r = run("index", "--json")
    assert r.returncode == 0, r.stderr
    for name in ("leak.md", "rel-leak.md", "folder"):
        assert f"memory/{name}: skipped: symlink leaves the workspace" in r.stderr
    for args in (["status", "--json"], ["files", "--json"], ["index", "--force"]):
        r = run(*args)
        assert r.returncode == 0, (args, r.stderr)
        assert "tangerine" not in r.stdout
    r = run("search", "--json", "tangerine")
    assert r.returncode == 1, r.stderr
    assert json.loads(r.stdout)["results"] == []
    assert json.loads(run("search", "--json", "mango").stdout)["results"]
    for args in (
        ["get", "memory/leak.md"],
        ["get", "memory/folder/more.md"],
        ["add", "--to", "leak.md", "write through the link"],
        ["add", "--to", "folder/new.md", "write through the folder link"],
        ["index", "memory/folder"],
    ):
        r = run(*args)
        assert r.returncode == 2, (args, r.returncode, r.stderr)
        assert "tangerine" not in r.stdout + r.stderr
    assert b"tangerine" not in index_bytes(workspace)
    assert (outside / "secret.md").read_text() == secret  # untouched
    assert everything_under(outside) == ["notes", "notes/more.md", "secret.md"]


def test_odd_file_names(cli: Cli, workspace: Path) -> None:
    mem = workspace / "memory"
    names = {
        "with space.md": "aardvark",
        "ünïcødé 日本語.md": "bison",
        "emoji 🧠 notes.md": "chinchilla",
        "-starts-with-dash.md": "dingo",
        "colon:inside.md": "emu",
        "quote'and\"double.md": "ferret",
        "tab\there.md": "gazelle",
        "[brackets] *star*.md": "hyena",
    }
    for name, word in names.items():
        (mem / name).write_text(f"- the {word} lives here\n")
    (mem / "new\nline.md").write_text("- the iguana must not be indexed\n")
    (mem / "carriage\rreturn.md").write_text("- the jackal must not be indexed\n")
    os.mkdir(os.fsencode(mem) + b"/latin1-\xe9")  # a folder whose name is not UTF-8
    with open(os.fsencode(mem) + b"/bad-\xff.md", "wb") as fh:
        fh.write(b"- the koala must not be indexed\n")

    r = cli("index", "--json")
    assert r.exit_code == 0, r.stderr
    assert "newline in file name" in r.stderr and "not valid UTF-8" in r.stderr
    indexed = set(_paths(cli))
    for name, word in names.items():
        rel = f"memory/{name}"
        assert rel in indexed, rel
        r = cli("search", "--json", word)
        assert r.exit_code == 0, (name, r.stderr)
        assert r.json()["results"][0]["path"] == rel
        r = cli("get", f"{rel}:1:1", "--json")
        assert r.exit_code == 0, (name, r.stderr)
        assert r.json()["text"] == f"- the {word} lives here"
    assert not any("line" in p or "return" in p or "bad-" in p for p in indexed)
    for word in ("iguana", "jackal", "koala"):
        assert cli("search", "--json", word).exit_code == 1
    r = cli("add", "--to", "with space.md", "--json", "a second aardvark fact")
    assert r.exit_code == 0 and r.json()["path"] == "memory/with space.md"


@pytest.fixture
def shared_workspace() -> Iterator[Path]:
    """A workspace in a folder an unprivileged user can enter (pytest's tmp is private)."""
    base = Path(tempfile.mkdtemp(prefix="memcli-perm-"))
    os.chmod(base, 0o777)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _as_unprivileged(cmd: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return cmd
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot drop privileges")
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]


@pytest.mark.slow
def test_file_vanishing_or_unreadable(shared_workspace: Path) -> None:
    from memcli.notes.workspace import init_workspace

    root = shared_workspace / "ws"
    root.mkdir()
    init_workspace(root)
    mem = root / "memory"
    (mem / "readable.md").write_text("- the readable quail\n")
    (mem / "private.md").write_text("- the private raven\n")
    (mem / "locked").mkdir()
    (mem / "locked" / "inner.md").write_text("- the locked stoat\n")
    if os.geteuid() == 0:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
                os.chown(name, 65534, 65534)
    os.chmod(mem / "private.md", 0)
    os.chmod(mem / "locked", 0)
    env = {**os.environ, "HOME": str(shared_workspace), "MEMCLI_CACHE_DIR": str(root / "c")}
    env["MEMCLI_CONFIG_DIR"] = str(root / "cfg")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = _as_unprivileged([sys.executable, "-m", "memcli", "-w", str(root), *args])
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)

    r = run("index", "--json")
    assert r.returncode == 0, r.stderr
    assert "memory/private.md: skipped: Permission denied" in r.stderr
    assert "memory/locked: cannot list: Permission denied" in r.stderr
    r = run("search", "--json", "quail")
    assert r.returncode == 0, r.stderr
    r = run("get", "memory/private.md")
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert r.stderr.startswith("Error: ")


def test_binary_file_is_remembered_not_reread(cli: Cli, workspace: Path) -> None:
    """A binary file is recorded with its stat: it is not 'changed' on every check (which
    made every search re-index), status names it, and it is read again once it changes."""
    mem = workspace / "memory"
    (mem / "good.md").write_text("- the deploy window is tuesday\n")
    blob = mem / "blob.md"
    blob.write_bytes(b"\x00\x01 not text")
    past = 1_700_000_000_000_000_000  # well outside the racy window
    os.utime(blob, ns=(past, past))
    first = cli("index", "--json")
    assert "memory/blob.md: skipped: binary file" in first.stderr
    again = cli("index", "--json")
    assert again.exit_code == 0 and "blob.md" not in again.stderr  # not re-read
    assert again.json()["added"] + again.json()["updated"] == 0
    st = cli("status", "--json").json()
    assert st["dirty"] == []
    assert "memory/blob.md: skipped: binary file" in st["warnings"]
    r = cli("search", "--json", "deploy")
    assert r.exit_code == 0 and r.json()["warnings"] == []  # no sync, so no re-warning

    blob.write_text("- the blob is text now: wombat\n")
    assert cli("status", "--json").json()["dirty"] == ["memory/blob.md"]
    assert cli("search", "--json", "wombat").json()["results"][0]["path"] == "memory/blob.md"
    assert not any("blob" in w for w in cli("status", "--json").json()["warnings"])
    blob.write_bytes(b"\x00\x02 binary again")
    r = cli("index", "--json")
    assert r.json()["removed"] == 1 and "memory/blob.md: skipped: binary file" in r.stderr
    assert cli("search", "--json", "wombat").exit_code == 1
    blob.unlink()
    assert cli("index", "--json").json()["removed"] == 0  # it was not in the index
    st = cli("status", "--json").json()
    assert st["dirty"] == [] and not any("blob" in w for w in st["warnings"])
