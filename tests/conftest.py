"""What every room's tests share: a per-session cache folder, and the published files each
test asks for by fixture (found by `published.py`, skipped with the way to get them when
absent). (`run_cli` and `ROOT` are in `cli_runner.py`.)"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import published


@pytest.fixture(scope="session", autouse=True)
def cache_in_temporary_folder(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The cache (data, tables) of this session's runs, in-process and in subprocesses, is
    its own: not the user's, and empty at the start."""
    os.environ["PFGEN_FAST_CACHE"] = str(tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="session")
def bench() -> Path:
    """The pfgen-bench checkout: `data/` and the published runs in `result/`."""
    return published.require(published.CHECKOUT)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """pfgen-bench's `data/` folder (of the checkout, or the fetched copy)."""
    return published.require(published.PFGEN_DATA)


@pytest.fixture(scope="session")
def lctg_dir() -> Path:
    """LCTG Bench's published files (a checkout, or the fetched copy)."""
    return published.require(published.LCTG)


@pytest.fixture(scope="session")
def evalmm_dir() -> Path:
    """llm-jp-eval-mm's files read at run time (a checkout, or the fetched copy)."""
    return published.require(published.EVALMM)


@pytest.fixture(scope="session")
def bench_cases() -> Path:
    """The folder of published pfgen-bench answers with the official scorer's records."""
    return published.require(published.PFGEN_CASES)
