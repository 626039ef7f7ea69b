"""No import circles between memcli's modules (ARCHITECTURE.md, "The rules, and what checks
them").

The graph is grimp's (what import-linter checks the layers on): every import of a module,
at its top, inside a function or under ``TYPE_CHECKING``, counts. A circle is a strongly
connected component of more than one module; the package root counts as a module (it offers
``memcli.Memory``, so nothing below may import it: the version is :mod:`memcli.version`).
"""

from __future__ import annotations

import grimp
import pytest


def circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append(
                        (child, iter(sorted(graph.find_modules_directly_imported_by(child))))
                    )
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("memcli", cache_dir=None)


def _described(graph: grimp.ImportGraph, component: list[str]) -> str:
    members = set(component)
    lines = [f"{len(component)} modules: {', '.join(component)}"]
    for importer in component:
        for imported in sorted(graph.find_modules_directly_imported_by(importer) & members):
            for detail in graph.get_import_details(importer=importer, imported=imported):
                lines.append(
                    f"  {importer} -> {imported} (line {detail['line_number']}:"
                    f" {detail['line_contents'].strip()})"
                )
    return "\n".join(lines)


def test_no_import_circles(graph: grimp.ImportGraph) -> None:
    found = circles(graph)
    assert not found, "import circles:\n" + "\n".join(_described(graph, c) for c in found)


def test_the_check_sees_a_circle() -> None:
    """The control case: one import back up (here, of the package root from the bottom
    layer, as doctor and the engine client once did) makes a circle through everything."""
    graph = grimp.build_graph("memcli", cache_dir=None)  # a graph of its own: changed here
    graph.add_import(importer="memcli.version", imported="memcli")
    found = circles(graph)
    assert len(found) == 1 and {"memcli", "memcli.memory", "memcli.version"} <= set(found[0])


def test_the_check_sees_a_circle_of_two() -> None:
    small = grimp.ImportGraph()
    for name in ("a", "b", "c"):
        small.add_module(name)
    small.add_import(importer="a", imported="b")
    small.add_import(importer="b", imported="a")
    small.add_import(importer="b", imported="c")
    assert circles(small) == [["a", "b"]]
