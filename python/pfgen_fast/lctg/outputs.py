"""What the LCTG Bench room writes, and how it is read back (by its own commands, its
leaderboard and other rooms). Every file of the room is written and read here.

`lctg generate --out DIR` writes
* `generated_result_v1.jsonl`: the benchmark generator's format (also what a user brings to
  `lctg eval`), one prompt a line: `generated_text_id`, `model`, `prompt_id`, `base_text`, and
  per constraint `CONSTRAINT_result` (the texts generated for its prompt; `format_result`,
  `char_count_result`, `keyword_result`, `prohibited_word_result`);
* `generation-settings.json`: `task`, `model`, `base_url`, `generations`, the request
  parameters sent (`temperature`, `top_p`, `max_tokens`, each when given), `seed`,
  `system_prompt`, `extra_body`, `strip_reasoning`;
* `generation-replies.jsonl`: every raw reply (the shared LLM client's log).

`lctg eval --out DIR` writes, per task,
* `lctg-TASK-scores.json`: `task`, `model`, `scores` (the columns of `COLUMNS`), `judge`
  (`base_url`, `model`, `sampling`, `max_tokens`, `extra_body`, `strip_reasoning`),
  `prompts_scored`, `prompts_in_task`, `generations`, `failed`, `failure_reasons`,
  `remover_refused`, `remover_refusal_reasons`, and `details` (per constraint
  `ctg_iterations`, `ctg_satisfied`, `ctg_checked`, `quality_iterations`,
  `quality_appropriate_judged`);
* `lctg-TASK-scores.csv`: `model` and the score columns;
* `lctg-TASK-analysis.jsonl`: one generation a line (`AnalysisRecord`): `prompt_id`,
  `constraint`, `iteration`, `raw`, `cleaned`, `remover_status`, `check`, `judge_replies`,
  `quality`, and `failure` when it failed;
* `lctg-TASK-replies.jsonl`: every raw reply (the shared LLM client's log)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import orjson

from pfgen_fast.common.errors import InputError
from pfgen_fast.common.files import write_atomically
from pfgen_fast.common.jsonl import (
    dumps_line,
    iter_json_lines,
    read_json_object,
    require,
    type_name,
    wrong_type,
)
from pfgen_fast.common.tables import write_table
from pfgen_fast.lctg.aggregate import COLUMNS, ITERATIONS, ConstraintScores, score_row, shown_row
from pfgen_fast.lctg.data import CONSTRAINTS, TASKS, load_prompts, resolve_data_dir
from pfgen_fast.lctg.data import PromptRow as PromptRow  # what task_prompts gives

GENERATIONS_NAME = "generated_result_v1.jsonl"
SETTINGS_NAME = "generation-settings.json"
GENERATION_REPLIES_NAME = "generation-replies.jsonl"
SCORES_FILE = re.compile(r"lctg-(?P<task>[a-z_]+)-scores\.json")


def scores_json_name(task: str) -> str:
    return f"lctg-{task}-scores.json"


def scores_csv_name(task: str) -> str:
    return f"lctg-{task}-scores.csv"


def analysis_name(task: str) -> str:
    return f"lctg-{task}-analysis.jsonl"


def replies_name(task: str) -> str:
    return f"lctg-{task}-replies.jsonl"


@dataclass(frozen=True)
class Entry:
    """One evaluation's scores file, checked as the leaderboard reads it; `document`: the
    whole file (judge, prompts scored, details)."""

    path: Path
    task: str
    model: str
    scores: dict[str, float | None]
    document: dict[str, Any]

    @property
    def analysis_path(self) -> Path:
        return self.path.with_name(analysis_name(self.task))


def scores_files(root: Path) -> list[Path]:
    """Every `lctg-TASK-scores.json` below `root`."""
    return sorted(p for p in root.rglob("lctg-*-scores.json") if SCORES_FILE.fullmatch(p.name))


def read_entry(path: Path) -> Entry:
    """One evaluation's scores; an InputError naming the file and field otherwise."""
    document = read_json_object(path, what="a JSON object (an lctg eval scores file)")
    task, model, scores = document.get("task"), document.get("model"), document.get("scores")
    if task not in TASKS:
        raise InputError(f'{path}: field "task": expected one of {", ".join(TASKS)}')
    if not isinstance(model, str):
        raise InputError(f'{path}: field "model": expected a string')
    if not isinstance(scores, dict) or any(name not in scores for name in COLUMNS):
        raise InputError(f'{path}: field "scores": expected the columns {", ".join(COLUMNS)}')
    for name in COLUMNS:
        value = scores[name]
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise InputError(f"{path}: {wrong_type(f'scores.{name}', 'a number', value)}")
    return Entry(path, task, model, {name: scores[name] for name in COLUMNS}, document)


@dataclass
class AnalysisRecord:
    """One generation as the analysis file records it: the text before and after the header
    remover (and the remover's HTTP status), the check of its constraint, the quality judge's
    replies and label (True/False, the unparseable reply, None: no label), and why the remover
    or the judge gave none (`failure`). The defaults are a generation not yet evaluated."""

    prompt_id: int
    constraint: str
    iteration: int
    raw: str
    cleaned: str = ""
    remover_status: int = 200
    check: bool | None = None
    judge_replies: list[str] = field(default_factory=list)  # as received; a retry second
    quality: bool | str | None = None
    failure: str | None = None

    def line(self) -> dict[str, Any]:
        """The JSON line: the fields in order, `failure` only when there is one."""
        line = {f.name: getattr(self, f.name) for f in fields(AnalysisRecord)}
        if self.failure is None:
            del line["failure"]
        return line


