"""Judge prompts and JMMMU's indicator list, read from llm-jp-eval-mm's own source files at run
time (parsed, never executed): a module-level string or list, and the system message of the
chat messages a module builds."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from pfgen_fast.common.errors import DataError
from pfgen_fast.common.python_source import parse_source, system_messages
from pfgen_fast.evalmm.data import metrics_file


@dataclass(frozen=True)
class JudgePrompt:
    system: str
    template: str  # str.format fields as the original fills them


def module_constant(path: Path, name: str) -> object:
    """The literal value assigned to `name` at the top of the module."""
    for node in parse_source(path).body:
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
    messages = system_messages(parse_source(path))
    if not messages:
        raise DataError(f"{path}: no system message found")
    return messages[0]


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
