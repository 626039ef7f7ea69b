"""Output conventions of every command, checked against the real command tree and processes.

stdout carries data only, plain when piped; colour only on a terminal and never with NO_COLOR
or --no-color (stderr included); --json on every command that prints data; help everywhere;
start-up imports nothing heavy.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest

from memcli import __version__
from memcli.errors import ExitCode
from tests.devtools import load_gendocs

gendocs = load_gendocs()

TIMEOUT = 120
ESC = re.compile(rb"\x1b\[")  # any control sequence
SGR = re.compile(rb"\x1b\[[0-9;]*m")  # colour and text style (a progress bar also moves the cursor)
HEAVY = ("litellm", "numpy", "git", "watchfiles", "openai", "mcp", "pydantic", "fastembed")
# A data command, and what it needs to have something to show.
PIPED = [
    ("status",),
    ("files",),
    ("search", "valkey"),
    ("search", "--explain", "valkey"),
    ("get", "memory/MEMORY.md"),
    ("index", "--force"),
    ("config",),
    ("config", "path"),
    ("doctor", "--offline"),
    ("hooks", "status"),
    ("log",),
    ("diff", "--stat", "HEAD"),
]


def memcli(
    root: Path | None, *args: str, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[bytes]:
    cmd = [sys.executable, "-m", "memcli", *(["-w", str(root)] if root else []), *args]
    return subprocess.run(
        cmd,
        capture_output=True,
        timeout=TIMEOUT,
        env={**os.environ, **(env or {})},
        input=stdin.encode() if stdin is not None else None,
    )


def on_terminal(
    root: Path, *args: str, env: dict[str, str] | None = None, stdout_tty: bool = True
) -> tuple[int, bytes, bytes]:
    """Run with stderr (and stdout unless told) on pseudo-terminals, as in an interactive shell."""
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", **(env or {})}
    out_master, out_slave = pty.openpty()
    err_master, err_slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcli", "-w", str(root), *args],
        stdout=out_slave if stdout_tty else subprocess.PIPE,
        stderr=err_slave,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    os.close(out_slave)
    os.close(err_slave)
    streams = {out_master: b"", err_master: b""}
    open_fds = [out_master, err_master]
    piped = b""
    while open_fds:
        ready, _, _ = select.select(open_fds, [], [], TIMEOUT)
        if not ready:
            proc.kill()
            raise AssertionError(f"no output within {TIMEOUT}s")
        for fd in ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: the other end closed
                data = b""
            if data:
                streams[fd] += data
            else:
                open_fds.remove(fd)
                os.close(fd)
    if not stdout_tty:
        assert proc.stdout is not None
        piped = proc.stdout.read()
    code = proc.wait(timeout=TIMEOUT)
    return code, (streams[out_master] if stdout_tty else piped), streams[err_master]


@pytest.fixture
def repo(workspace: Path) -> Path:
    """A committed git workspace with a few facts, indexed."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    added = memcli(workspace, "add", "--type", "decision", "Use Valkey for the cache.")
    assert added.returncode == 0
    assert memcli(workspace, "add", "Deploys happen on Fridays.").returncode == 0
    subprocess.run(["git", "-C", str(workspace), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(workspace), "commit", "-qm", "facts"], check=True)
    assert memcli(workspace, "add", "Backups run nightly.").returncode == 0
    return workspace


# -- help and flags -------------------------------------------------------------------------------
def test_every_command_option_and_argument_has_help() -> None:
    tree = gendocs.command_tree()
    assert len(list(tree.walk())) > 15
    for c in tree.walk():
        assert c.help.strip(), f"{c.name} has no help text"
        for p in c.params:
            assert p.help.strip(), f"{p.label} of {c.name} has no help text"


def test_every_command_that_prints_data_has_json() -> None:
    tree = gendocs.command_tree()
    for c in tree.walk():
        if c is tree or (c.commands and not c.runs_alone):
            continue  # the root and pure groups print help, not data
        if c.name in ("memcli mcp", "memcli agent hook"):
            continue  # stdout is a protocol (MCP, the agent's hook JSON), JSON already
        opts = {o for p in c.options for o in p.all_opts}
        assert "--json" in opts, f"{c.name} has no --json"


@pytest.mark.slow
def test_help_lists_exit_codes_and_every_command() -> None:
    r = memcli(None, "--help")
    assert r.returncode == 0
    text = r.stdout.decode()
    for code in ExitCode:
        assert re.search(rf"\b{int(code)}\b", text), f"exit code {int(code)} not in --help"
    for c in gendocs.command_tree().commands:
        assert c.path[-1] in text
    assert not ESC.search(r.stdout)


