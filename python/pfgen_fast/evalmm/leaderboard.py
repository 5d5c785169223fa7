"""llm-jp-eval-mm's leaderboard: the `evaluation.jsonl` of every `<task>/<model>/` folder of a
result folder, one row per model and one column per task and metric: the plain scores, or
make_leaderboard.py's table (display names, percentages, cluster deviation scores, the best
bold and the second underlined) as Markdown, LaTeX, CSV or its leaderboard JSON."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import InputError
from pfgen_fast.evalmm.outputs import EVALUATION, is_number, model_of, read_evaluation


def leaderboard_rows(
    results: dict[tuple[str, str], dict[str, Any]],
) -> tuple[list[str], list[list[Any]]]:
    """One row per model, one column per task and metric (overall scores)."""
    columns = sorted({(task, metric) for (task, _), ev in results.items() for metric in ev})
    models = sorted({model for _, model in results})
    rows = []
    for model in models:
        row: list[Any] = [model]
        for task, metric in columns:
            aggregate = results.get((task, model), {}).get(metric)
            row.append(None if aggregate is None else aggregate["overall_score"])
        rows.append(row)
    return ["model"] + [f"{task}/{metric}" for task, metric in columns], rows


# Metric display names (llm-jp-eval-mm's metadata.METRICS).
METRIC_NAMES = {
    "heron-bench": "LLM",
    "llm-as-a-judge": "LLM",
    "rougel": "Rouge",
    "exact-match": "EM",
    "substring-match": "Acc",
    "jdocqa": "Acc",
    "jmmmu": "Acc",
    "jic-vqa": "Acc",
    "mecha-ja": "Acc",
    "mmmu": "Acc",
    "cc-ocr": "macro_f1",
    "ai2d": "Acc",
    "blink": "Acc",
    "mathvista": "Acc",
    "jawildtext-board-vqa": "LLM",
    "jawildtext-handwriting-ocr": "CER",
    "jawildtext-receipt-kie": "F1",
}
# Metrics whose scores are fractions, shown ×100 (make_leaderboard.py's list).
PERCENT_METRICS = frozenset(
    {
        "jdocqa",
        "jmmmu",
        "jic-vqa",
        "mecha-ja",
        "mmmu",
        "cc-ocr",
        "substring-match",
        "ai2d",
        "blink",
        "mathvista",
    }
)
ENGLISH = "英語"
FORMATS = ("markdown", "latex", "csv", "json")
# The figure formats `--plot` writes, by the file's suffix.
PLOT_FORMATS = ("png", "svg", "pdf")


@dataclass(frozen=True, kw_only=True)
class Column:
    task: str
    metric: str
    display: str  # "<task display name>/<metric display name>"
    cluster: str
    english: bool


@dataclass
class Board:
    """make_leaderboard.py's table: one row per model, one column per task and metric (display
    names, percentages ×100, rounded to 2 places), the cluster deviation scores first."""

    models: list[str]
    columns: list[str]
    values: list[list[float | None]]  # [model][column]
    score_columns: list[Column]


def find_evaluations(
    result_dir: Path,
) -> tuple[dict[tuple[str, str], dict[str, Any]], list[str]]:
    """Every `<task>/<model>/evaluation.jsonl` (a model name with '/' is a deeper folder, as
    the original writes it), by (task, model), and the problems of those that cannot be read:
    such a run has no scores (its cells n/a), the others are shown."""
    if not result_dir.is_dir():
        raise InputError(f"{result_dir}: not a directory")
    results: dict[tuple[str, str], dict[str, Any]] = {}
    problems = []
    for path in sorted(result_dir.glob(f"*/**/{EVALUATION}")):
        parts = path.parent.relative_to(result_dir).parts
        if len(parts) < 2 or any(part.startswith(".") for part in parts):
            continue
        key = (parts[0], model_of(parts[1:]))
        try:
            results[key] = read_evaluation(path.parent)
        except InputError as error:
            problems.append(str(error))
            results[key] = {}
    if not results:
        raise InputError(f"{result_dir}: no <task>/<model>/{EVALUATION} found")
    if len(problems) == len(results):
        raise InputError(f"{result_dir}: no readable {EVALUATION} ({problems[0]})")
    return results, problems


def task_order() -> dict[str, tuple[int, str, str]]:
    """Each known task's place, display name and cluster."""
    from pfgen_fast.evalmm.tasks import task_info, task_names

    order = {}
    for place, name in enumerate(task_names()):
        info = task_info(name)
        order[name] = (place, info.display_name, info.cluster)
    return order


def make_board(results: dict[tuple[str, str], dict[str, Any]]) -> Board:
    known = task_order()
    pairs = {(task, metric) for (task, _), evaluation in results.items() for metric in evaluation}
    pairs = {(task, metric) for task, metric in pairs if metric in METRIC_NAMES}

    def place(pair: tuple[str, str]) -> tuple[int, str, str]:
        return (known[pair[0]][0] if pair[0] in known else len(known), pair[0], pair[1])

    columns = []
    for task, metric in sorted(pairs, key=place):
        _, display, cluster = known.get(task, (0, task, ""))
        name = f"{display}/{METRIC_NAMES[metric]}"
        columns.append(
            Column(
                task=task, metric=metric, display=name, cluster=cluster, english=cluster == ENGLISH
            )
        )
    models = sorted({model for _, model in results})
    values: list[list[float | None]] = []
    for model in models:
        row: list[float | None] = []
        for column in columns:
            aggregate = results.get((column.task, model), {}).get(column.metric)
            score = None if aggregate is None else aggregate.get("overall_score")
            if is_number(score):
                scale = 100 if column.metric in PERCENT_METRICS else 1
                row.append(round(score * scale, 2))
            else:
                row.append(None)
        values.append(row)
    board = Board(models, [column.display for column in columns], values, columns)
    add_cluster_scores(board)
    return board


