"""Batch evaluation of a pfgen-bench checkout's runs, from scratch, against `xz -dc` of the same
files, for its N runs and for 2N runs (each run copied under a second path).

    python benches/bench_eval.py [CHECKOUT] [--warm-tables] [--no-reference] [--against REV]
        [--marked FRACTION]

CHECKOUT is a pfgen-bench checkout (default `$PFGEN_BENCH_DIR`, else `../shared/pfgen-bench`
beside the project); every `result/**/trials.jsonl.xz` in it is a run. For N runs, then for 2N,
each round copies the runs' trials.jsonl.xz and config.json into a fresh temporary folder
(nothing scored yet), then times, in the same round: `xz -dc` of all the copies on every core
(one `xz` per file, as many at once as there are cores: the decompression floor) and
`python -m pfgen_fast eval` on them (every core). Each figure is the best of ROUNDS rounds (the
machine may be shared); printed with their ratio, answers per second, the eval's CPU time and
its peak memory (the largest sum of resident memory over the eval's process tree, sampled every
SAMPLE_SECONDS), and the growth of time and peak from N to 2N runs. The tables are built inside
each eval (the table cache off) unless `--warm-tables`, where every eval reads them from a table
cache filled before the timed rounds. Unless `--no-reference`, the published-tool approach is
extrapolated for the N runs (the from-spec Python reference scorer of `benches/`: its tables
timed on a few questions, scoring timed on a sample).

With `--against REV`, the same figures for this checkout and for revision REV (built once into a
scratch environment, as `bench_score.py --against` does), each round timing both on the same
copies of the runs in alternating order; every file the two evals wrote in the first round must
be equal byte for byte (the exit status is 1 otherwise, after the timings).

With `--marked FRACTION`, the runs are first rewritten as pfgen-bench's runners write them since
its PR #94: every line with `"generated": true`, except a seeded FRACTION of the lines (0: none)
given up, their answer the runners' placeholder with `"generated": false`; the evals take
`--allow-partial`, since a question may have lost every answer.
"""

from __future__ import annotations

import argparse
import lzma
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import orjson

from bench_paths import bench_dir
from score_against import commit_of, installed_python, own_package_env

TARGET_RATIO, REQUIRED_RATIO = 2.0, 3.0
TARGET_PEAK_MB, REQUIRED_PEAK_MB = 800, 1000
MAX_PEAK_GROWTH = 0.15  # from N to 2N runs
REFERENCE_QUESTIONS = ("Q02", "Q04", "Q21")  # 1, 3 and 2 sources
GIVEN_UP = "(FAILED TO GENERATE AN ANSWER)"  # the runners' placeholder
MARK_SEED = 94
REFERENCE_ANSWERS = 300
ROUNDS = 3
SAMPLE_SECONDS = 0.02


@dataclass(frozen=True)
class Checkout:
    """The interpreter whose `pfgen_fast` is measured, and its name in the output."""

    name: str
    python: str


@dataclass
class Timing:
    """One scale's figures, each the best of its rounds."""

    copies: int
    xz_seconds: float = float("inf")
    eval_seconds: float = float("inf")
    eval_cpu_seconds: float = float("inf")
    peak_bytes: int = 0  # the largest of the rounds: a peak, not a time


def find_runs(bench: Path) -> list[Path]:
    return sorted((bench / "result").glob("**/trials.jsonl.xz"))


def copy_runs(bench: Path, runs: list[Path], target: Path, copies: int) -> list[Path]:
    """Every run's trials and config under `target`, `copies` times (under copy-0/, copy-1/...)."""
    files = []
    for copy in range(copies):
        for trials in runs:
            run = target / f"copy-{copy}" / trials.parent.relative_to(bench)
            run.mkdir(parents=True)
            shutil.copy(trials, run)
            if (trials.parent / "config.json").exists():
                shutil.copy(trials.parent / "config.json", run)
            files.append(run / "trials.jsonl.xz")
    return files