# The kind of each field of an analysis line that is always written.
ANALYSIS_FIELDS: dict[str, type | tuple[type, ...]] = {
    "prompt_id": int,
    "constraint": str,
    "iteration": int,
    "raw": str,
    "cleaned": str,
    "remover_status": int,
    "check": (bool, type(None)),
    "judge_replies": list,
    "quality": (bool, str, type(None)),
}


def read_analysis(path: Path) -> Iterator[AnalysisRecord]:
    """The generations of an analysis file, in file order; an InputError naming the line and
    field of one that is not as `AnalysisRecord.line` writes it."""
    for line in iter_json_lines(path):
        obj, where = line.value, line.where
        values = {name: require(obj, name, kind, where) for name, kind in ANALYSIS_FIELDS.items()}
        for reply in values["judge_replies"]:
            if not isinstance(reply, str):
                raise InputError(f"{where}: {wrong_type('judge_replies', 'strings', reply)}")
        failure = obj.get("failure")
        if failure is not None and not isinstance(failure, str):
            raise InputError(f"{where}: {wrong_type('failure', 'a string', failure)}")
        yield AnalysisRecord(**values, failure=failure)


def task_prompts(task: str, data_dir: Path | None) -> dict[int, PromptRow]:
    """The task's prompts by id, from LCTG Bench's files where `lctg eval` finds them
    (`data_dir`, else the default place); a DataError says why they cannot be had."""
    return load_prompts(resolve_data_dir(data_dir), task)


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


def generated_rows(
    prompts: list[PromptRow], texts: list[str], model: str, generations: int
) -> list[dict[str, Any]]:
    """The generator's rows, from the texts in request order."""
    rows = []
    per_prompt = len(CONSTRAINTS) * generations
    for index, row in enumerate(prompts):
        mine = texts[index * per_prompt : (index + 1) * per_prompt]
        record: dict[str, Any] = {
            "generated_text_id": index,
            "model": model,
            "prompt_id": row.prompt_id,
            "base_text": row.base_text,
        }
        for k, constraint in enumerate(CONSTRAINTS):
            record[f"{constraint}_result"] = mine[k * generations : (k + 1) * generations]
        rows.append(record)
    return rows


def write_generations(path: Path, rows: list[dict[str, Any]]) -> None:
    """A generation file of the rows `generated_rows` made."""
    write_atomically(path, b"".join(dumps_line(row) for row in rows))


def write_settings(out: Path, settings: dict[str, Any]) -> None:
    write_atomically(out / SETTINGS_NAME, orjson.dumps(settings, option=orjson.OPT_INDENT_2))


@dataclass(frozen=True)
class OutputPaths:
    analysis: Path
    scores_json: Path
    scores_csv: Path
    replies: Path


def output_paths(out: Path, task: str) -> OutputPaths:
    return OutputPaths(
        analysis=out / analysis_name(task),
        scores_json=out / scores_json_name(task),
        scores_csv=out / scores_csv_name(task),
        replies=out / replies_name(task),
    )


def details(scores: dict[str, ConstraintScores]) -> dict[str, Any]:
    """Per constraint and iteration: the unrounded rates and their counts."""
    return {
        constraint: {
            "ctg_iterations": s.ctg_iterations,
            "ctg_satisfied": s.ctg_counts,
            "ctg_checked": s.ctg_checked,
            "quality_iterations": s.quality_iterations,
            "quality_appropriate_judged": s.quality_counts,
        }
        for constraint, s in scores.items()
    }


def scores_document(
    task: str,
    model: str,
    scores: dict[str, ConstraintScores],
    judge: dict[str, Any],
    prompts: tuple[int, int],
    failures: tuple[int, list[str]],
    refusals: list[str],
) -> dict[str, Any]:
    """The JSON document of one evaluation: shown scores first, then how they were made.
    `failures`: the number of generations, and the reasons of those that failed; `refusals`:
    why the remover's server refused the generations scored as "Invalid Error"."""
    generations, reasons = failures
    return {
        "task": task,
        "model": model,
        "scores": shown_row(score_row(scores)),
        "judge": judge,
        "prompts_scored": prompts[0],
        "prompts_in_task": prompts[1],
        "generations": generations,
        "failed": len(reasons),
        "failure_reasons": dict(Counter(reasons).most_common()),
        "remover_refused": len(refusals),
        "remover_refusal_reasons": dict(Counter(refusals).most_common()),
        "details": details(scores),
    }


def write_outputs(
    paths: OutputPaths, records: Iterable[AnalysisRecord], document: dict[str, Any]
) -> None:
    """The analysis (one record a generation), the scores document and its CSV row."""
    write_atomically(paths.analysis, b"".join(dumps_line(record.line()) for record in records))
    write_atomically(paths.scores_json, orjson.dumps(document, option=orjson.OPT_INDENT_2))
    scores = document["scores"]
    write_table(paths.scores_csv, ["model", *COLUMNS], [[document["model"], *scores.values()]])
