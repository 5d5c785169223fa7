"""`mm evaluate`: re-scores the result directory llm-jp-eval-mm's `evaluate` leaves
(`<task>/<model>/prediction.jsonl` with `text`, `answer`, `input_text`), writing its
`evaluation.jsonl` (one line, metric → aggregate) and the per-item scores into
`prediction.jsonl` as it does, then a leaderboard over models and tasks."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import InputError
from pfgen_fast.common.files import write_atomically
from pfgen_fast.common.jsonl import dumps_line, iter_json_lines, require
from pfgen_fast.evalmm.metrics.judges import record_judge_failures
from pfgen_fast.evalmm.metrics.scorers import Options, get_scorer
from pfgen_fast.evalmm.metrics.scoring import check_item, score_items
from pfgen_fast.evalmm.outputs import EVALUATION, PREDICTIONS, model_of
from pfgen_fast.evalmm.tasks import METRICS

JUDGE_LOG = "judge_replies.jsonl"


@dataclass(kw_only=True)
class Run:
    """One model's predictions on one task."""

    task: str
    model: str
    folder: Path
    lines: list[dict[str, Any]]
    wheres: list[str]


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
    lines, wheres = [], []
    for line in iter_json_lines(folder / PREDICTIONS):
        require(line.value, "text", str, line.where)
        require(line.value, "answer", (str, list), line.where)
        lines.append(line.value)
        wheres.append(line.where)
    if not lines:
        raise InputError(f"{folder / PREDICTIONS}: no items")
    if result_dir is None:
        task, parts = folder.parent.name, [folder.name]
    else:
        task, *parts = folder.relative_to(result_dir).parts
    return Run(task=task, model=model_of(parts), folder=folder, lines=lines, wheres=wheres)


def metrics_of(run: Run, chosen: list[str] | None) -> list[str]:
    if chosen:
        return chosen
    metrics = METRICS.get(run.task)
    if metrics is None:
        raise InputError(f"{run.folder}: unknown task {run.task!r}: name the metrics (--metrics)")
    return list(metrics)


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


def items_of(
    run: Run, docs: dict[Any, dict[str, Any]] | None, docs_path: Path | None
) -> list[dict[str, Any]]:
    """What the scorers see per item: the prediction line, its document's fields over it (as
    the original reads `docs`, e.g. the dataset's own `input_text`), `ref` and `pred`."""
    items = []
    for line, where in zip(run.lines, run.wheres, strict=True):
        item = dict(line)
        if docs is not None:
            key = require(line, "question_id", (str, int), where)
            if key not in docs:
                raise InputError(f"{where}: no document with question_id {key!r} in {docs_path}")
            item.update(docs[key])
        item["ref"], item["pred"] = line["answer"], line["text"]
        items.append(item)
    return items


def score_run(
    run: Run, metrics: list[str], options: Options, docs_path: Path | None = None
) -> tuple[dict[str, Any], int]:
    """Each metric's aggregate, and how many item scores a judge could not give; the items get
    their per-item scores (and `judge_errors`, metric → reason, where a judge gave none). A
    metric whose fields the items lack raises InputError naming the first such item and
    field."""
    docs = read_docs(docs_path) if docs_path is not None else None
    items = items_of(run, docs, docs_path)
    evaluation: dict[str, Any] = {}
    unjudged = 0
    for line in run.lines:
        line.pop("judge_errors", None)  # those of an earlier scoring
    for name in metrics:
        scorer = get_scorer(name)
        for item, where in zip(items, run.wheres, strict=True):
            check_item(scorer, item, where)
        refs = [item["ref"] for item in items]
        preds = [item["pred"] for item in items]
        scores, aggregate = score_items(scorer, refs, preds, items, options, run.wheres)
        for line, score in zip(run.lines, scores, strict=True):
            line[name] = score
        unjudged += record_judge_failures(options, name, run.lines)
        evaluation[name] = aggregate
    return evaluation, unjudged


def write_run(run: Run, evaluation: dict[str, Any]) -> None:
    write_atomically(run.folder / PREDICTIONS, b"".join(dumps_line(line) for line in run.lines))
    write_atomically(run.folder / EVALUATION, dumps_line(evaluation))
