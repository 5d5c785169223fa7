"""Reading a benchmark's own Python files at run time without running them: the parsed module,
the literal a name is given in a module, class or function, the parts of an f-string a function
returns, and the system messages of the chat messages it builds (literal `{"role": "system",
...}`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
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


@dataclass(frozen=True)
class KeyField:
    """A replacement field of an f-string that looks a literal key up, as `{doc["key"]}`."""

    key: str


def returned_fstring(path: Path, scope: str) -> list[str | KeyField]:
    """The parts, in order, of the f-string the function `scope` returns (its first `return`
    directly in its body): the literal texts, and a KeyField for each field of the form
    `{name["key"]}` (any other field, a conversion or a format spec is refused)."""
    for node in scope_body(path, scope):
        if not isinstance(node, ast.Return) or not isinstance(node.value, ast.JoinedStr):
            continue
        parts: list[str | KeyField] = []
        for value in node.value.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                parts.append(value.value)
            elif (
                isinstance(value, ast.FormattedValue)
                and value.conversion == -1
                and value.format_spec is None
                and isinstance(value.value, ast.Subscript)
                and isinstance(value.value.value, ast.Name)
                and isinstance(value.value.slice, ast.Constant)
                and isinstance(value.value.slice.value, str)
            ):
                parts.append(KeyField(value.value.slice.value))
            else:
                raise DataError(f"{path}:{value.lineno}: an f-string field other than name[key]")
        return parts
    raise DataError(f"{path}: {scope} returns no f-string")


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