def add_cluster_scores(board: Board) -> None:
    """make_leaderboard.py's deviation scores (偏差値): each column but ROUGE-L standardised over
    the models (sample standard deviation), averaged per cluster, ×10 + 50; the overall one
    from the mean of the cluster averages. Needs two models or more; a model's missing score
    is left out of its means."""
    if len(board.models) < 2:
        return
    clusters: dict[str, list[int]] = {}
    for index, column in enumerate(board.score_columns):
        if column.cluster and column.metric != "rougel":
            clusters.setdefault(column.cluster, []).append(index)
    standard: dict[int, list[float | None]] = {}
    for indexes in clusters.values():
        for index in indexes:
            standard[index] = standardised([row[index] for row in board.values])
    names, scores = ["総合偏差値"], []
    names += [f"{cluster}偏差値" for cluster in clusters]
    for number in range(len(board.models)):
        cluster_means = [
            mean_of([standard[index][number] for index in indexes]) for indexes in clusters.values()
        ]
        overall = mean_of(cluster_means)
        scores.append([deviation(z) for z in [overall, *cluster_means]])
    board.columns = names + board.columns
    board.values = [extra + row for extra, row in zip(scores, board.values, strict=True)]


def standardised(values: list[float | None]) -> list[float | None]:
    present = [value for value in values if value is not None]
    if len(present) < 2:
        return [None] * len(values)
    average = sum(present) / len(present)
    spread = (sum((value - average) ** 2 for value in present) / (len(present) - 1)) ** 0.5
    if spread == 0:
        return [None] * len(values)
    return [None if value is None else (value - average) / spread for value in values]


def mean_of(values: list[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return sum(present) / len(present) if present else None


def deviation(z: float | None) -> float | None:
    return None if z is None else round(z * 10 + 50, 1)


def marked_cells(board: Board, style: str) -> list[list[str]]:
    """The values with one decimal, the best of each column bold and the second underlined
    (markdown `**x**` and `<u>x</u>`, LaTeX `\\textbf{x}` and `\\underline{x}`), as
    make_leaderboard.py marks them (the highest is the best, whatever the metric)."""
    if style == "markdown":
        bold, under = "**{}**", "<u>{}</u>"
    else:
        bold, under = "\\textbf{{{}}}", "\\underline{{{}}}"
    cells = [["" if value is None else f"{value:.1f}" for value in row] for row in board.values]
    for index in range(len(board.columns)):
        ranked = sorted(
            (-value, number)
            for number, row in enumerate(board.values)
            if (value := row[index]) is not None
        )
        for (negated, number), mark in zip(ranked[:2], (bold, under), strict=False):
            cells[number][index] = mark.format(f"{-negated:.1f}")
    return cells


def format_board(board: Board, output_format: str) -> str:
    if output_format == "markdown":
        return markdown_table(board)
    if output_format == "latex":
        return latex_table(board)
    if output_format == "csv":
        return csv_table(board)
    return json_table(board)


def markdown_table(board: Board) -> str:
    cells = marked_cells(board, "markdown")
    lines = ["| Model | " + " | ".join(board.columns) + " |"]
    lines.append("|:--|" + "--:|" * len(board.columns))
    for model, row in zip(board.models, cells, strict=True):
        lines.append(f"| {model} | " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


# LaTeX's special characters in a model's or a column's name, the backslash first.
LATEX_ESCAPES = (
    ("\\", "\\textbackslash{}"),
    ("_", "\\_"),
    ("&", "\\&"),
    ("%", "\\%"),
    ("#", "\\#"),
    ("$", "\\$"),
)


def latex_escape(text: str) -> str:
    for plain, escaped in LATEX_ESCAPES:
        text = text.replace(plain, escaped)
    return text


def latex_table(board: Board) -> str:
    cells = marked_cells(board, "latex")
    lines = ["\\begin{tabular}{l" + "c" * len(board.columns) + "}", "\\toprule"]
    lines.append(" & ".join(["Model", *map(latex_escape, board.columns)]) + " \\\\")
    lines.append("\\midrule")
    for model, row in zip(board.models, cells, strict=True):
        lines.append(" & ".join([latex_escape(model), *row]) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def csv_table(board: Board) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["Model", *board.columns])
    for model, row in zip(board.models, board.values, strict=True):
        writer.writerow([model, *("" if value is None else value for value in row)])
    return buffer.getvalue()


def json_table(board: Board) -> str:
    """make_leaderboard.py's leaderboard.json: per model its name, its Hub page and its scores
    by task display name and metric display name (a deviation score under its own name)."""
    entries = []
    for model, row in zip(board.models, board.values, strict=True):
        scores: dict[str, Any] = {}
        for column, value in zip(board.columns, row, strict=True):
            if value is None:
                continue
            task, separator, metric = column.partition("/")
            if separator:
                scores.setdefault(task, {})[metric] = value
            else:
                scores[column] = value
        if scores:
            entries.append(
                {"model": model, "url": f"https://huggingface.co/{model}", "scores": scores}
            )
    return json.dumps(entries, ensure_ascii=False, indent=2) + "\n"
