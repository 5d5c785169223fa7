"""The evalmm room has no import circle: its import graph, read from the source with `ast`
(every import: at the top, inside functions, under TYPE_CHECKING; importing a module runs its
packages' `__init__` too, but a module's own packages have begun before it), has no strongly
connected component of more than one module."""

from __future__ import annotations

import ast
from pathlib import Path

import pfgen_fast

PACKAGE = Path(pfgen_fast.__file__).parent
ROOM = "pfgen_fast.evalmm"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(tree: ast.AST) -> set[str]:
    """Every module name an import names (a `from` import's names too: they may be modules),
    with the packages it runs on the way."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    with_packages = set(names)
    for name in names:
        parts = name.split(".")
        with_packages.update(".".join(parts[:end]) for end in range(1, len(parts)))
    return with_packages


def room_graph() -> dict[str, set[str]]:
    files = {module_name(path): path for path in (PACKAGE / "evalmm").rglob("*.py")}
    graph = {}
    for name, path in files.items():
        own_packages = {name.rsplit(".", end)[0] for end in range(name.count(".") + 1)}
        found = imported(ast.parse(path.read_text()))
        graph[name] = {other for other in found if other in files} - own_packages
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        for other in graph[name]:
            if other not in index:
                visit(other)
                low[name] = min(low[name], low[other])
            elif other in stack:
                low[name] = min(low[name], index[other])
        if low[name] == index[name]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == name:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return found


def test_the_room_has_no_import_circle() -> None:
    graph = room_graph()
    assert f"{ROOM}.images" in graph and f"{ROOM}.metrics.base" in graph
    assert circles(graph) == []


def test_the_check_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
