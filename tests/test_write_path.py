"""One way to write a workspace's files: :mod:`memcli.safewrite` (and :mod:`memcli.statedir`
under ``.memcli/``). A raw write in a room that writes workspace files fails this test unless
it is listed below with what it writes (none of them a workspace file)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "memcli"

#: The rooms whose modules write files in a workspace (memory, init's files, settings,
#: agents' project files, what flush and the lifecycle commands write).
ROOMS = ("notes", "service", "flush", "agentsetup", "config", "git", "agent", "cli", "engine")

#: Raw writes allowed, per module: the call, and what it writes.
ALLOWED = {
    "agentsetup/record.py": {"mkstemp", "os.replace", "unlink"},  # the record, in the cache
    "agentsetup/edits.py": {"unlink"},  # removes a file uninstall emptied (checked at planning)
    "git/hooks.py": {"mkstemp", "os.replace", "rename", "unlink"},  # git's hooks folder
    "agent/mcp_capture.py": {"write_text"},  # mcp_wire.json, the package's own file (make)
    "engine/server.py": {"unlink"},  # the engine's socket, under the runtime folder
    "cli/runtime.py": {"os.open"},  # /dev/null over a closed stdout
    "service/lifecycle.py": {"unlink"},  # a pending record under .memcli (statedir's path)
    "flush/sessions.py": {"unlink"},  # a session record under .memcli (statedir's path)
}

_WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_APPEND", "O_CREAT", "O_TRUNC"}
_RAW = {"write_text", "write_bytes", "mkstemp", "NamedTemporaryFile", "rename", "unlink"}


def _statedir_names(tree: ast.Module) -> set[str]:
    """Names a module imports from memcli.statedir (its writes go under .memcli only)."""
    return {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "memcli.statedir"
        for alias in node.names
    }


def _writing_mode(node: ast.expr) -> bool:
    text = node.value if isinstance(node, ast.Constant) else None
    return isinstance(text, str) and set(text) <= set("rwxabt+") and bool(set(text) & set("wax+"))


def raw_writes(source: str) -> set[str]:
    """The raw file writes in a module's source: ``open`` in a writing mode, ``os.open``
    with a writing flag, ``os.replace``, ``write_text`` and the like."""
    tree = ast.parse(source)
    statedir = _statedir_names(tree)
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        owner = (
            func.value.id
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
            else None
        )
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if owner in ("statedir", "safewrite") or (owner is None and name in statedir):
            continue
        if name in _RAW:
            found.add(name)
        elif owner == "os" and name == "replace":
            found.add("os.replace")
        elif name == "open" and owner == "os":
            flags = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
            if flags & _WRITE_FLAGS:
                found.add("os.open")
        elif name == "open":  # (fdopen wraps a descriptor opened, and checked, already)
            modes = [*node.args[:2], *(k.value for k in node.keywords if k.arg == "mode")]
            if any(_writing_mode(m) for m in modes):  # open(p, "w") or path.open("a")
                found.add(name)
    return found


def test_the_probe_finds_raw_writes() -> None:
    source = (
        "import os\n"
        "p.write_text('x')\n"
        "open(p, 'a')\n"
        "os.open(p, os.O_WRONLY | os.O_CREAT)\n"
        "os.replace(a, b)\n"
        "statedir.write_text(p, 'x')\n"
        "open(p)\n"
        "q.open('a', encoding='utf-8')\n"
    )
    assert raw_writes(source) == {"write_text", "open", "os.open", "os.replace"}


@pytest.mark.parametrize("room", ROOMS)
def test_workspace_files_are_written_through_safewrite(room: str) -> None:
    unlisted = {}
    for path in sorted((PACKAGE / room).rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        extra = raw_writes(path.read_text(encoding="utf-8")) - ALLOWED.get(rel, set())
        if extra:
            unlisted[rel] = sorted(extra)
    assert unlisted == {}, "write these through memcli.safewrite (or list them in ALLOWED)"
