"""Speed of pfgen_fast against the from-spec Python reference scorer (benches/reference_scorer.py).

    python benches/bench_score.py
    python benches/bench_score.py --trials-order
    python benches/bench_score.py --against REV [--legacy-sum] [--answers N] [--rounds R]

Prints, for the same answers in the same run (published trial answers of 80-120 characters,
repeated to 200,000 lines): the table build time of all 50 questions on one core (and their
reading from the table cache), the scoring throughput on one core through
`QuestionScorer.score_arrays` (also with each distinct answer once, and the time of a call
with one answer) and through `python -m pfgen_fast score` (its tables built, then read from
the table cache that a run before those timed filled), the resident memory of all 50
questions' tables, the reference scorer's figures and the ratios. pfgen_fast is measured in
fresh subprocesses pinned to one CPU with `RAYON_NUM_THREADS=1`; each of its times is the
best of ROUNDS runs (a shared machine's neighbours slow single runs by up to a fifth). Needs
the pfgen-bench checkout (`$PFGEN_BENCH_DIR`, else `../shared/pfgen-bench` beside the
project).

With `--trials-order`, only the scoring of real answers as trials files hold them: every published
answer once (the first time it occurs), in the order of the trials files (sorted paths; within a
run, sorted by question), all 50 questions' tables in turn; on one core, through `score_arrays`
(one call per run and question, the tables built) and through `python -m pfgen_fast score` (the
tables read from the table cache), each the best of ROUNDS runs.

With `--against REV`, the `score` CLI of this checkout against the one of revision REV (built
once into a scratch environment), on the first N (default 100,000) published answers in trials
order, one core, alternating R rounds (default 5), the outputs checked equal first; prints both
speeds and the ratio (`benches/score_against.py`).
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_paths import bench_dir

NUM_ANSWERS = 200_000
MIN_LENGTH, MAX_LENGTH = 80, 120
# Answers the reference scores per question (a sample: it is slow; its rate is per answer).
REFERENCE_ANSWERS_PER_QUESTION = 40
# Answers per question scored one per call (the fixed cost of a call).
SINGLE_CALL_ANSWERS = 40
# pfgen_fast's times: the best of this many runs.
ROUNDS = 3
# The targets.
TARGET_BUILD_SECONDS = 2.0
TARGET_BULK_PER_SECOND = 150_000
TARGET_CLI_PER_SECOND = 50_000
TARGET_TABLE_MB = 400
TARGET_TRIALS_ORDER_PER_SECOND, REQUIRED_TRIALS_ORDER_PER_SECOND = 300_000, 200_000


def pin_to_one_cpu() -> None:
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def resident_bytes(field: str) -> int:
    """`VmRSS` (now) or `VmHWM` (peak) of this process, from /proc."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"/proc/self/status has no {field}")


def published_answers(result_dir: Path) -> list[dict[str, str]]:
    """(question, answer) of every published trial whose answer has 80-120 characters."""
    chosen = []
    for trials in sorted(result_dir.glob("**/trials.jsonl.xz")):
        with lzma.open(trials, "rt", encoding="utf-8") as lines:
            for line in lines:
                trial = json.loads(line)
                if MIN_LENGTH <= len(trial["answer"]) <= MAX_LENGTH:
                    chosen.append({"question": trial["question"], "answer": trial["answer"]})
    return chosen


def answers_in_trials_order(result_dir: Path) -> list[dict[str, str]]:
    """(question, answer) of every published trial, each distinct answer once (where it first
    occurs), in the trials files' order."""
    seen: set[tuple[str, str]] = set()
    ordered = []
    for trials in sorted(result_dir.glob("**/trials.jsonl.xz")):
        with lzma.open(trials, "rt", encoding="utf-8") as lines:
            for line in lines:
                trial = json.loads(line)
                key = (trial["question"], trial["answer"])
                if key not in seen:
                    seen.add(key)
                    ordered.append({"question": key[0], "answer": key[1]})
    return ordered


def read_answers(path: Path) -> dict[str, list[str]]:
    """The benchmark's answers grouped by question text."""
    grouped: dict[str, list[str]] = defaultdict(list)
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            grouped[record["question"]].append(record["answer"])
    return grouped


