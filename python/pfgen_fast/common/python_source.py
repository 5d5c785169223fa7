"""Reading a benchmark's own Python files at run time without running them: the parsed module,
the literal a name is given in a module, class or function, and the system messages of the chat
messages it builds (literal `{"role": "system", ...}`)."""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

from pfgen_fast.common.errors import DataError

DEFINITIONS = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


@lru_cache(maxsize=16)
def parse_source(path: Path) -> ast.Module:
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError, UnicodeDecodeError) as error:
        raise DataError(f"{path}: cannot read as Python source: {error}") from None


def scope_body(path: Path, scope: str) -> list[ast.stmt]:
    """The statements directly in `scope`: "" is the module, else the dotted names of classes
    and functions defined one in another ("Class.method.inner")."""
    body = parse_source(path).body
    for name in scope.split(".") if scope else []:
        found = [node for node in body if isinstance(node, DEFINITIONS) and node.name == name]
        if not found:
            raise DataError(f"{path}: no {scope} defined")
        body = found[0].body
    return body


def assigned_literal(path: Path, name: str, scope: str = "") -> object:
    """The literal value of the first assignment to `name` directly in `scope` (see
    scope_body)."""
    for node in scope_body(path, scope):
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            try:
                return ast.literal_eval(value)
            except ValueError:
                break
    where = f" in {scope}" if scope else ""
    raise DataError(f"{path}: no literal {name} found{where}")


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
