"""llm-jp-eval-mm's leaderboard: the `evaluation.jsonl` of every `<task>/<model>/` folder of a
result folder, one row per model and one column per task and metric."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from pfgen_fast.common.errors import InputError
from pfgen_fast.evalmm.evaluate import EVALUATION


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


def read_evaluation(folder: Path) -> dict[str, Any]:
    path = folder / EVALUATION
    try:
        value = orjson.loads(path.read_bytes().strip() or b"{}")
    except (OSError, orjson.JSONDecodeError) as error:
        raise InputError(f"{path}: cannot read: {error}") from None
    if not isinstance(value, dict):
        raise InputError(f"{path}: expected a JSON object")
    return value
