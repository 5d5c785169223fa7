"""Where the tests find the benchmarks' published files, which the project never holds.

Each set of files is looked for, in order: in the folder its variable names (when set, only
there), in `../shared/` beside the checkout, in the copy the package's own `data fetch` keeps
in the user's cache, and last (once per session, where the network allows) fetched into that
cache by that command, checked against the pinned digests. A set nobody can have makes the
tests that need it skip, with one reason that says how to get it; every other test runs.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from pfgen_fast.common.files import cache_dir

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
# Read at import, before the session points PFGEN_FAST_CACHE at its own empty folder.
USER_CACHE = cache_dir()
# A fetch that neither succeeds nor fails within this time counts as failed.
FETCH_TIMEOUT_SECONDS = 300
# Where every pinned archive of `reference_data/` is downloaded from.
ARCHIVE_HOST = "github.com"


@dataclass(frozen=True)
class FileSet:
    """One set of published files: where each place keeps it, and how to get it."""

    name: str
    variable: str
    shared: str  # folder below ../shared
    inside: str  # folder below the variable's or ../shared's folder that holds the set
    marker: str  # a file every usable copy has
    cached: str | None  # folder below the user cache where `fetch` puts the set
    fetch: tuple[str, ...] | None  # arguments of `python -m pfgen_fast` that fetch it
    source: str  # where the set is published

    def how_to_get(self, shared: Path = SHARED) -> str:
        """The skip reason; `shared` is the `../shared` of the checkout the tests run in."""
        fetched = f", or run `python -m pfgen_fast {' '.join(self.fetch)}`" if self.fetch else ""
        return (
            f"needs {self.name}: set {self.variable} to a copy of {self.source}, or put it at "
            f"{shared / self.shared}{fetched}"
        )


FILE_SETS = {
    fileset.name: fileset
    for fileset in [
        FileSet(
            name="the pfgen-bench checkout (data/ and result/)",
            variable="PFGEN_BENCH_DIR",
            shared="pfgen-bench",
            inside="",
            marker="result",
            cached=None,
            fetch=None,
            source="https://github.com/pfnet-research/pfgen-bench",
        ),
        FileSet(
            name="the pfgen-bench data",
            variable="PFGEN_BENCH_DIR",
            shared="pfgen-bench",
            inside="data",
            marker="Q01.json",
            cached="data",
            fetch=("data", "fetch"),
            source="https://github.com/pfnet-research/pfgen-bench",
        ),
        FileSet(
            name="LCTG Bench",
            variable="LCTG_BENCH_DIR",
            shared="lctg-bench",
            inside="",
            marker="datasets/summary/prompts_v1.jsonl",
            cached="lctg/LCTG-Bench",
            fetch=("lctg", "data", "fetch"),
            source="https://github.com/CyberAgentAILab/LCTG-Bench",
        ),
        FileSet(
            name="llm-jp-eval-mm",
            variable="EVALMM_DIR",
            shared="llm-jp-eval-mm",
            inside="",
            marker="src/eval_mm/tasks/mmmu.py",
            cached="evalmm/llm-jp-eval-mm",
            fetch=("mm", "data", "fetch"),
            source="https://github.com/llm-jp/llm-jp-eval-mm",
        ),
        FileSet(
            name="llm-jp-eval-mm's source (a checkout)",
            variable="EVALMM_DIR",
            shared="llm-jp-eval-mm",
            inside="",
            marker="src/eval_mm/tasks/task.py",
            cached=None,
            fetch=None,
            source="https://github.com/llm-jp/llm-jp-eval-mm",
        ),
        FileSet(
            name="the pfgen-bench cases",
            variable="PFGEN_BENCH_CASES",
            shared="pfgen-bench-cases",
            inside="",
            marker="length-penalty.jsonl",
            cached=None,
            fetch=None,
            source="the published answers with the official scorer's records",
        ),
        FileSet(
            name="pfgen-bench after its PR #94 (runner library and evaluator)",
            variable="PFGEN_BENCH_AFTER94_DIR",
            shared="pfgen-bench-after94",
            inside="",
            marker="pfgen_eval.py",
            cached=None,
            fetch=None,
            source="the nearest public copy of pfgen-bench's pfgen.py and pfgen_eval.py after "
            "its PRs #94/#95 (tohoku-nlp/nanochat-jp, tasks/pfgen_bench/)",
        ),
    ]
}
CHECKOUT = "the pfgen-bench checkout (data/ and result/)"
PFGEN_DATA = "the pfgen-bench data"
LCTG = "LCTG Bench"
EVALMM = "llm-jp-eval-mm"
EVALMM_SOURCE = "llm-jp-eval-mm's source (a checkout)"
PFGEN_CASES = "the pfgen-bench cases"
PFGEN_AFTER_94 = "pfgen-bench after its PR #94 (runner library and evaluator)"


@cache
def locate(name: str) -> Path | None:
    """The folder holding the set, or None when it cannot be had on this machine now."""
    fileset = FILE_SETS[name]
    variable = os.environ.get(fileset.variable)
    if variable:
        found = Path(variable) / fileset.inside
        return found if (found / fileset.marker).exists() else None
    for found in (SHARED / fileset.shared / fileset.inside, cached_copy(fileset)):
        if found is not None and (found / fileset.marker).exists():
            return found
    if fileset.fetch is None or not fetched(fileset.fetch):
        return None
    found = cached_copy(fileset)
    return found if found is not None and (found / fileset.marker).exists() else None


def cached_copy(fileset: FileSet) -> Path | None:
    return USER_CACHE / fileset.cached if fileset.cached is not None else None


@cache
def archive_host_resolves() -> bool:
    """Whether the host of the pinned archives has an address: without one no fetch is tried
    (the fetch would retry its download before it fails)."""
    try:
        socket.getaddrinfo(ARCHIVE_HOST, 443)
    except OSError:
        return False
    return True


@cache
def fetched(fetch: tuple[str, ...]) -> bool:
    """Runs the package's fetch into the user cache once per session; whether it worked."""
    if not archive_host_resolves():
        return False
    environment = {**os.environ, "PFGEN_FAST_CACHE": str(USER_CACHE)}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pfgen_fast", *fetch],
            env=environment,
            capture_output=True,
            timeout=FETCH_TIMEOUT_SECONDS,
        )
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def require(name: str) -> Path:
    """The folder holding the set; the test is skipped, saying how to get it, when there is
    none."""
    found = locate(name)
    if found is None:
        pytest.skip(FILE_SETS[name].how_to_get())
    return found


def published_runs() -> list[Path]:
    """The run folders (trials.jsonl.xz and result.json) of the checkout, sorted; the test is
    skipped when there is no checkout."""
    return sorted(p.parent for p in (require(CHECKOUT) / "result").glob("**/trials.jsonl.xz"))


def each_published_run() -> list[object]:
    """The published runs as parameters of a test: one skipped parameter, with the reason,
    when there is no checkout."""
    checkout = locate(CHECKOUT)
    if checkout is None:
        skip = pytest.mark.skip(reason=FILE_SETS[CHECKOUT].how_to_get())
        return [pytest.param(None, marks=skip, id="no-checkout")]
    return sorted(p.parent for p in (checkout / "result").glob("**/trials.jsonl.xz"))


def lctg_dir() -> Path:
    return require(LCTG)


def evalmm_dir() -> Path:
    return require(EVALMM)
