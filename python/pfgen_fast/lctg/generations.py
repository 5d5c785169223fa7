"""Generation files in the benchmark generator's format (`generated_result_v1.jsonl`): one row
per prompt with `prompt_id`, `model` and the texts generated for each constraint's prompt
(`format_result`, `char_count_result`, `keyword_result`, `prohibited_word_result`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import InputError
from pfgen_fast.common.jsonl import iter_json_lines, require, type_name
from pfgen_fast.lctg.aggregate import ITERATIONS
from pfgen_fast.lctg.data import CONSTRAINTS, PromptRow


@dataclass(frozen=True)
class GenerationRow:
    where: str  # "PATH:LINE"
    prompt_id: int
    generated_text_id: Any  # kept as given; not used in scoring
    model: str | None
    base_text: str | None  # what the judge is shown, when the file gives it
    texts: dict[str, list[str]]  # constraint -> the first three generations


def result_field(constraint: str) -> str:
    return f"{constraint}_result"


def read_texts(obj: dict[str, Any], constraint: str, where: str) -> list[str]:
    """The first three generations of a constraint; an InputError naming the field when there
    are fewer or one is not a string (the benchmark scores three)."""
    name = result_field(constraint)
    texts = require(obj, name, list, where)
    if len(texts) < ITERATIONS:
        raise InputError(
            f'{where}: field "{name}": {len(texts)} generations, expected {ITERATIONS}'
        )
    for index, text in enumerate(texts[:ITERATIONS]):
        if not isinstance(text, str):
            raise InputError(
                f'{where}: field "{name}": generation {index + 1} is {type_name(text)}, '
                "expected a string"
            )
    return list(texts[:ITERATIONS])


def load_generations(path: Path, prompts: dict[int, PromptRow], task: str) -> list[GenerationRow]:
    """The rows of a generation file, each checked: its prompt known to the task, not repeated,
    three string generations for every constraint."""
    rows: list[GenerationRow] = []
    seen: dict[int, str] = {}
    for line in iter_json_lines(path):
        obj, where = line.value, line.where
        prompt_id = require(obj, "prompt_id", int, where)
        if prompt_id not in prompts:
            raise InputError(
                f'{where}: field "prompt_id": {prompt_id} is not a prompt of task {task}'
            )
        if prompt_id in seen:
            raise InputError(
                f'{where}: field "prompt_id": {prompt_id} repeated (first at {seen[prompt_id]})'
            )
        seen[prompt_id] = where
        model = obj.get("model")
        if model is not None and not isinstance(model, str):
            raise InputError(f'{where}: field "model": expected a string, got {type_name(model)}')
        base_text = obj.get("base_text")
        if base_text is not None and not isinstance(base_text, str):
            raise InputError(
                f'{where}: field "base_text": expected a string, got {type_name(base_text)}'
            )
        texts = {c: read_texts(obj, c, where) for c in CONSTRAINTS}
        identifier = obj.get("generated_text_id")
        rows.append(GenerationRow(where, prompt_id, identifier, model, base_text, texts))
    if not rows:
        raise InputError(f"{path}: no generations")
    return rows


def model_name(rows: list[GenerationRow], given: str | None) -> str:
    """The name given, else the rows' `model` field, which must then be set and agree."""
    if given:
        return given
    first = rows[0]
    if first.model is None:
        raise InputError(f'{first.where}: field "model": missing (or pass --model NAME)')
    for row in rows[1:]:
        if row.model != first.model:
            raise InputError(
                f'{row.where}: field "model": {row.model!r} differs from {first.model!r} '
                f"at {first.where} (or pass --model NAME)"
            )
    return first.model
