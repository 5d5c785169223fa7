"""What the llm-jp-eval-mm room writes, and how it is read back (by its own commands, its
leaderboard and other rooms): a result folder `OUT/<task>/<model>/` holds

* `prediction.jsonl`: per item `question_id`, `text` (the reply), `answer`, `input_text`, an
  optional `reasoning` string, and one key per metric (its per-item score), with
  `judge_errors` (metric → why the judge gave no verdict) where a judge gave none;
* `evaluation.jsonl`: one line, metric → aggregate (`overall_score`, `details`);
* `manifest.json`: llm-jp-eval-mm's fields (`model_id`, `task_id`, ...);
* `run_info.json`: pfgen_fast's record of the run: the generation that made the predictions
  (`RunRecord`: `task`, `dataset`, `dataset_revision`, `local`, `split`, `data_dir`,
  `rotate_choices`, `generation`, `pfgen_fast_version`), and apart from it the scoring
  (`scored_record`: `judge`, and `scoring`, metric → the options it was last scored with);
* `error_message.jsonl`: `{"question_id", "error"}` per failed item, when some failed.

Beside the task folders, `OUT/judge_replies.jsonl` (`JUDGE_LOG`) holds every raw reply of the
judge of `mm run` and `mm evaluate` (the shared LLM client's log).

The items of a run (their prompts and images) come from the same item builder as `mm run`
(`dataset_items`), from the dataset its record names, and their images as files by `mm run`'s
rule (`image_file`)."""

from __future__ import annotations

import re
import sys
import urllib.parse
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import orjson

from pfgen_fast.common.errors import InputError, PfgenError
from pfgen_fast.common.files import write_atomically
from pfgen_fast.common.jsonl import dumps_line, iter_json_lines, read_json_object, require
from pfgen_fast.evalmm.images import TaskImage, image_failure, image_file
from pfgen_fast.evalmm.tasks import TaskItem, iter_items, task_names

__all__ = [
    "ERRORS",
    "EVALUATION",
    "JUDGE_LOG",
    "MANIFEST",
    "PREDICTIONS",
    "RUN_INFO",
    "Prediction",
    "ResultFolder",
    "RunRecord",
    "TaskImage",
    "TaskItem",
    "count_errors",
    "dataset_items",
    "image_failure",
    "image_file",
    "read_evaluation",
    "read_evaluation_record",
    "read_failures",
    "read_predictions",
    "read_result_folder",
    "read_run_record",
    "recorded_data_dir",
    "result_folders",
    "rotated_choices",
    "scored_record",
    "write_errors",
    "write_evaluation",
    "write_json",
    "write_predictions",
]

PREDICTIONS = "prediction.jsonl"
EVALUATION = "evaluation.jsonl"
MANIFEST = "manifest.json"
RUN_INFO = "run_info.json"
ERRORS = "error_message.jsonl"
JUDGE_LOG = "judge_replies.jsonl"
# Fields of a prediction line that are not per-item scores.
TEXT_FIELDS = ("question_id", "text", "answer", "input_text", "reasoning")
# MECHA-ja's ids when its options were rotated (`mm run --rotate-choices`), for results whose
# record does not say (llm-jp-eval-mm's own).
ROTATED_ID = re.compile(r"\d+_rot\d+")
# The run record's keys that describe the scoring, not the generation.
SCORING_KEYS = ("judge", "scoring")


@dataclass(kw_only=True)
class Prediction:
    """One item's line of `prediction.jsonl`. `scores`: the line's other keys in their order,
    each metric's per-item score (and `judge_errors`). Not written: `doc`, the document fields
    the scorers read besides the line; `where`, the item's place for messages."""

    question_id: str | int
    text: str
    answer: Any
    input_text: str
    reasoning: str | None = None  # returned by the server apart from the answer
    scores: dict[str, Any] = field(default_factory=dict)
    doc: dict[str, Any] = field(default_factory=dict)
    where: str = ""

    def line(self) -> dict[str, Any]:
        line = {
            "question_id": self.question_id,
            "text": self.text,
            "answer": self.answer,
            "input_text": self.input_text,
        }
        if self.reasoning is not None:
            line["reasoning"] = self.reasoning
        line.update(self.scores)
        return line


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    """What `run_info.json` says of the generation that made the predictions. `generation`
    (the request settings) and `pfgen_fast_version` are None when the predictions were made
    elsewhere (reused, with no record of theirs). The scoring is recorded apart
    (`scored_record`)."""

    task: str
    dataset: str
    dataset_revision: str | None
    local: bool
    split: str
    data_dir: str | None
    rotate_choices: bool
    generation: dict[str, Any] | None
    pfgen_fast_version: str | None

    def record(self) -> dict[str, Any]:
        """The record's keys in the order of the fields."""
        return asdict(self)


