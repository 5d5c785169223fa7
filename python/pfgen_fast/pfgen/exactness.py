"""The official tool's float arithmetic, operation for operation: its `sum()` (compensated as on
Python >= 3.12, or left to right as on Python <= 3.11 with `legacy_sum`) and its means
(`sum(xs) / len(xs)`); result.json's means and deviations are the core's
(`pfgen_core::pfgen::run_summary`). The published files were written under both interpreter
generations; `--legacy-sum` reproduces the older ones."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

from pfgen_fast._core import common as core_common

LEGACY_SUM_HELP = (
    "add scores as the official tool does on Python <= 3.11 (left to right) instead of as on "
    "Python >= 3.12 (compensated); each published file is reproduced by one of the two"
)


def add_legacy_sum_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--legacy-sum", action="store_true", help=LEGACY_SUM_HELP)


def py_sum(values: Sequence[float] | np.ndarray, legacy_sum: bool = False) -> float:
    """The official `sum(values)` of floats (`pfgen_fast._core.common.py_sum`)."""
    items = values.tolist() if isinstance(values, np.ndarray) else values
    return core_common.py_sum(items, legacy_sum)


def mean(values: Sequence[float] | np.ndarray, legacy_sum: bool = False) -> float:
    """`sum(values) / len(values)`."""
    return py_sum(values, legacy_sum) / len(values)
