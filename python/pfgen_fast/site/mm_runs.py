"""llm-jp-eval-mm results as the site shows them: each `<task>/<model>/` result folder (read by
the evalmm room's `outputs`) is a leaderboard row with a run page. The runs of a task made on
one copy of its dataset share their items, images and every model's answers (one Shared that
all their run pages show: each item once, every model's answer side by side, the opened first);
an item is a question id with the question the run recorded, so runs that were asked different
questions under one id never share it."""

from __future__ import annotations

import json
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.evalmm.outputs import (
    PREDICTIONS,
    ResultFolder,
    read_failures,
    read_result_folder,
    result_folders,
)
from pfgen_fast.site.mm_images import IMAGES, TaskData, task_data
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
    failures: dict[Path, dict[str, str]] = {}  # result folder -> failed item -> why
    for root in roots:
        for folder in collected.recognised(root, result_folders(root), LOOKED_FOR):
            try:
                result = read_result_folder(folder, root)
                failures[folder] = read_failures(folder)
            except PfgenError as error:
                collected.run_left_out(error)
                continue
            row = result_row(result, folder.relative_to(root).as_posix())
            for metric in result.overall_scores():
                board.add_column(Column(metric, spread="±"))
            board.rows.append(row)
            tasks.setdefault(result.task, []).append((row, result))
    for task, runs in tasks.items():
        results = [result for _, result in runs]
        data_of_task = task_data(task, results, data.get(task), out)
        add_task(task, runs, data_of_task, failures, collected)
    remove_unshown_images(out, collected.shared)
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
    task: str,
    runs: list[tuple[Row, ResultFolder]],
    data: TaskData,
    failures: dict[Path, dict[str, str]],
    collected: Collected,
) -> None:
    """A Shared for each group of the task's runs (those of one dataset copy) and a run page
    for each run."""
    collected.notices.extend(data.warnings)
    for group in data.groups:
        rows = [runs[n][0] for n in group.runs]
        results = [runs[n][1] for n in group.runs]
        items = shared_items(results, group.paths, [failures[r.folder] for r in results])
        shared = Shared(f"mm-task-{len(collected.shared)}", run_labels(rows), items)
        collected.shared.append(shared)
        for opened, n in enumerate(group.runs):
            row = rows[opened]
            page_id = f"mm-{len(collected.pages)}"
            row.page = page_id
            title = f"llm-jp-eval-mm {task}: {row.cells['model']} ({row.run})"
            notes = group.notes + ([data.run_notes[n]] if n in data.run_notes else [])
            page = Page(page_id, "mm", title, row.settings, [], shared.id, opened, notes)
            collected.pages.append(page)


def remove_unshown_images(out: Path, shared: list[Shared]) -> None:
    """Removes the images written for runs that then proved to be of another dataset copy."""
    shown = {path for s in shared for item in s.items for path in item.images}
    folder = out / IMAGES
    if folder.is_dir():
        for path in folder.iterdir():
            if f"{IMAGES}/{path.name}" not in shown:
                path.unlink()


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


def shared_items(
    runs: list[ResultFolder], images: dict[str, list[str]], failures: list[dict[str, str]]
) -> list[SharedItem]:
    """The items of the runs, each once, in the order the runs first give them (an item: a
    question id with the question the run recorded; reference from the first run
    that has it), with run n's answer at n (and why run n failed it, from failures[n])."""
    items: dict[tuple[str, str], SharedItem] = {}
    for n, result in enumerate(runs):
        for prediction in result.predictions:
            qid = str(prediction.question_id)
            item = items.get((qid, prediction.input_text))
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
                items[(qid, prediction.input_text)] = item
            scores = {k: item_score(v) for k, v in prediction.scores.items()}
            numbers = [(k, v) for k, v in scores.items() if isinstance(v, (int, float))]
            name, score = numbers[0] if numbers else ("score", None)
            item.answers[n] = RunAnswer(
                prediction.text,
                scores,
                score,
                name,
                prediction.reasoning,
                failures[n].get(qid),
            )
    return list(items.values())