def scored_record(
    record: dict[str, Any],
    metrics: Sequence[str],
    options: dict[str, Any],
    judge: dict[str, Any] | None,
) -> dict[str, Any]:
    """A run record with a scoring of `metrics` added: `scoring` maps each metric to the
    options it was last scored with (the other metrics' kept), `judge` is the judge of the
    judged metrics (replaced when this scoring asked one); the generation's keys as they
    were."""
    scoring = dict(record.get("scoring") or {})
    scoring.update({name: options for name in metrics})
    judge = judge if judge is not None else record.get("judge")
    generation = {k: v for k, v in record.items() if k not in SCORING_KEYS}
    version = generation.pop("pfgen_fast_version", None)
    with_judge = {} if judge is None else {"judge": judge}
    return {**generation, **with_judge, "scoring": scoring, "pfgen_fast_version": version}


def write_json(path: Path, value: dict[str, Any]) -> None:
    """`manifest.json` and `run_info.json`: indented JSON."""
    write_atomically(path, orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n")


def write_predictions(folder: Path, predictions: Sequence[Prediction]) -> None:
    write_atomically(folder / PREDICTIONS, b"".join(dumps_line(p.line()) for p in predictions))


def write_evaluation(folder: Path, evaluation: dict[str, Any]) -> None:
    write_atomically(folder / EVALUATION, dumps_line(evaluation))


def write_errors(folder: Path, errors: Sequence[dict[str, Any]]) -> None:
    """`error_message.jsonl` of the failed items; none (an earlier one removed) when none
    failed."""
    if errors:
        write_atomically(folder / ERRORS, b"".join(dumps_line(error) for error in errors))
    else:
        (folder / ERRORS).unlink(missing_ok=True)


def count_errors(folder: Path) -> int:
    """How many items an existing `error_message.jsonl` lists (0 without one)."""
    path = folder / ERRORS
    if not path.is_file():
        return 0
    return sum(1 for _ in iter_json_lines(path))


def read_run_record(folder: Path) -> dict[str, Any] | None:
    """A folder's `run_info.json` as written (None: there is none)."""
    path = folder / RUN_INFO
    return read_json_object(path) if path.is_file() else None


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


def read_evaluation_record(folder: Path) -> dict[str, Any]:
    """A run's `evaluation.jsonl` as written: metric → aggregate (empty when there is none)."""
    path = folder / EVALUATION
    if not path.exists():
        return {}
    try:
        value = orjson.loads(path.read_bytes().strip() or b"{}")
    except (OSError, orjson.JSONDecodeError) as error:
        raise InputError(f"{path}: cannot read: {error}") from None
    if not isinstance(value, dict):
        raise InputError(f"{path}: expected a JSON object")
    return value


def read_evaluation(folder: Path) -> dict[str, Any]:
    """A run's metric → aggregate, to show. An aggregate without a numeric `overall_score`
    (null: a judged metric with no item judged) is shown as n/a: said on stderr unless it is
    null."""
    path = folder / EVALUATION
    value = read_evaluation_record(folder)
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
        reasoning = record.get("reasoning")
        if reasoning is not None and not isinstance(reasoning, str):
            raise InputError(f'{line.where}: field "reasoning": expected a string')
        predictions.append(
            Prediction(
                question_id=require(record, "question_id", (str, int), line.where),
                text=require(record, "text", str, line.where),
                answer=record.get("answer"),
                input_text=str(record.get("input_text", "")),
                reasoning=reasoning,
                scores={k: v for k, v in record.items() if k not in TEXT_FIELDS},
                where=line.where,
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
    run_info = read_run_record(folder) or {}
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
    return any(ROTATED_ID.fullmatch(str(p.question_id)) for p in result.predictions)


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
