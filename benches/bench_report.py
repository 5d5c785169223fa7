"""Speed of the per-run pages: all 68 shared pages (66 runs, `data/`, `data/final/`).

    python benches/bench_report.py

Prints, in one run: the time to read the 50 questions' reference data, to read and check the
68 result.json files, to count the reference answers holding each 3-gram of the samples (both
cores), to render the 68 pages (checked byte for byte against the published ones), their
total against the target of 1 s, and the wall time of the whole command
(`python -m pfgen_fast report --force` on copies of the pages, interpreter start included).
The baseline is the published tool's way of finding 3-gram document frequencies, a substring
search of every 3-gram of a sample in every reference answer, timed on a few samples in this
same run and extrapolated to all samples (about 46 s per page for the published
tool). Needs the pfgen-bench checkout (`$PFGEN_BENCH_DIR`, else `../shared/pfgen-bench`).
"""

from __future__ import annotations

import gc
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_paths import ROOT, bench_dir

sys.path.insert(0, str(ROOT / "python"))

from pfgen_fast.pfgen.data import load_questions  # noqa: E402
from pfgen_fast.pfgen.pages import SampleCoverage, render_page  # noqa: E402
from pfgen_fast.pfgen.results import load_result  # noqa: E402

TARGET_SECONDS = 1.0
BASELINE_SAMPLES = 12


def substring_search_df(text: str, references: list[str]) -> list[int]:
    """The baseline: per character, the largest number of reference answers containing a
    3-gram of `text` that covers it, each 3-gram looked up by substring search."""
    coverage = [0] * len(text)
    for start in range(len(text) - 2):
        gram = text[start : start + 3]
        count = sum(1 for answer in references if gram in answer)
        for index in range(start, start + 3):
            coverage[index] = max(coverage[index], count)
    return coverage


def command_seconds(paths: list[Path]) -> float:
    """Wall time of the report command on copies of the result.json files (pages written)."""
    with tempfile.TemporaryDirectory() as work:
        copies = []
        for index, path in enumerate(paths):
            run_dir = Path(work) / f"run{index:02d}"
            run_dir.mkdir()
            shutil.copy(path, run_dir / "result.json")
            copies.append(str(run_dir / "result.json"))
        command = [sys.executable, "-m", "pfgen_fast", "report", "--force"]
        data = str(bench_dir() / "data")
        started = time.perf_counter()
        subprocess.run([*command, "--data", data, *copies], check=True, capture_output=True)
        return time.perf_counter() - started


def main() -> int:
    # As the command runs (see without_cycle_collector in pfgen_fast/pfgen/cli.py).
    gc.disable()
    bench = bench_dir()
    paths = sorted(bench.glob("result/**/result.json"))
    paths += [bench / "data" / "result.json", bench / "data" / "final" / "result.json"]
    started = time.perf_counter()
    questions = load_questions(bench / "data")
    data_loaded = time.perf_counter()
    runs = [load_result(path) for path in paths]
    loaded = time.perf_counter()
    coverage = SampleCoverage(runs, questions)
    counted = time.perf_counter()
    pages = [render_page(run, coverage) for run in runs]
    rendered = time.perf_counter()
    identical = sum(
        page.encode() == (path.parent / "README.md").read_bytes()
        for page, path in zip(pages, paths, strict=True)
    )

    samples = [
        (qid, sample["answer"])
        for run in runs
        for qid, question in run.data["questions"].items()
        for sample in question["samples"]
    ]
    step = max(1, len(samples) // BASELINE_SAMPLES)
    chosen = samples[::step][:BASELINE_SAMPLES]
    baseline_started = time.perf_counter()
    for qid, text in chosen:
        answers = [a for refs in questions[qid].answers.values() for a in refs]
        substring_search_df(text, answers)
    per_sample = (time.perf_counter() - baseline_started) / len(chosen)
    baseline_total = per_sample * len(samples)

    total = rendered - started
    print(f"pages: {len(pages)} ({identical} byte-identical to the published ones)")
    print(f"read the 50 questions' data:               {data_loaded - started:6.2f} s")
    print(f"read and check {len(runs)} result.json:        {loaded - data_loaded:6.2f} s")
    print(f"3-gram counts of the samples, both cores:  {counted - loaded:6.2f} s")
    print(f"render {len(pages)} pages ({len(samples)} samples):     {rendered - counted:6.2f} s")
    print(f"total:                                    {total:6.2f} s  (target {TARGET_SECONDS} s)")
    print(
        f"baseline (substring search, {len(chosen)} samples timed): {per_sample:.3f} s per sample, "
        f"{per_sample * len(samples) / len(pages):.1f} s per page, {baseline_total:.0f} s in all"
    )
    print(f"ratio baseline / pfgen_fast (total): {baseline_total / total:,.0f}x")
    print(f"python -m pfgen_fast report --force, 68 pages: {command_seconds(paths):.2f} s wall")
    return 0 if identical == len(pages) else 1


if __name__ == "__main__":
    raise SystemExit(main())
