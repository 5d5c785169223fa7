"""llm-jp-eval-mm's own files that pfgen_fast reads at run time (the Tasks' prompt texts, judge
prompts, JMMMU's answer indicators): a checkout or the copy fetched from the repository at the
pinned commit and checked against `reference_data/llm-jp-eval-mm.json`, else an installed
`eval_mm` package."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from pfgen_fast.common.errors import DataError
from pfgen_fast.common.published_data import PublishedData

PACKAGE = "src/eval_mm"  # the eval_mm package in the repository
FETCH_HINT = (
    "run `python -m pfgen_fast mm data fetch`, set $EVALMM_DIR to a checkout of "
    "llm-jp-eval-mm, or install its eval_mm package"
)


PUBLISHED = PublishedData(
    name="llm-jp-eval-mm",
    manifest="llm-jp-eval-mm.json",
    cached="evalmm/llm-jp-eval-mm",
    hint=FETCH_HINT,
    variable="EVALMM_DIR",
)


def default_data_dir() -> Path:
    """`$EVALMM_DIR`, else the fetched copy in the user cache."""
    return PUBLISHED.named_or_fetched_dir()


def installed_package_dir() -> Path | None:
    """The folder of an installed eval_mm package (found without importing it)."""
    try:
        spec = importlib.util.find_spec("eval_mm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def package_file(relative: str, data_dir: Path | None = None) -> Path:
    """`src/eval_mm/<relative>` ("tasks/ai2d.py", "metrics/jmmmu_scorer.py") of the checkout
    or fetched copy, else of the installed eval_mm package when no directory was given; either
    checked against the manifest (which lists every file read)."""
    from pfgen_fast.common.archive import verify_files

    directory = data_dir if data_dir is not None else default_data_dir()
    name = f"{PACKAGE}/{relative}"
    package = directory / PACKAGE
    if not (package / relative).is_file():
        installed = installed_package_dir()
        if data_dir is not None or installed is None or not (installed / relative).is_file():
            raise DataError(f"llm-jp-eval-mm's {name} not found at {directory}: {FETCH_HINT}")
        package = installed
    digest = PUBLISHED.load_manifest()["files"][name]
    problems = verify_files(package, {relative: digest}, PUBLISHED.algorithm)
    if problems:
        raise DataError(
            f"{package / relative} does not match llm-jp-eval-mm at the pinned commit "
            f"({FETCH_HINT}): {problems[0]}"
        )
    return package / relative
