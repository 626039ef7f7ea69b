"""ARCHITECTURE.md's levels are the layers import-linter checks (pyproject.toml), in order."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _layers() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    [layers] = [c["layers"] for c in contracts if c["type"] == "layers"]
    return [name.strip() for layer in layers for name in re.split(r"[:|]", layer)]


def _levels() -> list[str]:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    found = re.search(r"\*\*The levels\*\*(.*?)A module imports only", text, re.DOTALL)
    assert found, "ARCHITECTURE.md lists the levels in a bullet '**The levels**'"
    return re.findall(r"`([a-z]+)`", found.group(1))


def test_architecture_lists_the_layers_in_order() -> None:
    assert _levels() == _layers()


def test_every_room_is_in_a_layer() -> None:
    """Every package and module of memcli has its level (``__main__``, ``python -m memcli``,
    is the CLI's entry point, and the package root is above them all)."""
    package = ROOT / "memcli"
    rooms = {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    rooms |= {p.stem for p in package.glob("*.py") if not p.stem.startswith("__")}
    assert rooms == set(_layers()), sorted(rooms ^ set(_layers()))


def _room_rows() -> dict[str, str]:
    """The rows of ARCHITECTURE.md's table of rooms, by the path in their first cell."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        found = re.match(r"\| `(memcli/[^`]*)` \|", line)
        if found:
            rows[found.group(1)] = line
    return rows


def _unnamed_modules(rows: dict[str, str], package: Path) -> list[str]:
    """The modules under ``package`` that the row of their room does not name: ``stem`` (or
    ``sub/stem`` in a sub-package, or ``stem: member``/``stem.member``) in backquotes; a module
    at the top of the package is named by a row of its own or in the ``memcli/`` row."""
    missing = []
    for path in sorted(package.rglob("*.py")):
        if path.stem in ("__init__", "__main__"):
            continue
        parts = path.relative_to(package).parts
        if len(parts) == 1:
            if f"memcli/{path.name}" in rows:
                continue
            row = rows.get("memcli/", "")
        else:
            row = rows.get(f"memcli/{parts[0]}/", "")
        names = {re.split(r"[.:]", name)[0] for name in re.findall(r"`([^`]+)`", row)}
        relative = "/".join(parts[1:])[: -len(".py")]
        if path.stem not in names and relative not in names:
            missing.append(path.relative_to(package.parent).as_posix())
    return missing


def test_every_module_is_named_in_its_room() -> None:
    """A module added under memcli/ is described where someone about to change it looks."""
    missing = _unnamed_modules(_room_rows(), ROOT / "memcli")
    assert not missing, f"ARCHITECTURE.md's table of rooms does not name: {missing}"


def test_a_module_left_unnamed_is_found(tmp_path: Path) -> None:
    package = tmp_path / "memcli"
    (package / "notes").mkdir(parents=True)
    for name in ("notes/__init__.py", "notes/scan.py", "notes/stray.py", "errors.py", "odd.py"):
        (package / name).write_text("", encoding="utf-8")
    rows = {"memcli/notes/": "| `memcli/notes/` | files (`scan`) |", "memcli/": "`errors`"}
    assert _unnamed_modules(rows, package) == ["memcli/notes/stray.py", "memcli/odd.py"]
