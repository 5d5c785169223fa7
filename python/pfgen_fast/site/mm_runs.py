"""llm-jp-eval-mm results as the site shows them: each `<task>/<model>/` result folder (read by
the evalmm room's `outputs`) is a leaderboard row with a run page. A task's items, their images
and every model's answers are one Shared that all its run pages show: each item once, every
model's answer side by side, the opened first."""

from __future__ import annotations

import json
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.evalmm.outputs import PREDICTIONS, ResultFolder, read_result_folder, result_folders
from pfgen_fast.site.mm_images import TaskImages, task_images
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

LOOKED_FOR = f"<task>/<model>/{PREDICTIONS} files (llm-jp-eval-mm results)"


def number(value: Any) -> float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def item_score(value: Any) -> Any:
    """A metric's per-item score: a number, or the numbers of a dict (heron-bench's)."""
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if number(v) is not None}
    return number(value)


def collect_mm(roots: list[Path], data: dict[str, Path], out: Path, collected: Collected) -> None:
    columns: list[Column] = [Column("model", numeric=False), Column("task", numeric=False)]
    board = Board("mm", "Leaderboard", columns)
    # task -> its rows with their result folders, for the task's shared items
    tasks: dict[str, list[tuple[Row, ResultFolder]]] = {}
    for root in roots:
        for folder in collected.recognised(root, result_folders(root), LOOKED_FOR):
            try:
                result = read_result_folder(folder, root)
            except PfgenError as error:
                collected.run_left_out(error)
                continue
            row = result_row(result, folder.relative_to(root).as_posix())
            for metric in result.overall_scores():
                board.add_column(Column(metric, spread="±"))
            board.rows.append(row)
            tasks.setdefault(result.task, []).append((row, result))
    for slot, (task, runs) in enumerate(tasks.items()):
        add_task(
            f"mm-task-{slot}",
            task,
            runs,
            task_images(task, [r for _, r in runs], data.get(task), out),
            collected,
        )
    add_spreads(board)
    for task in data:
        if task not in tasks:
            collected.warnings.append(f"--mm-data {task}=...: no results of task {task}")
    if board.rows:
        collected.boards.append(board)


def result_row(result: ResultFolder, run: str) -> Row:
    cells: dict[str, Any] = {"model": result.model, "task": result.task}
    cells.update(result.overall_scores())
    return Row(run=run, cells=cells, settings=run_settings(result))


# The run record's settings shown one per key: the generation's as they are, the judge's with
# "judge " before each.
SETTING_GROUPS = {"generation": "", "judge": "judge "}


def run_settings(result: ResultFolder) -> dict[str, Any]:
    """What a run's row and page show of its settings: the manifest's fields (not its
    result_dir), then the run record's, its generation settings (`strip_reasoning`,
    `extra_body` ...) and the judge's (model, max_tokens by metric) one per key."""
    settings = {k: v for k, v in result.manifest.items() if k != "result_dir"}
    settings.setdefault("model_id", result.model)
    settings.setdefault("task_id", result.task)
    for key, value in result.run_info.items():
        if key in SETTING_GROUPS and isinstance(value, dict):
            for name, setting in value.items():
                settings[SETTING_GROUPS[key] + name] = setting_text(setting)
        else:
            settings[key] = value
    return settings


def setting_text(value: Any) -> Any:
    """A setting as shown: an object or list as JSON ("none" when empty), else itself."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False) if value else "none"
    return value


def add_task(
    shared_id: str,
    task: str,
    runs: list[tuple[Row, ResultFolder]],
    images: TaskImages,
    collected: Collected,
) -> None:
    """The task's shared items and a run page for each of its runs."""
    if images.warned and images.problem is not None:
        collected.notices.append(images.problem)
    items = shared_items([result for _, result in runs], images.paths)
    shared = Shared(shared_id, run_labels([row for row, _ in runs]), items)
    collected.shared.append(shared)
    notes = [] if images.problem is None else [images.problem]
    for opened, (row, _) in enumerate(runs):
        page_id = f"mm-{len(collected.pages)}"
        row.page = page_id
        title = f"llm-jp-eval-mm {task}: {row.cells['model']} ({row.run})"
        page = Page(page_id, "mm", title, row.settings, [], shared_id, opened, notes)
        collected.pages.append(page)


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


def shared_items(runs: list[ResultFolder], images: dict[str, list[str]]) -> list[SharedItem]:
    """The task's items, each once, in the order the runs first give them (question and
    reference from the first run that has the item), with run n's answer at n."""
    items: dict[str, SharedItem] = {}
    for n, result in enumerate(runs):
        for prediction in result.predictions:
            qid = str(prediction.question_id)
            item = items.get(qid)
            if item is None:
                fields = [("question", prediction.input_text)]
                if prediction.answer is not None:
                    fields.append(("reference", str(prediction.answer)))
                item = SharedItem(
                    id=qid,
                    category="",
                    fields=fields,
                    answers=[None] * len(runs),
                    images=images.get(qid, []),
                )
                items[qid] = item
            scores = {k: item_score(v) for k, v in prediction.scores.items()}
            numbers = [v for v in scores.values() if isinstance(v, (int, float))]
            item.answers[n] = RunAnswer(
                prediction.text, scores, numbers[0] if numbers else None, prediction.reasoning
            )
    return list(items.values())
