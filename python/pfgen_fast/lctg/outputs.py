"""What the LCTG Bench room writes, and how it is read back (by its own leaderboard and by
other rooms): `lctg eval --out DIR` writes, per task, `lctg-TASK-scores.json` (the scores row,
the judge, the prompts scored and the details), `lctg-TASK-scores.csv`,
`lctg-TASK-analysis.jsonl` (one generation a line: its texts, its constraint's check and the
quality judge's replies) and `lctg-TASK-replies.jsonl` (every raw reply)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import InputError
from pfgen_fast.common.jsonl import iter_json_lines, read_json_object, wrong_type
from pfgen_fast.lctg.aggregate import COLUMNS
from pfgen_fast.lctg.data import TASKS, load_prompts, resolve_data_dir
from pfgen_fast.lctg.data import PromptRow as PromptRow  # what task_prompts gives

SCORES_FILE = re.compile(r"lctg-(?P<task>[a-z_]+)-scores\.json")


def scores_json_name(task: str) -> str:
    return f"lctg-{task}-scores.json"


def scores_csv_name(task: str) -> str:
    return f"lctg-{task}-scores.csv"


def analysis_name(task: str) -> str:
    return f"lctg-{task}-analysis.jsonl"


def replies_name(task: str) -> str:
    return f"lctg-{task}-replies.jsonl"


@dataclass(frozen=True)
class Entry:
    """One evaluation's scores file, checked as the leaderboard reads it; `document`: the
    whole file (judge, prompts scored, details)."""

    path: Path
    task: str
    model: str
    scores: dict[str, float | None]
    document: dict[str, Any]

    @property
    def analysis_path(self) -> Path:
        return self.path.with_name(analysis_name(self.task))


def scores_files(root: Path) -> list[Path]:
    """Every `lctg-TASK-scores.json` below `root`."""
    return sorted(p for p in root.rglob("lctg-*-scores.json") if SCORES_FILE.fullmatch(p.name))


def read_entry(path: Path) -> Entry:
    """One evaluation's scores; an InputError naming the file and field otherwise."""
    document = read_json_object(path, what="a JSON object (an lctg eval scores file)")
    task, model, scores = document.get("task"), document.get("model"), document.get("scores")
    if task not in TASKS:
        raise InputError(f'{path}: field "task": expected one of {", ".join(TASKS)}')
    if not isinstance(model, str):
        raise InputError(f'{path}: field "model": expected a string')
    if not isinstance(scores, dict) or any(name not in scores for name in COLUMNS):
        raise InputError(f'{path}: field "scores": expected the columns {", ".join(COLUMNS)}')
    for name in COLUMNS:
        value = scores[name]
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise InputError(f"{path}: {wrong_type(f'scores.{name}', 'a number', value)}")
    return Entry(path, task, model, {name: scores[name] for name in COLUMNS}, document)


def read_analysis(path: Path) -> Iterator[dict[str, Any]]:
    """The generations of an analysis file, in file order (each a JSON object)."""
    for line in iter_json_lines(path):
        yield line.value


def task_prompts(task: str, data_dir: Path | None) -> dict[int, PromptRow]:
    """The task's prompts by id, from LCTG Bench's files where `lctg eval` finds them
    (`data_dir`, else the default place); a DataError says why they cannot be had."""
    return load_prompts(resolve_data_dir(data_dir), task)
