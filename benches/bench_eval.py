"""Batch evaluation of all shared runs, from scratch, against `xz -dc` of the same files.

    python benches/bench_eval.py

Copies every run's trials.jsonl.xz and config.json of the pfgen-bench checkout
(`$PFGEN_BENCH_DIR`, else `../shared/pfgen-bench` beside the project) into a temporary folder,
then, in the same run, prints: the time `xz -dc` needs to decompress them all, the wall time of
`python -m pfgen_fast eval` on them (both cores, fresh copies, nothing scored yet, the tables
built: the table cache off), each the best of three rounds (the machine may be shared), their
ratio, answers per second, the eval's peak memory, and the published-tool approach (the
from-spec Python reference scorer of `tests/reference_scorer.py`: all its tables timed on a
few questions and extrapolated to 50, scoring timed on a sample and extrapolated to every
answer).
"""

from __future__ import annotations

import lzma
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_paths import ROOT, bench_dir

TARGET_RATIO, REQUIRED_RATIO = 3.0, 4.0
TARGET_PEAK_MB = 1000
REFERENCE_QUESTIONS = ("Q02", "Q04", "Q21")  # 1, 3 and 2 sources
REFERENCE_ANSWERS = 300
ROUNDS = 3


def copy_runs(bench: Path, target: Path) -> list[Path]:
    copies = []
    for trials in sorted((bench / "result").glob("**/trials.jsonl.xz")):
        run = target / trials.parent.relative_to(bench)
        run.mkdir(parents=True)
        shutil.copy(trials, run)
        if (trials.parent / "config.json").exists():
            shutil.copy(trials.parent / "config.json", run)
        copies.append(run / "trials.jsonl.xz")
    return copies


def time_xz(files: list[Path]) -> float:
    start = time.perf_counter()
    for path in files:
        subprocess.run(["xz", "-dc", str(path)], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def reference_seconds(bench: Path, files: list[Path]) -> tuple[float, int]:
    """Extrapolated time of the from-spec reference for all tables and all answers."""
    sys.path.insert(0, str(ROOT / "tests" / "pfgen"))
    import orjson

    from pfgen_fast.pfgen.data import load_questions
    from reference_scorer import ReferenceScorer

    questions = load_questions(bench / "data")
    answers = [
        orjson.loads(line)
        for path in files
        for line in lzma.decompress(path.read_bytes()).splitlines()
        if line.strip()
    ]
    build = score = 0.0
    scored = 0
    for question_id in REFERENCE_QUESTIONS:
        question = questions[question_id]
        start = time.perf_counter()
        scorer = ReferenceScorer.build(question)
        build += time.perf_counter() - start
        sample = [a["answer"] for a in answers if a["question"] == question.question]
        sample = sample[:: max(1, len(sample) // REFERENCE_ANSWERS)][:REFERENCE_ANSWERS]
        start = time.perf_counter()
        for answer in sample:
            scorer.score_record(answer)
        score += time.perf_counter() - start
        scored += len(sample)
    total = build / len(REFERENCE_QUESTIONS) * len(questions) + score / scored * len(answers)
    return total, len(answers)


def time_eval(bench: Path, files: list[Path]) -> float:
    start = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-m", "pfgen_fast", "eval", "--data", str(bench / "data"), "--json"]
        + [str(path) for path in files],
        capture_output=True,
        text=True,
        # From scratch: the tables built, not read from the table cache.
        env={**os.environ, "PFGEN_FAST_TABLE_CACHE": "0"},
    )
    seconds = time.perf_counter() - start
    if completed.returncode != 0:
        sys.exit(f"eval failed:\n{completed.stderr}")
    return seconds


def main() -> int:
    bench = bench_dir()
    xz_seconds = eval_seconds = float("inf")
    with tempfile.TemporaryDirectory(prefix="bench-eval-") as temporary:
        for round_number in range(ROUNDS):
            files = copy_runs(bench, Path(temporary) / str(round_number))
            xz_seconds = min(xz_seconds, time_xz(files))
            eval_seconds = min(eval_seconds, time_eval(bench, files))
        # The largest of the child processes: the eval (the xz ones are small).
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        reference, num_answers = reference_seconds(bench, files)
    ratio = eval_seconds / xz_seconds
    print(f"runs: {len(files)}, answers: {num_answers:,}, cores: {os.cpu_count()}")
    print(f"best of {ROUNDS} rounds")
    print(f"xz -dc of the same files          {xz_seconds:8.2f} s")
    print(
        f"pfgen_fast eval (from scratch)    {eval_seconds:8.2f} s   ratio to xz {ratio:.2f} "
        f"(target <= {TARGET_RATIO}, required <= {REQUIRED_RATIO})"
    )
    print(f"pfgen_fast answers/s              {num_answers / eval_seconds:8,.0f}")
    print(f"pfgen_fast peak memory            {peak_mb:8.0f} MB (target <= {TARGET_PEAK_MB})")
    print(
        f"from-spec reference, extrapolated {reference:8.0f} s   "
        f"({num_answers / reference:,.0f} answers/s; pfgen_fast is {reference / eval_seconds:.0f}x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