def child_build(data_dir: Path) -> dict[str, Any]:
    """Fresh process, one CPU: time to build all 50 questions' tables (best of ROUNDS), and
    their memory (after the first build)."""
    from pfgen_fast import ReferenceData, build_scorers

    references = ReferenceData.load(data_dir)
    before = resident_bytes("VmRSS")
    times = []
    for round_number in range(ROUNDS):
        start = time.perf_counter()
        scorers = build_scorers(references.questions.values(), threads=1)
        times.append(time.perf_counter() - start)
        if round_number == 0:
            memory = {
                "rss_growth": resident_bytes("VmRSS") - before,
                "peak_growth": resident_bytes("VmHWM") - before,
                "table_bytes": sum(scorer.table_bytes for scorer in scorers.values()),
            }
        del scorers
    return {"seconds": min(times), **memory}


def best_of_rounds(work: Callable[[], object]) -> float:
    """The shortest time of ROUNDS runs of `work` (what it returns is dropped at once)."""
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def child_load(data_dir: Path) -> dict[str, Any]:
    """Fresh process, one CPU, the table cache filled: time to read all 50 questions' tables
    from it (best of ROUNDS)."""
    from pfgen_fast import ReferenceData, build_scorers

    references = ReferenceData.load(data_dir)
    return {
        "seconds": best_of_rounds(lambda: build_scorers(references.questions.values(), threads=1))
    }


def child_bulk(data_dir: Path, answers_path: Path) -> dict[str, Any]:
    """Fresh process, one CPU: answers per second through `score_arrays`, one call per
    question (the best of ROUNDS passes over all the answers; the same again with each
    distinct answer once), and the time of a call with a single answer (SINGLE_CALL_ANSWERS
    answers of each question, best of ROUNDS)."""
    from pfgen_fast import ReferenceData, build_scorers

    references = ReferenceData.load(data_dir)
    grouped = read_answers(answers_path)
    scorers = build_scorers(references.questions.values(), threads=1)
    by_question = [(scorers[references.by_text(q).question_id], a) for q, a in grouped.items()]
    # A question's answers repeat every ~1,600 (the published ones, cycled), and a repeated
    # answer may find its table lines still in the caches: each once is the harder case.
    distinct = [(scorer, list(dict.fromkeys(answers))) for scorer, answers in by_question]
    one_per_call = [
        (scorer, [answer])
        for scorer, answers in by_question
        for answer in answers[:SINGLE_CALL_ANSWERS]
    ]

    def score_all(calls: list[tuple[Any, list[str]]]) -> None:
        for scorer, answers in calls:
            scorer.score_arrays(answers)

    return {
        "seconds": best_of_rounds(lambda: score_all(by_question)),
        "answers": sum(len(answers) for _, answers in by_question),
        "distinct_seconds": best_of_rounds(lambda: score_all(distinct)),
        "distinct_answers": sum(len(answers) for _, answers in distinct),
        "single_call_seconds": best_of_rounds(lambda: score_all(one_per_call)) / len(one_per_call),
    }


def child_trials_order(data_dir: Path, answers_path: Path) -> dict[str, Any]:
    """Fresh process, one CPU: answers per second through `score_arrays` on the answers in
    file order, one call per stretch of answers to the same question (a run's answers to one
    question), the best of ROUNDS passes."""
    from pfgen_fast import ReferenceData, build_scorers

    references = ReferenceData.load(data_dir)
    scorers = build_scorers(references.questions.values(), threads=1)
    calls: list[tuple[Any, list[str]]] = []
    with answers_path.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            scorer = scorers[references.by_text(record["question"]).question_id]
            if not calls or calls[-1][0] is not scorer:
                calls.append((scorer, []))
            calls[-1][1].append(record["answer"])

    def score_all() -> None:
        for scorer, answers in calls:
            scorer.score_arrays(answers)

    return {
        "seconds": best_of_rounds(score_all),
        "answers": sum(len(answers) for _, answers in calls),
        "calls": len(calls),
    }


def cache_env(cache: Path | None) -> dict[str, str]:
    """The environment with the table cache in `cache`, or off."""
    if cache is None:
        return {**os.environ, "PFGEN_FAST_TABLE_CACHE": "0"}
    return {**os.environ, "PFGEN_FAST_CACHE": str(cache)}


