"""Where the pfgen-bench data is found without `--data`, and its `Qxx.json` files: pfgen's
commands and the judge's runs find them the same way."""

from __future__ import annotations

import os
import re
from pathlib import Path

from pfgen_fast.common.errors import DataError
from pfgen_fast.common.files import cache_dir

QUESTION_FILE = re.compile(r"Q\d{2}\.json")

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


def question_files(data_dir: str | Path) -> list[Path]:
    """The `Qxx.json` files of a directory, sorted by name; an error if there are none."""
    directory = Path(data_dir)
    if not directory.is_dir():
        raise DataError(f"{directory}: not a directory")
    files = sorted(p for p in directory.iterdir() if QUESTION_FILE.fullmatch(p.name))
    if not files:
        raise DataError(f"{directory}: no Qxx.json question files")
    return files
