"""Shared fixtures: where the published benchmark data is (never copied into the project), and
running the command line."""

from __future__ import annotations

import os
import subprocess
import sys
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


@pytest.fixture(scope="session", autouse=True)
def cache_in_temporary_folder(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The cache (data, tables) of this session's runs, in-process and in subprocesses, is
    its own: not the user's, and empty at the start."""
    os.environ["PFGEN_FAST_CACHE"] = str(tmp_path_factory.mktemp("cache"))


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


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python -m pfgen_fast ARGS` in `cwd`, output captured (wide, for the rich tables)."""
    return subprocess.run(
        [sys.executable, "-m", "pfgen_fast", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "200"},
    )
