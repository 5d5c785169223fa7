"""Python's built-in `sum()` of floats under both interpreter generations, written from their
documented semantics for the tests (the core's `py_sum` is checked against these)."""

from __future__ import annotations

import math
from collections.abc import Iterable


def left_to_right_sum(values: Iterable[float]) -> float:
    """Python <= 3.11: the int 0, then each value added in turn."""
    total: float = 0
    for value in values:
        total = total + value
    return float(total)


def compensated_sum(values: Iterable[float]) -> float:
    """Python >= 3.12: the int 0 plus the first value, then Neumaier's summation: each add's
    rounding error, taken from the operand of larger magnitude, gathered apart and added at
    the end when it is non-zero and finite."""
    items = list(values)
    if not items:
        return 0.0
    total = 0 + items[0]
    error = 0.0
    for value in items[1:]:
        new_total = total + value
        if abs(total) >= abs(value):
            error += (total - new_total) + value
        else:
            error += (value - new_total) + total
        total = new_total
    if error != 0.0 and math.isfinite(error):
        total += error
    return total


def official_sum(values: Iterable[float], legacy_sum: bool) -> float:
    """`sum(values)` as the chosen interpreter generation computes it."""
    return left_to_right_sum(values) if legacy_sum else compensated_sum(values)
