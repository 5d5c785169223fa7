"""The package's import graph has no circle: no module reaches itself through the modules it
imports, counting every import statement (inside functions and `TYPE_CHECKING` blocks too, since
a circle of annotations is still two modules that each need the other). The graph is read from
the source with `ast`; circles are its strongly connected components of more than one module."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "pfgen_fast"


def module_files() -> dict[str, Path]:
    """Dotted module name -> its file, for every module of the package."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def imported_names(module: str, path: Path) -> list[str]:
    """The dotted names each import statement of the module names (a `from X import y` gives
    both `X.y` and `X`: which one is a module is decided by the caller)."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            prefix = ".".join(base + ([node.module] if node.module else []))
            names += [f"{prefix}.{alias.name}" for alias in node.names] + [prefix]
    return names


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports, with the packages whose `__init__` that
    import runs on the way (but the module's own packages, begun before it)."""
    modules = module_files()
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets = set()
        for name in imported_names(module, path):
            while name not in modules and "." in name:
                name = name.rsplit(".", 1)[0]
            parts = name.split(".")
            for end in range(1, len(parts) + 1):
                target = ".".join(parts[:end])
                if target in modules and target != module and not module.startswith(target + "."):
                    targets.add(target)
        graph[module] = targets
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
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

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_checker_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_package_has_no_import_circle() -> None:
    graph = import_graph()
    assert "pfgen_fast.common.llm" in graph and graph["pfgen_fast.cli"]
    assert circles(graph) == []
