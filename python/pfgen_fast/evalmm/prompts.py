"""Judge prompts and JMMMU's indicator list, read from llm-jp-eval-mm's own source files at run
time (parsed, never executed): a module-level string or list, and the system message of the
chat messages a module builds."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pfgen_fast.common.errors import DataError
from pfgen_fast.evalmm.data import metrics_file


@dataclass(frozen=True)
class JudgePrompt:
    system: str
    template: str  # str.format fields as the original fills them


@lru_cache(maxsize=16)
def parse_module(path: Path) -> ast.Module:
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError, UnicodeDecodeError) as error:
        raise DataError(f"{path}: cannot read as Python source: {error}") from None


def module_constant(path: Path, name: str) -> object:
    """The literal value assigned to `name` at the top of the module."""
    for node in parse_module(path).body:
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
    raise DataError(f"{path}: no literal {name} found")


def system_message(path: Path) -> str:
    """The content of the first `{"role": "system", "content": "..."}` literal in the module."""
    for node in ast.walk(parse_module(path)):
        if not isinstance(node, ast.Dict):
            continue
        fields = {
            key.value: value
            for key, value in zip(node.keys, node.values, strict=True)
            if isinstance(key, ast.Constant)
        }
        role, content = fields.get("role"), fields.get("content")
        if (
            isinstance(role, ast.Constant)
            and role.value == "system"
            and isinstance(content, ast.Constant)
            and isinstance(content.value, str)
        ):
            return content.value
    raise DataError(f"{path}: no system message found")


def judge_prompt(file_name: str, template_name: str, data_dir: Path | None) -> JudgePrompt:
    path = metrics_file(file_name, data_dir)
    template = module_constant(path, template_name)
    if not isinstance(template, str):
        raise DataError(f"{path}: {template_name} is not a string")
    return JudgePrompt(system_message(path), template)


def jmmmu_indicators(data_dir: Path | None) -> list[str]:
    """JMMMU's answer indicators exactly as the module defines them (its missing comma
    included: Python joins the two neighbouring strings)."""
    path = metrics_file("jmmmu_scorer.py", data_dir)
    value = module_constant(path, "_JAPANESE_INDICATORS")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataError(f"{path}: _JAPANESE_INDICATORS is not a list of strings")
    return value
