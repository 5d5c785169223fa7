"""The texts pfgen_fast sends or matches that llm-jp-eval-mm defines, read from its own source
files at run time (parsed, never executed): the instructions its Tasks add to their prompts,
the judge prompts (a module-level template and the system message of the chat messages a
module builds) and JMMMU's indicator list."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pfgen_fast.common.errors import DataError
from pfgen_fast.common.python_source import (
    KeyField,
    assigned_literal,
    parse_source,
    returned_fstring,
    system_messages,
)
from pfgen_fast.evalmm.data import package_file


@dataclass(frozen=True)
class JudgePrompt:
    system: str
    template: str  # str.format fields as the original fills them


@dataclass(frozen=True)
class TaskText:
    """A text of a Task's prompts: the string literal assigned to `name` directly in `scope`
    ("" the module, else e.g. "AI2D.doc_to_text") of `src/eval_mm/tasks/<file>`."""

    file: str
    name: str
    scope: str = ""

    def read(self, data_dir: Path | None) -> str:
        path = package_file(f"tasks/{self.file}", data_dir)
        value = assigned_literal(path, self.name, self.scope)
        if not isinstance(value, str):
            raise DataError(f"{path}: {self.name} is not a string")
        return value


def task_fstring(file: str, scope: str, data_dir: Path | None) -> list[str | KeyField]:
    """The literal texts and looked-up keys of the f-string that function `scope` of
    `src/eval_mm/tasks/<file>` returns."""
    return returned_fstring(package_file(f"tasks/{file}", data_dir), scope)


def system_message(path: Path) -> str:
    """The content of the first `{"role": "system", "content": "..."}` literal in the module."""
    messages = system_messages(parse_source(path))
    if not messages:
        raise DataError(f"{path}: no system message found")
    return messages[0]


def judge_prompt(file_name: str, template_name: str, data_dir: Path | None) -> JudgePrompt:
    path = package_file(f"metrics/{file_name}", data_dir)
    template = assigned_literal(path, template_name)
    if not isinstance(template, str):
        raise DataError(f"{path}: {template_name} is not a string")
    return JudgePrompt(system_message(path), template)


def jmmmu_indicators(data_dir: Path | None) -> list[str]:
    """JMMMU's answer indicators exactly as the module defines them (its missing comma
    included: Python joins the two neighbouring strings)."""
    path = package_file("metrics/jmmmu_scorer.py", data_dir)
    value = assigned_literal(path, "_JAPANESE_INDICATORS")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataError(f"{path}: _JAPANESE_INDICATORS is not a list of strings")
    return value
