"""llm-jp-eval-mm results as the site shows them: each `<task>/<model>/` folder with a
`prediction.jsonl` (and the `evaluation.jsonl`, `manifest.json` beside it) is a leaderboard row.
A task's page shows each item once, its images and every model's answer side by side."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.jsonl import iter_json_lines, read_json_object
from pfgen_fast.site.mm_images import TaskImages
from pfgen_fast.site.model import Answer, Board, Collected, Column, Item, Page, Row

LOOKED_FOR = "<task>/<model>/prediction.jsonl files (llm-jp-eval-mm results)"
# Fields of a prediction that are not scores.
TEXT_FIELDS = {"question_id", "text", "answer", "input_text"}


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
    # task -> run -> (model, predictions), for the side-by-side pages
    tasks: dict[str, dict[str, tuple[str, list[dict[str, Any]]]]] = {}
    rows_of_task: dict[str, list[Row]] = {}
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
            rows_of_task.setdefault(task, []).append(row)
            tasks.setdefault(task, {})[run] = (model, predictions)
    for slot, (task, runs) in enumerate(tasks.items()):
        images = TaskImages(task, data[task], out, slot) if task in data else None
        for row in rows_of_task[task]:
            page_id = f"mm-{len(collected.pages)}"
            row.page = page_id
            order = [row.run, *(r for r in runs if r != row.run)]
            try:
                items = task_items(runs, order, images)
            except PfgenError as error:
                collected.warnings.append(f"{error}; images left out")
                items = task_items(runs, order, None)
                images = None
            title = f"llm-jp-eval-mm {task}: {row.cells['model']} ({row.run})"
            collected.pages.append(Page(page_id, "mm", title, row.settings, items))
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


def task_items(
    runs: dict[str, tuple[str, list[dict[str, Any]]]],
    order: list[str],
    images: TaskImages | None,
) -> list[Item]:
    """The task's items in the first run's order, every run's answer side by side (labelled
    with its model, and its folder where a model has several runs)."""
    by_id = {
        run: {str(p.get("question_id")): p for p in predictions}
        for run, (_, predictions) in runs.items()
    }
    models = [model for model, _ in runs.values()]
    items = []
    for prediction in runs[order[0]][1]:
        qid = str(prediction.get("question_id"))
        answers = []
        for run in order:
            other = by_id[run].get(qid)
            if other is None:
                continue
            model = runs[run][0]
            label = model if models.count(model) == 1 else f"{model} ({run})"
            scores = {k: item_score(v) for k, v in other.items() if k not in TEXT_FIELDS}
            answers.append(Answer(label=label, text=str(other.get("text", "")), scores=scores))
        first = answers[0].scores if answers else {}
        numbers = [v for v in first.values() if isinstance(v, (int, float))]
        fields = [("question", str(prediction.get("input_text", "")))]
        if prediction.get("answer") is not None:
            fields.append(("reference", str(prediction["answer"])))
        items.append(
            Item(
                id=qid,
                category=str(prediction.get("category", "")),
                score=numbers[0] if numbers else None,
                fields=fields,
                answers=answers,
                images=images.images(qid) if images is not None else [],
            )
        )
    return items
