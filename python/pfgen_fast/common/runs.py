"""A pfgen-bench run directory as the rooms read it: its trials file (`trials.jsonl.xz`, else
`trials.jsonl`), the `config.json` generate wrote beside it and the `result.json` eval writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import InputError
from pfgen_fast.common.jsonl import read_json

TRIALS_NAMES = ("trials.jsonl.xz", "trials.jsonl")
CONFIG_NAME = "config.json"
RESULT_NAME = "result.json"


def trials_file(run_dir: Path) -> Path | None:
    """The run's trials file, the compressed one first; None when it has neither."""
    return next((run_dir / n for n in TRIALS_NAMES if (run_dir / n).is_file()), None)


def read_config(run_dir: Path) -> dict[str, Any] | None:
    """The run's config.json, when it exists (copied into result.json as is)."""
    path = run_dir / CONFIG_NAME
    if not path.is_file():
        return None
    config = read_json(path)
    if not isinstance(config, dict):
        raise InputError(f"{path}: expected a JSON object")
    return config


def result_path(run_dir: Path) -> Path:
    return run_dir / RESULT_NAME
