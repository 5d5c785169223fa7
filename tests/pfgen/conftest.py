"""Fixtures of the pfgen-bench tests: the published checkout and its data directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from pfgen_bench import BENCH_DIR, DATA_DIR


@pytest.fixture(scope="session")
def bench() -> Path:
    """The pfgen-bench checkout; tests that need it fail loudly when it is missing."""
    if not (DATA_DIR / "Q01.json").is_file():
        pytest.fail(
            f"pfgen-bench data not found at {BENCH_DIR}: set PFGEN_BENCH_DIR to a checkout of "
            "https://github.com/pfnet-research/pfgen-bench"
        )
    return BENCH_DIR


@pytest.fixture(scope="session")
def data_dir(bench: Path) -> Path:
    return bench / "data"