@pytest.mark.slow
def test_version_from_python_dash_m() -> None:
    r = memcli(None, "--version")
    assert r.returncode == 0
    assert r.stdout.decode().strip() == f"memcli {__version__}"
    assert r.stderr == b""


# -- stdout is data, plain when piped -----------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("args", PIPED, ids=lambda a: " ".join(a))
def test_piped_output_has_no_escape_codes(repo: Path, args: tuple[str, ...]) -> None:
    r = memcli(repo, *args, env={"TERM": "xterm-256color", "COLUMNS": "80"})
    assert r.returncode in (0, 1), r.stderr
    assert r.stdout.strip(), f"{args} printed nothing"
    assert not ESC.search(r.stdout), r.stdout[:200]
    assert not ESC.search(r.stderr), r.stderr[:200]
    assert not re.search("[\u2500-\u257f]", r.stdout.decode()), "box drawing in piped output"


@pytest.mark.slow
@pytest.mark.parametrize("args", PIPED, ids=lambda a: " ".join(a))
def test_json_output_is_one_document_on_stdout(repo: Path, args: tuple[str, ...]) -> None:
    (repo / "memory" / "bad.md").write_bytes(b"caf\xe9 \xff valkey\n")  # a warning on stderr
    r = memcli(repo, *args, "--json")
    assert r.returncode in (0, 1), r.stderr
    json.loads(r.stdout)  # the whole of stdout, warnings or not
    assert not ESC.search(r.stderr)


@pytest.mark.slow
def test_warnings_go_to_stderr_and_quiet_hides_them(repo: Path) -> None:
    (repo / "memory" / "bad.md").write_bytes(b"caf\xe9 \xff valkey\n")
    r = memcli(repo, "index", "--json")
    assert r.returncode == 0
    assert json.loads(r.stdout)["added"] >= 1
    assert b"Warning:" in r.stderr and b"bad.md" in r.stderr
    (repo / "memory" / "bad.md").write_bytes(b"caf\xe9 \xff valkey again\n")
    q = memcli(repo, "-q", "index", "--json")
    assert q.returncode == 0 and q.stderr == b""
    json.loads(q.stdout)


@pytest.mark.slow
def test_errors_are_one_line_without_traceback(tmp_path: Path) -> None:
    r = memcli(tmp_path / "nowhere", "status")
    assert r.returncode == ExitCode.WORKSPACE
    assert r.stdout == b""
    lines = r.stderr.decode().splitlines()
    assert lines[0].startswith("Error: ") and all(
        ln.startswith(("Error: ", "Hint: ")) for ln in lines
    ), lines
    assert b"Traceback" not in r.stderr
    d = memcli(tmp_path / "nowhere", "--debug", "status")
    assert d.returncode != 0 and b"Traceback" in d.stderr


# -- colour on a terminal, never with NO_COLOR / --no-color -------------------------------------
@pytest.mark.slow
def test_terminal_gets_colour_by_default(repo: Path) -> None:
    """The control case: on a terminal, tables and errors are styled (so the tests below can
    fail)."""
    code, out, _ = on_terminal(repo, "files")
    assert code == 0 and SGR.search(out)
    code, _, err = on_terminal(repo / "nowhere", "status")
    assert code == ExitCode.WORKSPACE and SGR.search(err) and b"Error:" in err


@pytest.mark.slow
@pytest.mark.parametrize("how", ["NO_COLOR", "--no-color"])
def test_no_color_means_no_escape_codes_on_stdout_and_stderr(repo: Path, how: str) -> None:
    env = {"NO_COLOR": "1"} if how == "NO_COLOR" else {}
    flag = ["--no-color"] if how == "--no-color" else []
    for args in (["files"], ["config"], ["search", "valkey"], ["doctor", "--offline"]):
        code, out, err = on_terminal(repo, *flag, *args, env=env)
        assert code in (0, 1), err
        assert out.strip() and not SGR.search(out), (args, out[:200])
        assert not SGR.search(err), (args, err[:200])
    # an error, and a warning, on a terminal stderr
    code, _, err = on_terminal(repo / "nowhere", *flag, "status", env=env)
    assert code == ExitCode.WORKSPACE and b"Error:" in err and not SGR.search(err)
    (repo / "memory" / "bad.md").write_bytes(b"\xff\xfe broken\n")
    code, _, err = on_terminal(repo, *flag, "index", env=env, stdout_tty=False)
    assert code == 0 and b"Warning:" in err and not SGR.search(err)


