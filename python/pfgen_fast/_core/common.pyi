"""Type stubs of `pfgen_fast._core.common` (rust/pfgen-python/src/common): Python's float
arithmetic, memory."""

from collections.abc import Sequence

__all__ = [
    "py_round",
    "py_sum",
    "release_free_memory",
]

def py_round(x: float, digits: int) -> float:
    """`round(x, digits)` as Python computes it (at most 22 digits)."""

def py_sum(values: Sequence[float], legacy: bool = False) -> float:
    """`sum(values)` of floats as Python >= 3.12 computes it (compensated), or with `legacy` as
    Python <= 3.11 does (left to right)."""

def release_free_memory() -> None: ...
