"""Speed and memory of `build-refs` on synthetic candidates, against plain Python.

    python benches/bench_build_refs.py [--count 1000000] [--ten-million]

Writes `--count` synthetic candidates for one question (`python -m pfgen_fast synth`, not
timed), runs `python -m pfgen_fast build-refs` on them through all steps in a fresh process and
prints its wall time and peak resident memory (the process's, from wait4) with the per-step
report. Then, on 100,000 of the candidates, times a straightforward Python implementation of
the rare 5-gram filter and length selection (collections.Counter) against the same steps of
pfgen_fast in the same run, and prints the ratio. `--ten-million` also runs 10,000,000
candidates (3.9 GB of input, written in about 4 minutes, and about 2.6 GB of spill files).
Needs the pfgen-bench checkout (`$PFGEN_BENCH_DIR`, else `../shared/pfgen-bench`).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import orjson

from bench_paths import bench_dir

QUESTION_ID = "Q04"
BASELINE_COUNT = 100_000
N, MIN_COUNT, TARGET_LENGTH, POOL_SIZE = 5, 2, 100, 30_000
# The targets for 1,000,000 candidates (and the limits), and for 10,000,000.
TARGET_SECONDS, LIMIT_SECONDS = 10.0, 30.0
TARGET_GB, LIMIT_GB, TEN_MILLION_LIMIT_GB = 1.5, 2.0, 4.0


def pfgen(*args: str) -> list[str]:
    return [sys.executable, "-m", "pfgen_fast", *args]


def synth(count: int, out: Path) -> None:
    data = str(bench_dir() / "data")
    command = pfgen("synth", "--data", data, "--question", QUESTION_ID, "--count", str(count))
    subprocess.run([*command, "--seed", "1", "--out", str(out)], check=True)


def timed_build(candidates: Path, out: Path) -> tuple[float, float, dict]:
    """Wall seconds, peak resident GB and JSON report of one build-refs process."""
    meta = str(bench_dir() / "data" / "meta")
    command = pfgen("build-refs", "--meta", meta, "--candidates", str(candidates))
    start = time.perf_counter()
    with tempfile.TemporaryFile() as report:
        process = subprocess.Popen([*command, "--out", str(out), "--json"], stdout=report)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit("build-refs failed")
        report.seek(0)
        return seconds, usage.ru_maxrss / 2**20, json.loads(report.read())


def print_steps(report: dict) -> None:
    for row in report["steps"]:
        print(
            f"    {row['step']:<15} {row['in']:>11,} -> {row['out']:>11,}  length "
            f"{row['length_mean']:6.1f} sd {row['length_sd']:5.1f}  {row['seconds']:7.2f} s  "
            f"peak {row['peak_memory_mb']:,.0f} MB"
        )
    for summary in report["sets"]:
        spilled_mb = summary["spilled_bytes"] / 2**20
        print(
            f"    n-grams: {summary['occurrences']:,} occurrences, {summary['distinct']:,} "
            f"distinct, {summary['rare']:,} rare; spilled {spilled_mb:,.0f} MB"
        )


def python_baseline(answers: list[str]) -> tuple[float, list[int]]:
    """The rare 5-gram filter and the length selection, written the obvious way."""
    start = time.perf_counter()
    grams = [{a[i : i + N] for i in range(len(a) - N + 1)} for a in answers]
    document_frequency = Counter(g for s in grams for g in s)
    kept = [i for i, s in enumerate(grams) if all(document_frequency[g] >= MIN_COUNT for g in s)]
    kept.sort(key=lambda i: abs(len(answers[i]) - TARGET_LENGTH))
    return time.perf_counter() - start, sorted(kept[:POOL_SIZE])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--ten-million", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pfgen-bench-build-refs-") as work:
        work_dir = Path(work)
        counts = [args.count] + ([10_000_000] if args.ten_million else [])
        for count in counts:
            candidates = work_dir / f"candidates-{count}.jsonl"
            synth(count, candidates)
            seconds, peak_gb, report = timed_build(candidates, work_dir / f"out-{count}")
            print(f"build-refs, {count:,} candidates of {QUESTION_ID}, all steps:")
            print(f"  {seconds:.1f} s, peak memory {peak_gb:.2f} GB")
            print_steps(report)
            if count == 1_000_000:
                print(
                    f"  targets: <= {TARGET_SECONDS:.0f} s (must {LIMIT_SECONDS:.0f}), "
                    f"<= {TARGET_GB} GB (must {LIMIT_GB})"
                )
            if count == 10_000_000:
                print(f"  limit: <= {TEN_MILLION_LIMIT_GB} GB; time about 10x the 1,000,000 run")
            candidates.unlink()

        small = work_dir / "candidates-small.jsonl"
        synth(BASELINE_COUNT, small)
        answers = [orjson.loads(line)["answer"] for line in small.read_bytes().splitlines()]
        seconds, _, report = timed_build(small, work_dir / "out-small")
        steps = {row["step"]: row for row in report["steps"]}
        ours = steps["rare_ngrams"]["seconds"] + steps["length"]["seconds"]
        baseline, kept = python_baseline(answers)
        print(f"rare 5-gram filter + length selection, {BASELINE_COUNT:,} candidates:")
        print(f"  pfgen_fast {ours:.2f} s (whole command, all steps: {seconds:.1f} s)")
        print(f"  collections.Counter {baseline:.2f} s")
        print(f"  pool: {steps['length']['out']:,} (pfgen_fast), {len(kept):,} (Counter)")
        print(f"  ratio: {baseline / ours:.1f}x")


if __name__ == "__main__":
    main()
