"""Where the published pfgen-bench files are for the judge room's tests (never copied):
`$PFGEN_BENCH_DIR`, else `../shared/pfgen-bench` beside the checkout."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def bench_dir() -> Path:
    env = os.environ.get("PFGEN_BENCH_DIR")
    bench = Path(env) if env else ROOT.parent / "shared" / "pfgen-bench"
    if not (bench / "data" / "Q01.json").is_file():
        pytest.fail(f"pfgen-bench data not found at {bench}: set PFGEN_BENCH_DIR")
    return bench


def published_runs() -> list[Path]:
    """Run directories (trials.jsonl.xz and result.json) of the checkout, sorted."""
    return sorted(p.parent for p in (bench_dir() / "result").glob("**/trials.jsonl.xz"))
