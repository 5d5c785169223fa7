"""What every room's tests share: a per-session cache folder. (`run_cli` and `ROOT` are in
`cli_runner.py`.)"""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def cache_in_temporary_folder(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The cache (data, tables) of this session's runs, in-process and in subprocesses, is
    its own: not the user's, and empty at the start."""
    os.environ["PFGEN_FAST_CACHE"] = str(tmp_path_factory.mktemp("cache"))
