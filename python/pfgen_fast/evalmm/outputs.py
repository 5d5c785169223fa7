"""What the llm-jp-eval-mm room writes, and how it is read back (by its own leaderboard and
by other rooms): a result folder `OUT/<task>/<model>/` holds

* `prediction.jsonl`: per item `question_id`, `text` (the reply), `answer`, `input_text`, an
  optional `reasoning` string, and one key per metric (its per-item score);
* `evaluation.jsonl`: one line, metric → aggregate (`overall_score`, `details`);
* `manifest.json`: llm-jp-eval-mm's fields (`model_id`, `task_id`, ...);
* `run_info.json`: pfgen_fast's record of the run (`task`, `dataset`, `dataset_revision`,
  `data_dir`, the generation settings);
* `error_message.jsonl`: the failed items, when some failed.

The items of a run (their prompts and images) come from the same item builder as `mm run`
(`dataset_items`), from the dataset its record names."""

from __future__ import annotations

import re
import sys
import urllib.parse
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

import orjson

from pfgen_fast.common.errors import InputError, PfgenError
from pfgen_fast.common.jsonl import iter_json_lines, read_json_object, require
from pfgen_fast.evalmm.tasks import TaskImage, TaskItem, iter_items, task_names

__all__ = [
    "ERRORS",
    "EVALUATION",
    "MANIFEST",
    "PREDICTIONS",
    "RUN_INFO",
    "Prediction",
    "ResultFolder",
    "TaskImage",
    "TaskItem",
    "dataset_items",
    "read_evaluation",
    "read_failures",
    "read_predictions",
    "read_result_folder",
    "recorded_data_dir",
    "result_folders",
    "rotated_choices",
]

PREDICTIONS = "prediction.jsonl"
EVALUATION = "evaluation.jsonl"
MANIFEST = "manifest.json"
RUN_INFO = "run_info.json"
ERRORS = "error_message.jsonl"
# Fields of a prediction line that are not per-item scores.
TEXT_FIELDS = frozenset({"question_id", "text", "answer", "input_text", "category", "reasoning"})
# MECHA-ja's ids when its options were rotated (`mm run --rotate-choices`).
ROTATED_ID = re.compile(r"\d+_rot\d+")


@dataclass(frozen=True, kw_only=True)
class Prediction:
    """One line of `prediction.jsonl`; `scores`: the metrics' per-item scores."""

    question_id: str
    text: str
    answer: Any
    input_text: str
    category: str | None
    reasoning: str | None
    scores: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class ResultFolder:
    """One `<task>/<model>/` folder: its predictions, the evaluation's aggregates by metric,
    its manifest and pfgen_fast's run record (empty when absent)."""

    folder: Path
    task: str
    model: str
    predictions: list[Prediction]
    evaluation: dict[str, Any]
    manifest: dict[str, Any]
    run_info: dict[str, Any]

    def overall_scores(self) -> dict[str, float]:
        """Each metric's overall score, where it has a number (a metric no item of which was
        judged has none)."""
        found = {}
        for metric, aggregate in self.evaluation.items():
            value = aggregate.get("overall_score") if isinstance(aggregate, dict) else None
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                found[metric] = value
        return found


def result_folders(root: Path) -> list[Path]:
    """Every folder below `root` holding a `prediction.jsonl`."""
    return sorted(path.parent for path in root.rglob(PREDICTIONS))


def read_evaluation(folder: Path) -> dict[str, Any]:
    """A run's metric → aggregate. An aggregate without a numeric `overall_score` (null: a
    judged metric with no item judged) is shown as n/a: said on stderr unless it is null."""
    path = folder / EVALUATION
    try:
        value = orjson.loads(path.read_bytes().strip() or b"{}")
    except (OSError, orjson.JSONDecodeError) as error:
        raise InputError(f"{path}: cannot read: {error}") from None
    if not isinstance(value, dict):
        raise InputError(f"{path}: expected a JSON object")
    for metric, aggregate in value.items():
        score = aggregate.get("overall_score") if isinstance(aggregate, dict) else None
        if score is None or is_number(score):
            if not isinstance(aggregate, dict) or "overall_score" not in aggregate:
                print(f"warning: {path}: {metric}: no overall_score, shown as n/a", file=sys.stderr)
                value[metric] = {"overall_score": None}
            continue
        shown = orjson.dumps(score).decode()[:40]
        print(
            f"warning: {path}: {metric}: overall_score {shown} is not a number, shown as n/a",
            file=sys.stderr,
        )
        value[metric] = {**aggregate, "overall_score": None}
    return value