def marked_runs(bench: Path, runs: list[Path], target: Path, given_up: float) -> list[Path]:
    """The runs (trials and config) under `target` as the runners mark them: each line
    `"generated": true`, or with the fraction `given_up` of the lines (seeded), the placeholder
    and `"generated": false`."""
    chance = random.Random(MARK_SEED)
    marked = []
    for trials in runs:
        run = target / trials.parent.relative_to(bench)
        run.mkdir(parents=True)
        if (trials.parent / "config.json").exists():
            shutil.copy(trials.parent / "config.json", run)
        lines = []
        for line in lzma.decompress(trials.read_bytes()).split(b"\n"):
            if not line.strip():
                continue
            record = orjson.loads(line)
            if chance.random() < given_up:
                record.update(answer=GIVEN_UP, generated=False)
            else:
                record["generated"] = True
            lines.append(orjson.dumps(record) + b"\n")
        marked.append(run / "trials.jsonl.xz")
        marked[-1].write_bytes(lzma.compress(b"".join(lines), preset=1))
    return marked


def time_xz(files: list[Path]) -> float:
    """Wall time of `xz -dc` of every file, one process per file, one per core at a time."""

    def decompress(path: Path) -> None:
        subprocess.run(["xz", "-dc", str(path)], stdout=subprocess.DEVNULL, check=True)

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        list(pool.map(decompress, files))
    return time.perf_counter() - start


def tree_resident_bytes(root: int) -> int:
    """The resident memory of process `root` and all its descendants, from /proc."""
    total, pending = 0, [root]
    while pending:
        pid = pending.pop()
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            for task in Path(f"/proc/{pid}/task").iterdir():
                pending.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue  # the process ended meanwhile
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) * 1024
    return total


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_eval(
    bench: Path, files: list[Path], checkout: Checkout, env: dict[str, str], partial: bool
) -> tuple[float, float, int]:
    """Wall time, CPU time and peak resident memory (process tree) of one `eval`."""
    command = [checkout.python, "-m", "pfgen_fast", "eval", "--data", str(bench / "data")]
    if partial:
        command.append("--allow-partial")
    cpu_before = children_cpu_seconds()
    peak = 0
    with tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        process = subprocess.Popen(
            [*command, "--json", *map(str, files)],
            stdout=subprocess.DEVNULL,
            stderr=errors,
            env=env,
        )
        while process.poll() is None:
            peak = max(peak, tree_resident_bytes(process.pid))
            time.sleep(SAMPLE_SECONDS)
        seconds = time.perf_counter() - start
        if process.returncode != 0:
            errors.seek(0)
            sys.exit(f"eval failed:\n{errors.read().decode(errors='replace')}")
    return seconds, children_cpu_seconds() - cpu_before, peak


def eval_env(checkout: Checkout, cache: Path | None) -> dict[str, str]:
    """The checkout's own package; the table cache in `cache` (filled by an eval before the timed
    ones), or off."""
    env = own_package_env(checkout.python)
    if cache is None:
        return {**env, "PFGEN_FAST_TABLE_CACHE": "0"}
    return {**env, "PFGEN_FAST_CACHE": str(cache)}


@dataclass(frozen=True)
class Runs:
    """The runs measured: their trials files below `root` (the checkout, or its marked copy),
    and whether the evals take `--allow-partial`."""

    root: Path
    trials: list[Path]
    partial: bool


