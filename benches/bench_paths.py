"""Where the benchmark scripts find the checkout and the published pfgen-bench files."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def bench_dir() -> Path:
    """`$PFGEN_BENCH_DIR`, else `../shared/pfgen-bench` beside the checkout."""
    env = os.environ.get("PFGEN_BENCH_DIR")
    return Path(env) if env else ROOT.parent / "shared" / "pfgen-bench"
