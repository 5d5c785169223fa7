"""The core's rounding is Python's round(), including exact decimal ties."""

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pfgen_fast._core.common import py_round


@settings(max_examples=3000, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6))
@example(0.0078125)  # an exact tie at 6 digits
@example(2.675)  # just below a decimal tie
@example(1.050205)
@example(-0.125)
def test_matches_python_round(x: float) -> None:
    for digits in (4, 5, 6):
        assert py_round(x, digits) == round(x, digits)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None)
@given(st.integers(min_value=0, max_value=10**7), st.sampled_from([4, 5, 6]))
def test_values_on_decimal_half_way_points(units: int, digits: int) -> None:
    x = (units + 0.5) / 10**digits
    for value in (x, math.nextafter(x, 0.0), math.nextafter(x, 1.0)):
        assert py_round(value, digits) == round(value, digits)
