"""`mm evaluate`: re-scores the result directory llm-jp-eval-mm's `evaluate` leaves
(`<task>/<model>/prediction.jsonl` with `text`, `answer`, `input_text`), writing its
`evaluation.jsonl` (one line, metric → aggregate) and the per-item scores into
`prediction.jsonl` as it does, then a leaderboard over models and tasks. `score_predictions`
is the scoring of `mm run` too."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pfgen_fast import __version__
from pfgen_fast.common.errors import InputError
from pfgen_fast.common.jsonl import iter_json_lines, require
from pfgen_fast.evalmm.metrics.base import Options
from pfgen_fast.evalmm.metrics.scorers import get_scorer
from pfgen_fast.evalmm.metrics.scoring import check_item, record_judge_failures, score_items
from pfgen_fast.evalmm.outputs import (
    PREDICTIONS,
    RUN_INFO,
    Prediction,
    model_of,
    read_evaluation_record,
    read_predictions,
    read_run_record,
    scored_record,
    write_evaluation,
    write_json,
    write_predictions,
)
from pfgen_fast.evalmm.tasks import TASKS_BY_NAME


@dataclass(kw_only=True)
class Run:
    """One model's predictions on one task."""

    task: str
    model: str
    folder: Path
    predictions: list[Prediction]


def find_runs(result_dir: Path) -> list[Path]:
    """Every `<task>/<model>/` folder holding predictions (a model name with '/' is a deeper
    folder, as llm-jp-eval-mm writes it)."""
    if not result_dir.is_dir():
        raise InputError(f"{result_dir}: not a directory")
    runs = [
        path.parent
        for path in sorted(result_dir.glob(f"*/**/{PREDICTIONS}"))
        if len(path.parent.relative_to(result_dir).parts) >= 2
    ]
    if not runs:
        raise InputError(f"{result_dir}: no <task>/<model>/{PREDICTIONS} found")
    return runs


def read_run(folder: Path, result_dir: Path | None = None) -> Run:
    """One run; its task and model from the folder's place under `result_dir` (default: the
    folder's parent and own name)."""
    predictions = read_predictions(folder)
    for prediction in predictions:
        require({"answer": prediction.answer}, "answer", (str, list), prediction.where)
    if not predictions:
        raise InputError(f"{folder / PREDICTIONS}: no items")
    if result_dir is None:
        task, parts = folder.parent.name, [folder.name]
    else:
        task, *parts = folder.relative_to(result_dir).parts
    return Run(task=task, model=model_of(parts), folder=folder, predictions=predictions)


def metrics_of(run: Run, chosen: list[str] | None) -> list[str]:
    if chosen:
        return chosen
    task = TASKS_BY_NAME.get(run.task)
    if task is None:
        raise InputError(f"{run.folder}: unknown task {run.task!r}: name the metrics (--metrics)")
    return list(task.metrics)


def read_docs(path: Path) -> dict[Any, dict[str, Any]]:
    """A task's documents (JSON lines with `question_id` and the dataset's fields), by
    `question_id`."""
    docs: dict[Any, dict[str, Any]] = {}
    for line in iter_json_lines(path):
        key = require(line.value, "question_id", (str, int), line.where)
        if key in docs:
            raise InputError(f'{line.where}: field "question_id": {key!r} appears twice')
        docs[key] = line.value
    return docs


def add_docs(run: Run, docs_path: Path) -> None:
    """Each prediction's document from the task's documents file (its fields over the line's,
    as the original reads `docs`, e.g. the dataset's own `input_text`)."""
    docs = read_docs(docs_path)
    for prediction in run.predictions:
        key = prediction.question_id
        if key not in docs:
            raise InputError(
                f"{prediction.where}: no document with question_id {key!r} in {docs_path}"
            )
        prediction.doc = docs[key]


def scored_item(prediction: Prediction) -> dict[str, Any]:
    """What the scorers see of one item: its line, its document over it, `ref` and `pred`."""
    line = prediction.line()
    return {**line, **prediction.doc, "ref": prediction.answer, "pred": prediction.text}


def check_items(predictions: Sequence[Prediction], metrics: Sequence[str]) -> None:
    """An InputError naming the first item that lacks a field a metric reads (or has it
    wrong)."""
    items = [scored_item(prediction) for prediction in predictions]
    for name in metrics:
        scorer = get_scorer(name)
        for prediction, item in zip(predictions, items, strict=True):
            check_item(scorer, item, prediction.where)


def score_predictions(
    predictions: Sequence[Prediction], metrics: Sequence[str], options: Options
) -> tuple[dict[str, Any], int]:
    """Scores the predictions with each metric (every item checked first): each prediction
    gets the metric's per-item score, and where a judge gave none its reason under
    `judge_errors` (metric → reason). Each metric's aggregate, and how many item scores a
    judge could not give."""
    check_items(predictions, metrics)
    items = [scored_item(prediction) for prediction in predictions]
    refs = [item["ref"] for item in items]
    preds = [item["pred"] for item in items]
    wheres = [prediction.where for prediction in predictions]
    lines = [prediction.scores for prediction in predictions]
    for prediction in predictions:
        earlier = prediction.scores.get("judge_errors")
        if isinstance(earlier, dict):  # those of an earlier scoring of these metrics
            for name in metrics:
                earlier.pop(name, None)
            if not earlier:
                del prediction.scores["judge_errors"]
    evaluation: dict[str, Any] = {}
    unjudged = 0
    for name in metrics:
        scored = score_items(get_scorer(name), refs, preds, items, options, wheres)
        for prediction, score in zip(predictions, scored.scores, strict=True):
            prediction.scores[name] = score
        unjudged += record_judge_failures(name, scored.judge_failures, lines)
        evaluation[name] = scored.aggregate
    return evaluation, unjudged


def scoring_record(options: Options) -> dict[str, Any]:
    """What run_info.json records of a metric's scoring (`outputs.scored_record`)."""
    return {
        "neologdn": options.use_neologdn,
        "fix_quirks": options.fix_quirks,
        "judge_errors": options.judge_errors.value,
        "pfgen_fast_version": __version__,
    }


def score_run(
    run: Run, metrics: list[str], options: Options, docs_path: Path | None = None
) -> tuple[dict[str, Any], int]:
    """Each metric's aggregate, and how many item scores a judge could not give
    (`score_predictions`), with the documents of `docs_path` when given."""
    if docs_path is not None:
        add_docs(run, docs_path)
    return score_predictions(run.predictions, metrics, options)


def write_run(
    run: Run,
    metrics: list[str],
    evaluation: dict[str, Any],
    scoring: dict[str, Any],
    judge: dict[str, Any] | None,
) -> dict[str, Any]:
    """Writes the scored predictions and the evaluation, the other metrics' totals kept, and
    adds the scoring to the run record when there is one (llm-jp-eval-mm's results have
    none); the evaluation written."""
    whole = {**read_evaluation_record(run.folder), **evaluation}
    write_predictions(run.folder, run.predictions)
    write_evaluation(run.folder, whole)
    record = read_run_record(run.folder)
    if record is not None:
        write_json(run.folder / RUN_INFO, scored_record(record, metrics, scoring, judge))
    return whole