@pytest.mark.slow
def test_empty_no_color_does_not_turn_colour_off(repo: Path) -> None:
    """no-color.org: only a non-empty NO_COLOR counts."""
    code, out, _ = on_terminal(repo, "files", env={"NO_COLOR": ""})
    assert code == 0 and SGR.search(out)


@pytest.mark.slow
def test_no_progress_bar_when_stderr_is_piped(repo: Path) -> None:
    r = memcli(repo, "index", "--force")
    assert r.returncode == 0
    assert r.stderr == b""  # no progress, no carriage returns, nothing to warn about


# -- start-up hygiene ---------------------------------------------------------------------------
def _imported(
    root: Path | None,
    *args: str,
    stdin: str | None = None,
    run: tuple[str, ...] = ("-m", "memcli"),
) -> set[str]:
    """Top-level packages a memcli run imported (from ``python -X importtime``), given
    ``stdin`` (else none)."""
    cmd = [
        sys.executable,
        "-X",
        "importtime",
        *run,
        *(["-w", str(root)] if root else []),
        *args,
    ]
    r = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
    )
    assert r.returncode in (0, 1), r.stderr[-500:]
    names = set()
    for line in r.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    assert "memcli" in names  # the parse works
    return names


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ("--help",),
        ("search", "--json", "valkey"),
        ("search", "valkey"),
        ("status", "--json"),
        ("status",),
        ("files", "--json"),
        ("get", "memory/MEMORY.md"),
        ("hooks", "status", "--json"),
        ("diff", "--json"),
        ("log", "--json"),
        ("agent", "hook", "session-start"),
        ("agent", "hook", "prompt"),
    ],
    ids=lambda a: " ".join(a),
)
def test_fast_commands_import_nothing_heavy(repo: Path, args: tuple[str, ...]) -> None:
    names = _imported(None if args == ("--help",) else repo, *args)
    assert not names & set(HEAVY), sorted(names & set(HEAVY))
    if "--json" in args or args == ("--help",):
        assert "rich" not in names  # nothing is drawn: Rich is not even loaded
    if args[:2] == ("agent", "hook"):  # run on every prompt: no Typer, no Rich
        assert not names & {"typer", "click", "rich"}, sorted(names & {"typer", "click", "rich"})


# dataclasses imports inspect (and with it ast, dis, tokenize): about a tenth of a keyword
# search's start-up. Classes on the search path are NamedTuples or plain classes (searches
# skip Typer, which loads inspect for every other command).
@pytest.mark.slow
@pytest.mark.parametrize("args", [("search", "--json", "valkey"), ("search", "valkey")])
def test_search_path_does_not_load_dataclasses(repo: Path, args: tuple[str, ...]) -> None:
    names = _imported(repo, *args)
    # nor logging (5 ms), which concurrent.futures imports: only a large index's search needs it
    unwanted = {"dataclasses", "inspect", "logging", "concurrent.futures"}
    assert not names & unwanted, sorted(names & unwanted)


# The prompt hook runs on every prompt an agent submits: besides the search's rule, no
# process start-up (subprocess) and no socket without an engine.
@pytest.mark.slow
@pytest.mark.parametrize("args", [("agent", "hook", "prompt"), ("search", "--json", "valkey")])
def test_prompt_hook_and_search_load_only_what_they_use(repo: Path, args: tuple[str, ...]) -> None:
    payload = json.dumps({"session_id": "s", "cwd": str(repo), "prompt": "which cache, valkey?"})
    names = _imported(repo, *args, stdin=payload if args[0] == "agent" else None)
    assert "memcli" in names and ("sqlean" in names or "sqlite3" in names)  # it searched
    unwanted = {"dataclasses", "inspect", "subprocess", "socket", "logging"}
    assert not names & unwanted, sorted(names & unwanted)


@pytest.mark.slow
def test_importtime_parse_sees_dataclasses(repo: Path) -> None:
    """The control case: an add creates its result class (a dataclass)."""
    assert "dataclasses" in _imported(repo, "add", "--json", "a fact for the control case")


@pytest.mark.slow
def test_importtime_parse_sees_heavy_imports(repo: Path) -> None:
    """The control case: the MCP server's tools import mcp and pydantic."""
    names = _imported(None, run=("-c", "import memcli.agent.mcp_server"))
    assert {"mcp", "pydantic"} <= names


@pytest.mark.slow
def test_vectors_load_without_numpy(repo: Path) -> None:
    """doctor loads sqlite-vec (its extension, not its package, which imports numpy)."""
    names = _imported(repo, "doctor", "--json")
    assert "numpy" not in names and "sqlite_vec" not in names
