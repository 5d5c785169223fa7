"""What a user sees of an evaluation: the notes on its scores and the table (the files it
leaves behind are written in `lctg.outputs`)."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from pfgen_fast.common.tables import print_table
from pfgen_fast.lctg.aggregate import COLUMNS


def cell(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


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


def print_scores(document: dict[str, Any], console: Console | None = None) -> None:
    title = f"LCTG Bench {document['task']} (judge {document['judge']['model']})"
    row = [document["model"], *(cell(v) for v in document["scores"].values())]
    print_table(title, ["model", *COLUMNS], [row], console=console)
