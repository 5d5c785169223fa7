"""Where the published pfgen-bench checkout is (never copied into the project) and its runs,
for the pfgen tests to import."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def bench_dir() -> Path:
    """`$PFGEN_BENCH_DIR`, else `../shared/pfgen-bench` beside the checkout."""
    env = os.environ.get("PFGEN_BENCH_DIR")
    return Path(env) if env else ROOT.parent / "shared" / "pfgen-bench"


BENCH_DIR = bench_dir()
DATA_DIR = BENCH_DIR / "data"
RESULT_DIR = BENCH_DIR / "result"


def published_runs() -> list[Path]:
    """The run directories (with trials.jsonl.xz and result.json) of the checkout, sorted."""
    return sorted(p.parent for p in RESULT_DIR.glob("**/trials.jsonl.xz"))
