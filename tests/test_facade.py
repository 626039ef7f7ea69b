"""``Memory`` is one thin, typed façade over the service's functions: the workspace's core
with each operation bound by name to the function of :mod:`memcli.service` that does it, not
a chain of mixin classes sharing ``self``."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from memcli.memory import Memory
from memcli.service.core import MemoryCore

ROOT = Path(__file__).resolve().parent.parent
#: What ``Memory`` composes itself, in the open, across services.
COMPOSED = {"sync"}


def test_memory_is_the_core_and_nothing_else() -> None:
    assert Memory.__mro__ == (Memory, MemoryCore, object)


def test_each_operation_is_a_function_of_the_service() -> None:
    core = set(dir(MemoryCore))
    bound = {}
    for name, value in vars(Memory).items():
        if name.startswith("__") or name in COMPOSED:
            continue
        func = value.__func__ if isinstance(value, staticmethod) else value
        assert inspect.isfunction(func), name
        bound[name] = func.__module__
    assert all(module.startswith("memcli.service.") for module in bound.values()), bound
    assert not core & set(bound)  # nothing of the core bound again
    assert {"add", "search", "flush", "supersede", "config_set", "init"} <= set(bound)


def test_no_service_module_is_a_mixin() -> None:
    """No class of the service builds on the core: the operations take it as an argument."""
    mixins = []
    for path in sorted((ROOT / "memcli" / "service").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                isinstance(b, ast.Name) and b.id.endswith(("Core", "Service")) for b in node.bases
            ):
                mixins.append(f"{path.name}: {node.name}")
    assert mixins == []
