"""The adapters hold the Memory they drive by its type, never as ``Any``: mypy then checks
every call they make on the library's façade.

An AST scan of the adapters (the CLI, the hook runner and the MCP server, the engine, the
warm Memory they share): a parameter named ``mem`` or ``memory`` is annotated, and not with
``Any``; a function named ``memory`` or ``_memory`` returns a type, not ``Any``; a callable
run on the Memory takes it typed (no ``Callable[[Any], ...]``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ADAPTERS = ["memcli/cli", "memcli/agent", "memcli/engine", "memcli/warm.py"]
MEMORY_PARAMETERS = {"mem", "memory"}
MEMORY_GETTERS = {"memory", "_memory"}


def _modules() -> Iterator[Path]:
    for name in ADAPTERS:
        path = ROOT / name
        yield from sorted(path.rglob("*.py")) if path.is_dir() else [path]


def _mentions_any(node: ast.expr | None) -> bool:
    return node is not None and any(
        (isinstance(n, ast.Name) and n.id == "Any")
        or (isinstance(n, ast.Attribute) and n.attr == "Any")
        or (isinstance(n, ast.Constant) and isinstance(n.value, str) and "Any" in n.value)
        for n in ast.walk(node)
    )


def _callable_of_any(node: ast.expr | None) -> bool:
    """``Callable[[Any], ...]``: a function run on the Memory, the Memory untyped."""
    for n in ast.walk(node) if node is not None else ():
        if (
            isinstance(n, ast.Subscript)
            and isinstance(n.value, ast.Name)
            and n.value.id == "Callable"
            and isinstance(n.slice, ast.Tuple)
            and n.slice.elts
            and isinstance(n.slice.elts[0], ast.List)
            and len(n.slice.elts[0].elts) == 1
            and _mentions_any(n.slice.elts[0].elts[0])
        ):
            return True
    return False


def untyped_memory() -> list[str]:
    """Where an adapter holds the Memory (or a function of it) without its type."""
    found = []
    for path in _modules():
        rel = path.relative_to(ROOT)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            args = node.args
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                where = f"{rel}:{arg.lineno} {node.name}({arg.arg})"
                if arg.arg in MEMORY_PARAMETERS and (
                    arg.annotation is None or _mentions_any(arg.annotation)
                ):
                    found.append(f"{where}: the Memory untyped")
                if _callable_of_any(arg.annotation):
                    found.append(f"{where}: a function of an untyped Memory")
            if node.name in MEMORY_GETTERS and (
                node.returns is None or _mentions_any(node.returns)
            ):
                found.append(f"{rel}:{node.lineno} {node.name}(): returns the Memory untyped")
    return found


def test_no_adapter_holds_the_memory_as_any() -> None:
    assert untyped_memory() == []


def test_the_scan_sees_an_untyped_memory() -> None:
    tree = ast.parse(
        "def a(mem: Any) -> None: ...\n"
        "def b(memory) -> None: ...\n"
        "def _memory(self) -> Any: ...\n"
        "async def call(self, fn: Callable[[Any], T]) -> T: ...\n"
        "def fine(mem: Memory, fn: Callable[[Memory], T]) -> Memory: ...\n"
    )
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    assert _mentions_any(funcs[0].args.args[0].annotation)
    assert funcs[1].args.args[0].annotation is None
    assert _mentions_any(funcs[2].returns)
    assert _callable_of_any(funcs[3].args.args[1].annotation)
    assert not _mentions_any(funcs[4].args.args[0].annotation)
    assert not _callable_of_any(funcs[4].args.args[1].annotation)
