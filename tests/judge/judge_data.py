"""The published pfgen-bench checkout for the judge room's tests (found by `published.py`,
never copied): called inside a test, each skips it when there is no checkout."""

from __future__ import annotations

from pathlib import Path

from published import CHECKOUT, published_runs, require

__all__ = ["bench_dir", "published_runs"]


def bench_dir() -> Path:
    return require(CHECKOUT)
