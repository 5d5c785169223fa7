"""What an evaluation leaves behind: the per-item analysis (JSON lines), the score row as JSON
and CSV, and the table a user sees. File names carry the task, so several tasks' results can
share a folder."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console

from pfgen_fast.common.files import write_atomically
from pfgen_fast.common.jsonl import dumps_line
from pfgen_fast.common.tables import print_table, write_table
from pfgen_fast.lctg.aggregate import COLUMNS, ConstraintScores, score_row, shown_row
from pfgen_fast.lctg.evaluate import Item
from pfgen_fast.lctg.outputs import analysis_name, replies_name, scores_csv_name, scores_json_name


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


def cell(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


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


def notes(document: dict[str, Any]) -> list[str]:
    """What a reader of the scores should know: prompts without generations, iterations
    without a checked generation or a parseable judge reply."""
    found = []
    scored, total = document["prompts_scored"], document["prompts_in_task"]
    if scored < total:
        found.append(
            f"{scored} of the {total} {document['task']} prompts have generations; the "
            "benchmark scores the joined rows only"
        )
    for constraint, detail in document["details"].items():
        for iteration, rate in enumerate(detail["ctg_iterations"]):
            if rate is None:
                found.append(
                    f"{constraint}, iteration {iteration}: every generation failed at the "
                    "remover, so its CTG rate is n/a"
                )
        for iteration, rate in enumerate(detail["quality_iterations"]):
            if rate is None:
                found.append(
                    f"{constraint}, iteration {iteration}: no judge reply could be parsed, so "
                    "its quality is n/a (the benchmark's script stops there)"
                )
    return found


def write_outputs(paths: OutputPaths, items: list[Item], document: dict[str, Any]) -> None:
    write_atomically(paths.analysis, b"".join(dumps_line(item.record()) for item in items))
    write_atomically(paths.scores_json, orjson.dumps(document, option=orjson.OPT_INDENT_2))
    scores = document["scores"]
    write_table(paths.scores_csv, ["model", *COLUMNS], [[document["model"], *scores.values()]])


def print_scores(document: dict[str, Any], console: Console | None = None) -> None:
    title = f"LCTG Bench {document['task']} (judge {document['judge']['model']})"
    row = [document["model"], *(cell(v) for v in document["scores"].values())]
    print_table(title, ["model", *COLUMNS], [row], console=console)
