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
