"""The remover's and the quality judge's prompts, taken at run time from the benchmark's own
verified files: the three prompt functions of `scripts/utils/prompt.py` (only their definitions
are compiled, so the module's other imports are not needed) and the system prompt the scripts
send (read from their source with `ast`). None of that text lives in pfgen_fast."""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import DataError
from pfgen_fast.common.python_source import parse_source, system_messages
from pfgen_fast.lctg.data import require_verified

PROMPT_MODULE = "scripts/utils/prompt.py"
REMOVER_SCRIPT = "scripts/header_footer_remover.py"
JUDGE_SCRIPT = "scripts/eval_quality.py"
REMOVER_FUNCTION = "get_header_footer_remover_prompt"
JUDGE_FUNCTION = "get_quality_check_prompt"
RETRY_FUNCTION = "get_quality_check_prompt_bool"
PROBE = "\u0000probe\u0000"  # stands in for the generated text when checking a template


@dataclass(frozen=True)
class Templates:
    """The benchmark's prompt functions, bound to one task."""

    task: str
    system_prompt: str
    functions: dict[str, Callable[..., str]]

    def remover(self, generated: str) -> str:
        return self.functions[REMOVER_FUNCTION](self.task, generated)

    def judge(self, cleaned: str, base_text: str) -> str:
        return self.functions[JUDGE_FUNCTION](self.task, cleaned, base_text)

    def judge_retry(self, cleaned: str, base_text: str) -> str:
        return self.functions[RETRY_FUNCTION](self.task, cleaned, base_text)


def prompt_functions(path: Path) -> dict[str, Callable[..., str]]:
    """The three prompt functions defined in `prompt.py`, compiled from their definitions."""
    wanted = {REMOVER_FUNCTION, JUDGE_FUNCTION, RETRY_FUNCTION}
    module = parse_source(path)
    definitions = [
        node for node in module.body if isinstance(node, ast.FunctionDef) and node.name in wanted
    ]
    missing = wanted - {node.name for node in definitions}
    if missing:
        raise DataError(f"{path}: no function {', '.join(sorted(missing))}")
    namespace: dict[str, Any] = {"__builtins__": builtins}
    code = compile(ast.Module(body=[*definitions], type_ignores=[]), str(path), "exec")
    exec(code, namespace)  # the verified file's own definitions
    return {name: namespace[name] for name in wanted}


def system_prompts(path: Path) -> set[str]:
    """The `content` of every `{"role": "system", "content": "..."}` literal in a script."""
    return set(system_messages(parse_source(path)))


def load_templates(data_dir: Path, task: str) -> Templates:
    """The task's prompt functions and the scripts' system prompt, from verified files."""
    require_verified(data_dir, [PROMPT_MODULE, REMOVER_SCRIPT, JUDGE_SCRIPT])
    prompts = system_prompts(data_dir / REMOVER_SCRIPT) | system_prompts(data_dir / JUDGE_SCRIPT)
    if len(prompts) != 1:
        raise DataError(f"{data_dir}: expected one system prompt in the scripts, found {prompts}")
    templates = Templates(task, prompts.pop(), prompt_functions(data_dir / PROMPT_MODULE))
    filled = {
        REMOVER_FUNCTION: templates.remover(PROBE),
        JUDGE_FUNCTION: templates.judge(PROBE, ""),
        RETRY_FUNCTION: templates.judge_retry(PROBE, ""),
    }
    for name, prompt in filled.items():
        if PROBE not in prompt:
            raise DataError(f"{data_dir / PROMPT_MODULE}: {name} has no prompt for task {task}")
    return templates
