"""`lm-eval-tasks`: print the folder of pfgen-bench's lm-evaluation-harness tasks, for
`lm_eval --include_path "$(python -m pfgen_fast lm-eval-tasks)"` (docs/lm-eval.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

# The task files (their functions are `pfgen_fast.pfgen.harness`'s).
TASKS_FOLDER = Path(__file__).resolve().parents[1] / "lm_eval_tasks"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No options."""


def run(args: argparse.Namespace) -> int:
    print(TASKS_FOLDER)
    return 0
