"""The published pfgen-bench checkout for the pfgen tests (found by `published.py`, never
copied into the project): called inside a test, each skips it when there is no checkout."""

from __future__ import annotations

from pathlib import Path

from published import CHECKOUT, each_published_run, published_runs, require

__all__ = ["bench_dir", "data_of_checkout", "each_published_run", "published_runs", "result_dir"]


def bench_dir() -> Path:
    return require(CHECKOUT)


def data_of_checkout() -> Path:
    """The checkout's `data/`, with its `result.json` files beside the questions."""
    return bench_dir() / "data"


def result_dir() -> Path:
    return bench_dir() / "result"