def is_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def model_of(parts: Sequence[str]) -> str:
    """The model name of a result folder below its task's (`mm run`'s rule: a name with a
    `%` is percent-encoded, any other is the folder path itself)."""
    folder = "/".join(parts)
    return urllib.parse.unquote(folder) if "%" in folder else folder


def read_predictions(folder: Path) -> list[Prediction]:
    """The lines of `prediction.jsonl`, checked: an InputError names the line and field."""
    predictions = []
    for line in iter_json_lines(folder / PREDICTIONS):
        record = line.value
        text = require(record, "text", str, line.where)
        reasoning = record.get("reasoning")
        if reasoning is not None and not isinstance(reasoning, str):
            raise InputError(f'{line.where}: field "reasoning": expected a string')
        category = record.get("category")
        predictions.append(
            Prediction(
                question_id=str(record.get("question_id")),
                text=text,
                answer=record.get("answer"),
                input_text=str(record.get("input_text", "")),
                category=None if category is None else str(category),
                reasoning=reasoning,
                scores={k: v for k, v in record.items() if k not in TEXT_FIELDS},
            )
        )
    return predictions


def read_failures(folder: Path) -> dict[str, str]:
    """Why each failed item failed (question id -> reason), from `error_message.jsonl` (none
    when absent): `{"question_id", "error"}` a line, as both runners write it."""
    path = folder / ERRORS
    if not path.is_file():
        return {}
    failures = {}
    for line in iter_json_lines(path):
        question_id = line.value.get("question_id")
        if question_id is None:
            raise InputError(f'{line.where}: field "question_id": missing')
        failures[str(question_id)] = str(line.value.get("error", ""))
    return failures


def read_optional_object(path: Path) -> dict[str, Any]:
    return read_json_object(path) if path.is_file() else {}


def place_of(folder: Path, root: Path | None) -> tuple[str, str]:
    """The task and model a result folder's place says: `<task>/<model>` under `root` when its
    first part is a task of llm-jp-eval-mm's (the model's parts joined, percent-decoded by
    `mm run`'s rule), else the folder's parent and own name."""
    parts = folder.relative_to(root).parts if root is not None else ()
    if len(parts) >= 2 and parts[0] in task_names():
        return parts[0], model_of(parts[1:])
    return folder.parent.name, model_of([folder.name])


def read_result_folder(folder: Path, root: Path | None = None) -> ResultFolder:
    """A result folder; its task and model from its manifest (or run record), else from its
    place under `root` (`place_of`)."""
    predictions = read_predictions(folder)
    evaluation = read_evaluation(folder) if (folder / EVALUATION).is_file() else {}
    manifest = read_optional_object(folder / MANIFEST)
    run_info = read_optional_object(folder / RUN_INFO)
    place_task, place_model = place_of(folder, root)
    return ResultFolder(
        folder=folder,
        task=str(manifest.get("task_id") or run_info.get("task") or place_task),
        model=str(manifest.get("model_id") or place_model),
        predictions=predictions,
        evaluation=evaluation,
        manifest=manifest,
        run_info=run_info,
    )


def recorded_data_dir(result: ResultFolder) -> Path | None:
    """The dataset folder `mm run` read the task from (None: the Hub, or not recorded)."""
    value = result.run_info.get("data_dir")
    return Path(value) if isinstance(value, str) and value else None


def rotated_choices(result: ResultFolder) -> bool:
    """Whether MECHA-ja's options were rotated: as recorded, else from the items' ids."""
    recorded = result.run_info.get("rotate_choices")
    if isinstance(recorded, bool):
        return recorded
    return any(ROTATED_ID.fullmatch(p.question_id) for p in result.predictions)


def dataset_items(
    task: str, question_ids: set[str], data_dir: Path | None, rotate_choices: bool = False
) -> Iterator[TaskItem]:
    """The task's items among `question_ids` (their prompts, images in order ...), in dataset
    order, built by the task's own item builder as `mm run` builds them, from `data_dir` (a
    local copy of the dataset; None: the Hub). A PfgenError names what could not be read."""
    if task not in task_names():
        raise PfgenError(f"task {task!r} is not one of llm-jp-eval-mm's")
    wanted = set(question_ids)
    if not wanted:
        return
    for item in iter_items(task, data_dir, rotate_choices=rotate_choices):
        if item.question_id in wanted:
            wanted.discard(item.question_id)
            yield item
            if not wanted:
                return