def run_child(mode: str, *paths: Path, cache: Path | None = None) -> dict[str, Any]:
    env = {**cache_env(cache), "RAYON_NUM_THREADS": "1"}
    command = [sys.executable, __file__, "--child", mode, *map(str, paths)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def time_cli(
    data_dir: Path,
    answers_path: Path,
    output_path: Path,
    one_cpu: bool,
    cache: Path | None,
    num_answers: int = NUM_ANSWERS,
) -> float:
    """Wall time of `python -m pfgen_fast score` on the answers file, the best of ROUNDS runs:
    its tables built inside (`cache` None), or read from the table cache in `cache` (filled
    by a run before those timed)."""
    env = cache_env(cache)
    if one_cpu:
        env["RAYON_NUM_THREADS"] = "1"
    command = [sys.executable, "-m", "pfgen_fast", "score", "--data", str(data_dir)]
    times = []
    for round_number in range(-1 if cache else 0, ROUNDS):
        with output_path.open("wb") as output:
            start = time.perf_counter()
            subprocess.run(
                [*command, str(answers_path)],
                stdout=output,
                env=env,
                check=True,
                preexec_fn=pin_to_one_cpu if one_cpu else None,
            )
            if round_number >= 0:
                times.append(time.perf_counter() - start)
        with output_path.open("rb") as lines:
            written = sum(1 for _ in lines)
        if written != num_answers:
            raise RuntimeError(f"score wrote {written} lines for {num_answers} answers")
    return min(times)


def reference_figures(data_dir: Path, answers_path: Path) -> dict[str, float]:
    """The reference scorer, one question at a time (its tables take ~100 MB per question):
    total build time of all tables, and scoring speed on a sample of each question's answers."""
    from pfgen_fast.pfgen.data import load_questions
    from reference_scorer import ReferenceScorer

    grouped = read_answers(answers_path)
    build_seconds = score_seconds = 0.0
    scored = 0
    for question in load_questions(data_dir).values():
        start = time.perf_counter()
        scorer = ReferenceScorer.build(question)
        build_seconds += time.perf_counter() - start
        sample = grouped.get(question.question, [])[:REFERENCE_ANSWERS_PER_QUESTION]
        start = time.perf_counter()
        for answer in sample:
            scorer.score_record(answer)
        score_seconds += time.perf_counter() - start
        scored += len(sample)
        del scorer  # before the next build: one question's tables in memory at a time
    return {"build_seconds": build_seconds, "per_second": scored / score_seconds}


def report(name: str, value: str, target: str = "", ratio: str = "") -> None:
    print(f"{name:<48} {value:>12}   {target:<12} {ratio}")


def measure() -> dict[str, Any]:
    """Every figure: the children's (tables, loading, score_arrays), the CLI's and the
    reference's, on NUM_ANSWERS published answers written to a temporary file."""
    data_dir = bench_dir() / "data"
    with tempfile.TemporaryDirectory() as work:
        answers_path = Path(work) / "answers.jsonl"
        chosen = published_answers(bench_dir() / "result")
        mean_length = sum(len(c["answer"]) for c in chosen) / len(chosen)
        with answers_path.open("w", encoding="utf-8") as out:
            for index in range(NUM_ANSWERS):
                out.write(json.dumps(chosen[index % len(chosen)], ensure_ascii=False) + "\n")
        print(
            f"{NUM_ANSWERS} answers: {len(chosen)} published trial answers of "
            f"{MIN_LENGTH}-{MAX_LENGTH} characters (mean {mean_length:.1f}), repeated"
        )
        print(f"cpus available: {len(os.sched_getaffinity(0))}")
        build = run_child("build", data_dir)
        bulk = run_child("bulk", data_dir, answers_path)
        output_path = Path(work) / "scored.jsonl"
        cache = Path(work) / "cache"
        cli: dict[tuple[bool, Path | None], float] = {
            (one_cpu, cached): NUM_ANSWERS
            / time_cli(data_dir, answers_path, output_path, one_cpu, cached)
            for cached in (None, cache)
            for one_cpu in (True, False)
        }
        load = run_child("load", data_dir, cache=cache)
        reference = reference_figures(data_dir, answers_path)
    return {"build": build, "bulk": bulk, "cli": cli, "load": load, "reference": reference}


def print_figures(figures: dict[str, Any]) -> None:
    build, bulk, load = figures["build"], figures["bulk"], figures["load"]
    ref_build = figures["reference"]["build_seconds"]
    ref_rate = figures["reference"]["per_second"]
    bulk_rate = bulk["answers"] / bulk["seconds"]
    print()
    report(f"figure (pfgen_fast: best of {ROUNDS} runs)", "pfgen_fast", "target", "vs reference")
    report(
        "tables, 50 questions, 1 core (s)",
        f"{build['seconds']:.2f}",
        f"<= {TARGET_BUILD_SECONDS}",
        f"{ref_build / build['seconds']:.0f}x faster",
    )
    report(
        "score_arrays, 1 core (answers/s)",
        f"{bulk_rate:,.0f}",
        f">= {TARGET_BULK_PER_SECOND:,}",
        f"{bulk_rate / ref_rate:.0f}x faster",
    )
    distinct_rate = bulk["distinct_answers"] / bulk["distinct_seconds"]
    report(
        "score_arrays, 1 core, each answer once (answers/s)",
        f"{distinct_rate:,.0f}",
        "",
        f"{distinct_rate / ref_rate:.0f}x faster",
    )
    single_call = bulk["single_call_seconds"]
    report(
        "score_arrays of one answer, 1 core (us per call)",
        f"{single_call * 1e6:.1f}",
        "",
        f"{1 / ref_rate / single_call:.0f}x faster",
    )
    report("tables, 50 questions, read from the cache (s)", f"{load['seconds']:.2f}")
    for (one_cpu, cached), rate in figures["cli"].items():
        tables = "tables cached" if cached else "tables built"
        report(
            f"score CLI, {'1 core' if one_cpu else 'all cores'}, {tables} (answers/s)",
            f"{rate:,.0f}",
            f">= {TARGET_CLI_PER_SECOND:,}" if one_cpu else "",
            f"{rate / ref_rate:.0f}x faster",
        )
    report(
        "tables, 50 questions: RSS growth (MB)",
        f"{build['rss_growth'] / 1e6:.0f}",
        f"<= {TARGET_TABLE_MB}",
    )
    report("tables, 50 questions: peak RSS growth (MB)", f"{build['peak_growth'] / 1e6:.0f}")
    report("tables, 50 questions: table_bytes (MB)", f"{build['table_bytes'] / 1e6:.0f}")
    print()
    report("reference: tables, 50 questions (s)", f"{ref_build:.1f}")
    report("reference: scoring (answers/s)", f"{ref_rate:,.0f}")


def measure_trials_order() -> None:
    """Prints the scoring speed on one core on the published answers in trials order."""
    data_dir = bench_dir() / "data"
    with tempfile.TemporaryDirectory() as work:
        answers_path = Path(work) / "answers.jsonl"
        ordered = answers_in_trials_order(bench_dir() / "result")
        with answers_path.open("w", encoding="utf-8") as out:
            for record in ordered:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
        print(
            f"{len(ordered):,} published answers in trials order, each once; "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        bulk = run_child("trials", data_dir, answers_path)
        cache = Path(work) / "cache"
        output_path = Path(work) / "scored.jsonl"
        cli_seconds = time_cli(data_dir, answers_path, output_path, True, cache, len(ordered))
    print()
    target = (
        f">= {TARGET_TRIALS_ORDER_PER_SECOND:,} (at least {REQUIRED_TRIALS_ORDER_PER_SECOND:,})"
    )
    report(f"figure (best of {ROUNDS} runs)", "answers/s", "target")
    report(
        f"score_arrays, 1 core ({bulk['calls']:,} calls)",
        f"{bulk['answers'] / bulk['seconds']:,.0f}",
        target,
    )
    report(
        "score CLI, 1 core, tables cached",
        f"{len(ordered) / cli_seconds:,.0f}",
        target,
    )
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument(
        "--trials-order", action="store_true", help="only published answers in trials order"
    )
    parser.add_argument("--against", metavar="REV", help="compare the score CLI with REV's")
    parser.add_argument(
        "--legacy-sum", action="store_true", help="with --against: score with --legacy-sum"
    )
    parser.add_argument("--answers", type=int, default=100_000, help="with --against")
    parser.add_argument("--rounds", type=int, default=5, help="with --against")
    args = parser.parse_args()
    if args.against:
        from score_against import compare

        ordered = answers_in_trials_order(bench_dir() / "result")
        return compare(args.against, ordered, args.answers, args.rounds, args.legacy_sum)
    if args.child:
        pin_to_one_cpu()
        mode, *paths = args.child
        children = {
            "build": child_build,
            "load": child_load,
            "bulk": child_bulk,
            "trials": child_trials_order,
        }
        figures = children[mode](*map(Path, paths))
        print(json.dumps(figures))
        return 0
    if args.trials_order:
        measure_trials_order()
        return 0
    print_figures(measure())
    return 0


if __name__ == "__main__":
    sys.exit(main())
