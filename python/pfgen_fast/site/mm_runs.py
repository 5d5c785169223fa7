"""llm-jp-eval-mm results as the site shows them: each `<task>/<model>/` folder with a
`prediction.jsonl` (and the `evaluation.jsonl`, `manifest.json` beside it) is a leaderboard row
with a run page. A task's items, their images and every model's answers are one Shared that
all its run pages show: each item once, every model's answer side by side, the opened first."""

from __future__ import annotations

import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.jsonl import iter_json_lines, read_json_object
from pfgen_fast.site.mm_images import TaskImages
from pfgen_fast.site.model import (
    Board,
    Collected,
    Column,
    Page,
    Row,
    RunAnswer,
    Shared,
    SharedItem,
)

LOOKED_FOR = "<task>/<model>/prediction.jsonl files (llm-jp-eval-mm results)"
# Fields of a prediction that are not scores.
TEXT_FIELDS = {"question_id", "text", "answer", "input_text", "category"}


def number(value: Any) -> float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def item_score(value: Any) -> Any:
    """A metric's per-item score: a number, or the numbers of a dict (heron-bench's)."""
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if number(v) is not None}
    return number(value)


def read_folder(folder: Path) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """The predictions, the evaluation's metrics and the run's settings of one result folder
    (its manifest.json, with the run_info.json pfgen_fast writes beside it)."""
    predictions = [line.value for line in iter_json_lines(folder / "prediction.jsonl")]
    evaluation: dict[str, Any] = {}
    path = folder / "evaluation.jsonl"
    if path.is_file():
        lines = list(iter_json_lines(path))
        if lines:
            evaluation = lines[0].value
    manifest: dict[str, Any] = {}
    for name in ("manifest.json", "run_info.json"):
        if (folder / name).is_file():
            manifest.update(read_json_object(folder / name))
    return predictions, evaluation, manifest


def collect_mm(roots: list[Path], data: dict[str, Path], out: Path, collected: Collected) -> None:
    columns: list[Column] = [Column("model", numeric=False), Column("task", numeric=False)]
    board = Board("mm", "Leaderboard", columns)
    # task -> its rows with their predictions, for the task's shared items
    tasks: dict[str, list[tuple[Row, list[dict[str, Any]]]]] = {}
    for root in roots:
        folders = sorted(p.parent for p in root.rglob("prediction.jsonl"))
        if not folders:
            collected.warnings.append(f"{root}: nothing recognised; looked for {LOOKED_FOR}")
            continue
        for folder in folders:
            try:
                predictions, evaluation, manifest = read_folder(folder)
            except PfgenError as error:
                collected.warnings.append(f"{error}; run left out")
                continue
            run = folder.relative_to(root).as_posix()
            task = str(manifest.get("task_id") or folder.parent.name)
            model = str(manifest.get("model_id") or folder.name)
            cells: dict[str, Any] = {"model": model, "task": task}
            for metric, result in evaluation.items():
                if isinstance(result, dict) and number(result.get("overall_score")) is not None:
                    cells[metric] = result["overall_score"]
                    if all(c.name != metric for c in columns):
                        columns.append(Column(metric, spread="±"))
            settings = {k: v for k, v in manifest.items() if k != "result_dir"}
            settings.setdefault("model_id", model)
            settings.setdefault("task_id", task)
            row = Row(run=run, cells=cells, settings=settings)
            board.rows.append(row)
            tasks.setdefault(task, []).append((row, predictions))
    for slot, (task, runs) in enumerate(tasks.items()):
        images = TaskImages(task, data[task], out, slot) if task in data else None
        predictions_of_runs = [predictions for _, predictions in runs]
        try:
            items = shared_items(predictions_of_runs, images)
        except PfgenError as error:
            collected.warnings.append(f"{error}; images left out")
            items = shared_items(predictions_of_runs, None)
        shared = Shared(f"mm-task-{slot}", run_labels([row for row, _ in runs]), items)
        collected.shared.append(shared)
        for opened, (row, _) in enumerate(runs):
            page_id = f"mm-{len(collected.pages)}"
            row.page = page_id
            title = f"llm-jp-eval-mm {task}: {row.cells['model']} ({row.run})"
            page = Page(page_id, "mm", title, row.settings, [], shared=shared.id, opened=opened)
            collected.pages.append(page)
    add_spreads(board)
    for task in data:
        if task not in tasks:
            collected.warnings.append(f"--mm-data {task}=...: no results of task {task}")
    if board.rows:
        collected.boards.append(board)


def add_spreads(board: Board) -> None:
    """Where one model was scored on one task several times (several result folders, each a run
    of the judge), each of those rows shows the standard deviation of each score over them."""
    groups: dict[tuple[Any, Any], list[Row]] = {}
    for row in board.rows:
        groups.setdefault((row.cells["task"], row.cells["model"]), []).append(row)
    for rows in groups.values():
        if len(rows) < 2:
            continue
        for column in board.columns:
            cells = [r.cells.get(column.name) for r in rows]
            values = [x for x in map(number, cells) if x is not None]
            if column.spread and len(values) >= 2:
                spread = statistics.stdev(values)
                for row in rows:
                    row.spreads[column.name] = spread


def run_labels(rows: list[Row]) -> list[str]:
    """Each run's label: its model, with its folder where the task has several runs of it."""
    models = Counter(row.cells["model"] for row in rows)
    labels = []
    for row in rows:
        model = row.cells["model"]
        labels.append(model if models[model] == 1 else f"{model} ({row.run})")
    return labels


def shared_items(runs: list[list[dict[str, Any]]], images: TaskImages | None) -> list[SharedItem]:
    """The task's items, each once, in the order the runs first give them (question, reference
    and category from the first run that has the item), with run n's answer at n."""
    items: dict[str, SharedItem] = {}
    for n, predictions in enumerate(runs):
        for prediction in predictions:
            qid = str(prediction.get("question_id"))
            item = items.get(qid)
            if item is None:
                fields = [("question", str(prediction.get("input_text", "")))]
                if prediction.get("answer") is not None:
                    fields.append(("reference", str(prediction["answer"])))
                item = SharedItem(
                    id=qid,
                    category=str(prediction.get("category", "")),
                    fields=fields,
                    answers=[None] * len(runs),
                    images=images.images(qid) if images is not None else [],
                )
                items[qid] = item
            scores = {k: item_score(v) for k, v in prediction.items() if k not in TEXT_FIELDS}
            numbers = [v for v in scores.values() if isinstance(v, (int, float))]
            text = str(prediction.get("text", ""))
            item.answers[n] = RunAnswer(text, scores, numbers[0] if numbers else None)
    return list(items.values())
