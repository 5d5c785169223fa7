"""The site's tests: LCTG Bench's files where the site looks for the prompts' texts by default
(as `lctg eval` does, $LCTG_BENCH_DIR), when the tests can have them."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from published import LCTG, locate


@pytest.fixture(scope="session", autouse=True)
def lctg_bench_dir() -> Iterator[None]:
    found = locate(LCTG)
    before = os.environ.get("LCTG_BENCH_DIR")
    if found is not None:
        os.environ["LCTG_BENCH_DIR"] = str(found)
    yield
    if before is None:
        os.environ.pop("LCTG_BENCH_DIR", None)
    else:
        os.environ["LCTG_BENCH_DIR"] = before
