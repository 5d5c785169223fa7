"""Where the pfgen-bench data (`Qxx.json`) is found without `--data`: pfgen's commands and the
judge's `--runs` resolve it the same way."""

from __future__ import annotations

import os
from pathlib import Path

from pfgen_fast.common.errors import DataError
from pfgen_fast.common.files import cache_dir

# How the data directory is found without --data (default_data_dir), for the help.
DATA_DEFAULT = "$PFGEN_DATA_DIR, else ./data when it holds Qxx.json, else `data fetch`'s copy"


def default_data_dir() -> Path | None:
    """`$PFGEN_DATA_DIR`, else `./data` when it holds Qxx.json files, else the fetched cache."""
    env = os.environ.get("PFGEN_DATA_DIR")
    if env:
        return Path(env)
    if any(Path("data").glob("Q[0-9][0-9].json")):
        return Path("data")
    cached = cache_dir() / "data"
    if any(cached.glob("Q[0-9][0-9].json")):
        return cached
    return None


def resolve_data_dir(data_dir: str | Path | None) -> Path:
    """The directory given, or the default one; a clear error saying how to get the data."""
    if data_dir is not None:
        return Path(data_dir)
    found = default_data_dir()
    if found is None:
        raise DataError(
            "no benchmark data found: pass --data DIR (the data/ directory of a pfgen-bench "
            "checkout), set PFGEN_DATA_DIR, or run `python -m pfgen_fast data fetch`"
        )
    return found