def measure(
    bench: Path, runs: Runs, work: Path, warm: bool, checkouts: list[Checkout], rounds: int
) -> tuple[dict[str, list[Timing]], list[str]]:
    """N and 2N runs, `rounds` rounds each, the scales alternating round by round and the
    checkouts too, with the files that the checkouts' evals of the first round wrote unequal."""
    envs: dict[str, dict[str, str]] = {}
    for index, checkout in enumerate(checkouts):
        envs[checkout.name] = eval_env(checkout, work / f"cache-{index}" if warm else None)
        if warm:
            files = copy_runs(runs.root, runs.trials[:1], work / f"warm-{index}", 1)
            time_eval(bench, files, checkout, envs[checkout.name], runs.partial)
    timings = {checkout.name: [Timing(copies) for copies in (1, 2)] for checkout in checkouts}
    unequal: list[str] = []
    for round_number in range(rounds):
        order = checkouts if round_number % 2 == 0 else checkouts[::-1]
        for scale, copies in enumerate((1, 2)):
            folders = [work / f"round-{round_number}-{copies}-{n}" for n in range(len(order))]
            for checkout, folder in zip(order, folders, strict=True):
                timing = timings[checkout.name][scale]
                files = copy_runs(runs.root, runs.trials, folder, copies)
                timing.xz_seconds = min(timing.xz_seconds, time_xz(files))
                env = envs[checkout.name]
                seconds, cpu_seconds, peak = time_eval(bench, files, checkout, env, runs.partial)
                timing.eval_seconds = min(timing.eval_seconds, seconds)
                timing.eval_cpu_seconds = min(timing.eval_cpu_seconds, cpu_seconds)
                timing.peak_bytes = max(timing.peak_bytes, peak)
            if round_number == 0 and len(folders) == 2:
                unequal += unequal_files(*folders)
            for folder in folders:
                shutil.rmtree(folder)
    return timings, unequal


def unequal_files(first: Path, second: Path) -> list[str]:
    """The paths (relative) of the files that differ between two folders or are in one only."""
    names = {path.relative_to(first) for path in first.rglob("*") if path.is_file()}
    names |= {path.relative_to(second) for path in second.rglob("*") if path.is_file()}
    return sorted(
        str(name)
        for name in names
        if not (first / name).is_file()
        or not (second / name).is_file()
        or (first / name).read_bytes() != (second / name).read_bytes()
    )


def count_answers(runs: list[Path]) -> int:
    return sum(
        sum(1 for line in lzma.decompress(path.read_bytes()).splitlines() if line.strip())
        for path in runs
    )


