"""Shared fixtures: where the published benchmark data is (never copied into the project)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def bench_dir() -> Path:
    """`$PFGEN_BENCH_DIR`, else `../shared/pfgen-bench` beside the checkout."""
    env = os.environ.get("PFGEN_BENCH_DIR")
    return Path(env) if env else ROOT.parent / "shared" / "pfgen-bench"


BENCH_DIR = bench_dir()
DATA_DIR = BENCH_DIR / "data"
RESULT_DIR = BENCH_DIR / "result"


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


def published_runs() -> list[Path]:
    """The run directories (with trials.jsonl.xz and result.json) of the checkout, sorted."""
    return sorted(p.parent for p in RESULT_DIR.glob("**/trials.jsonl.xz"))
