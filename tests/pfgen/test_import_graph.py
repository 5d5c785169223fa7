"""The pfgen room's modules import each other without a circle (every import counted, those
under TYPE_CHECKING too), and the question files have one home: `pfgen.data`."""

from __future__ import annotations

import ast
from pathlib import Path

import pfgen_fast

PACKAGE = Path(pfgen_fast.__file__).parent
ROOM = "pfgen_fast.pfgen"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def room_imports() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in sorted((PACKAGE / "pfgen").rglob("*.py")):
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(ROOM):
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(a.name for a in node.names if a.name.startswith(ROOM))
        graph[module_name(path)] = imported
    return graph


def test_no_import_circle_in_the_pfgen_room() -> None:
    graph = room_imports()
    circles = []
    for start in graph:
        stack = [(start, [start])]
        seen = set()
        while stack:
            module, path = stack.pop()
            for target in graph.get(module, ()):
                if target == start:
                    circles.append(" -> ".join([*path, target]))
                elif target not in seen:
                    seen.add(target)
                    stack.append((target, [*path, target]))
    assert circles == []


def test_the_question_files_are_defined_in_data() -> None:
    from pfgen_fast.pfgen import data, outputs

    for name in ("Question", "load_question", "load_questions", "question_files"):
        assert getattr(data, name).__module__ == "pfgen_fast.pfgen.data"
        assert getattr(outputs, name) is getattr(data, name)
    assert "pfgen_fast.pfgen.outputs" not in room_imports()["pfgen_fast.pfgen.data"]