def reference_seconds(bench: Path, runs: list[Path], num_answers: int) -> float:
    """Extrapolated time of the from-spec reference for all tables and all answers."""
    from pfgen_fast.pfgen.data import load_questions
    from reference_scorer import ReferenceScorer

    questions = load_questions(bench / "data")
    build = score = 0.0
    scored = 0
    for question_id in REFERENCE_QUESTIONS:
        question = questions[question_id]
        start = time.perf_counter()
        scorer = ReferenceScorer.build(question)
        build += time.perf_counter() - start
        sample = [
            record["answer"]
            for path in runs
            for line in lzma.decompress(path.read_bytes()).splitlines()
            if line.strip() and (record := orjson.loads(line))["question"] == question.question
        ]
        sample = sample[:: max(1, len(sample) // REFERENCE_ANSWERS)][:REFERENCE_ANSWERS]
        start = time.perf_counter()
        for answer in sample:
            scorer.score_record(answer)
        score += time.perf_counter() - start
        scored += len(sample)
    return build / len(REFERENCE_QUESTIONS) * len(questions) + score / scored * num_answers


def print_timings(timings: list[Timing], num_runs: int, num_answers: int) -> None:
    print(
        f"{'runs':>6} {'answers':>10} {'xz -dc (s)':>11} {'eval (s)':>9} {'ratio':>6} "
        f"{'answers/s':>10} {'eval CPU (s)':>13} {'peak (MB)':>10}"
    )
    for timing in timings:
        answers = num_answers * timing.copies
        print(
            f"{num_runs * timing.copies:>6} {answers:>10,} {timing.xz_seconds:>11.2f} "
            f"{timing.eval_seconds:>9.2f} {timing.eval_seconds / timing.xz_seconds:>6.2f} "
            f"{answers / timing.eval_seconds:>10,.0f} {timing.eval_cpu_seconds:>13.2f} "
            f"{timing.peak_bytes / 1e6:>10.0f}"
        )
    single, double = timings
    print(
        f"2N against N: time x{double.eval_seconds / single.eval_seconds:.2f}, peak "
        f"{(double.peak_bytes / single.peak_bytes - 1) * 100:+.1f}% "
        f"(limit +{MAX_PEAK_GROWTH * 100:.0f}%)"
    )
    print(
        f"targets: ratio <= {TARGET_RATIO} (required <= {REQUIRED_RATIO}), peak <= "
        f"{TARGET_PEAK_MB} MB (required <= {REQUIRED_PEAK_MB})"
    )


def print_comparison(timings: dict[str, list[Timing]], this: str, other: str) -> None:
    """The eval's speed of this checkout over the other's, N and 2N runs."""
    print(f"ratio, this checkout's speed over {other}'s:")
    for mine, theirs in zip(timings[this], timings[other], strict=True):
        print(
            f"  {mine.copies}N runs: wall, best {theirs.eval_seconds / mine.eval_seconds:.3f}; "
            f"CPU time, best {theirs.eval_cpu_seconds / mine.eval_cpu_seconds:.3f}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", nargs="?", type=Path, help="a pfgen-bench checkout")
    parser.add_argument("--warm-tables", action="store_true", help="tables from a table cache")
    parser.add_argument("--no-reference", action="store_true", help="skip the reference")
    parser.add_argument("--against", metavar="REV", help="compare the eval with REV's")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="rounds (best of)")
    parser.add_argument(
        "--marked",
        type=float,
        metavar="FRACTION",
        help="the runs with the runners' generated marks, FRACTION of the answers given up",
    )
    args = parser.parse_args()
    checkouts = [Checkout("this checkout", sys.executable)]
    if args.against:
        commit = commit_of(args.against)
        checkouts.append(Checkout(commit[:12], installed_python(commit)))
    bench = args.checkout or bench_dir()
    runs = find_runs(bench)
    if not runs:
        sys.exit(f"no result/**/trials.jsonl.xz in {bench}")
    num_answers = count_answers(runs)
    print(
        f"checkout: {bench}; runs: {len(runs)}; answers: {num_answers:,}; "
        f"cores: {os.cpu_count()}; load average: {os.getloadavg()[0]:.1f}"
    )
    tables = "read from a warm table cache" if args.warm_tables else "built (table cache off)"
    print(f"best of {args.rounds} rounds (peak: largest); tables {tables}")
    with tempfile.TemporaryDirectory(prefix="bench-eval-") as temporary:
        work = Path(temporary)
        measured = Runs(bench, runs, partial=False)
        if args.marked is not None:
            root = work / "marked"
            measured = Runs(root, marked_runs(bench, runs, root, args.marked), partial=True)
            print(f"runs marked as generated, {args.marked:.0%} of the answers given up")
        timings, unequal = measure(bench, measured, work, args.warm_tables, checkouts, args.rounds)
    for checkout in checkouts:
        if len(checkouts) > 1:
            print(f"{checkout.name}:")
        print_timings(timings[checkout.name], len(runs), num_answers)
    if args.against:
        print_comparison(timings, checkouts[0].name, checkouts[1].name)
        print(
            f"outputs DIFFER: {len(unequal)} files ({unequal[0]} first)"
            if unequal
            else "outputs equal"
        )
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    if not args.no_reference:
        reference = reference_seconds(bench, runs, num_answers)
        print(
            f"from-spec reference, extrapolated: {reference:.0f} s for the {len(runs)} runs "
            f"({num_answers / reference:,.0f} answers/s; "
            f"pfgen_fast is {reference / timings[checkouts[0].name][0].eval_seconds:.0f}x)"
        )
    return 1 if unequal else 0


if __name__ == "__main__":
    sys.exit(main())
