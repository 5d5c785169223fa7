"""Reading a benchmark's own Python files at run time without running them: the parsed module
and the system messages of the chat messages it builds (literal `{"role": "system", ...}`)."""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

from pfgen_fast.common.errors import DataError


@lru_cache(maxsize=16)
def parse_source(path: Path) -> ast.Module:
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError, UnicodeDecodeError) as error:
        raise DataError(f"{path}: cannot read as Python source: {error}") from None


def system_messages(module: ast.Module) -> list[str]:
    """The `content` of every `{"role": "system", "content": "..."}` literal, in walk order."""
    found = []
    for node in ast.walk(module):
        if not isinstance(node, ast.Dict):
            continue
        entries = {
            key.value: value
            for key, value in zip(node.keys, node.values, strict=True)
            if isinstance(key, ast.Constant)
        }
        role, content = entries.get("role"), entries.get("content")
        if (
            isinstance(role, ast.Constant)
            and role.value == "system"
            and isinstance(content, ast.Constant)
            and isinstance(content.value, str)
        ):
            found.append(content.value)
    return found
