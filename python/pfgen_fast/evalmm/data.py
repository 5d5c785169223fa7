"""llm-jp-eval-mm's own files that pfgen_fast reads at run time (judge prompts, JMMMU's answer
indicators): a checkout or the copy fetched from the repository at the pinned commit and
checked against `reference_data/llm-jp-eval-mm.json`, else an installed `eval_mm` package."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path, PurePosixPath
from typing import Any

from pfgen_fast.common.archive import fetch_archive, verify_files
from pfgen_fast.common.errors import DataError
from pfgen_fast.common.files import cache_dir

MANIFEST = Path(__file__).resolve().parent.parent / "reference_data" / "llm-jp-eval-mm.json"
METRICS = "src/eval_mm/metrics"
FETCH_HINT = (
    "run `python -m pfgen_fast mm data fetch`, set $EVALMM_DIR to a checkout of "
    "llm-jp-eval-mm, or install its eval_mm package"
)


def load_manifest() -> dict[str, Any]:
    return json.loads(MANIFEST.read_text(encoding="utf-8"))


def default_url(ref: str | None = None) -> str:
    manifest = load_manifest()
    return manifest["archive_url"].format(ref=ref or manifest["ref"])


def fetched_dir() -> Path:
    return cache_dir() / "evalmm" / "llm-jp-eval-mm"


def default_data_dir() -> Path:
    """`$EVALMM_DIR`, else the fetched copy in the user cache."""
    env = os.environ.get("EVALMM_DIR")
    return Path(env) if env else fetched_dir()


def verify_data(data_dir: Path) -> list[str]:
    return verify_files(data_dir, load_manifest()["files"])


def fetch_data(url: str, destination: Path | None = None) -> Path:
    """Downloads the repository archive and keeps the manifest's files, verified."""
    manifest = load_manifest()
    names = set(manifest["files"]) | set(manifest["unverified_files"])

    def select(relative: PurePosixPath) -> bool:
        return str(relative) in names

    return fetch_archive(url, destination or fetched_dir(), select, verify_data)


def installed_metrics_dir() -> Path | None:
    """The `metrics` folder of an installed eval_mm package (found without importing it)."""
    try:
        spec = importlib.util.find_spec("eval_mm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "metrics"
    return folder if folder.is_dir() else None


def metrics_file(name: str, data_dir: Path | None = None) -> Path:
    """`src/eval_mm/metrics/<name>` of the checkout or fetched copy (checked against the
    manifest when it lists the file), else of the installed eval_mm package."""
    directory = data_dir if data_dir is not None else default_data_dir()
    relative = f"{METRICS}/{name}"
    path = directory / relative
    if path.is_file():
        expected = load_manifest()["files"]
        if relative in expected:
            problems = verify_files(directory, {relative: expected[relative]})
            if problems:
                raise DataError(
                    f"{path} does not match llm-jp-eval-mm at the pinned commit "
                    f"({FETCH_HINT}): {problems[0]}"
                )
        return path
    installed = installed_metrics_dir()
    if data_dir is None and installed is not None and (installed / name).is_file():
        return installed / name
    raise DataError(f"llm-jp-eval-mm's {relative} not found at {directory}: {FETCH_HINT}")
