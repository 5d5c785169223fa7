"""`eval`: score trials files and write result.json beside each (the benchmark's `make`)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from rich.console import Console
from rich.markup import escape

from pfgen_fast.common.cli_args import (
    add_data_argument,
    add_jobs_argument,
    add_json_argument,
    add_paths_argument,
    input_paths,
)
from pfgen_fast.common.errors import InputError
from pfgen_fast.common.progress import Progress, add_quiet_argument
from pfgen_fast.common.tables import print_table
from pfgen_fast.pfgen.data import BENCHMARK_QUESTIONS, DATA_DEFAULT, resolve_data_dir
from pfgen_fast.pfgen.evaluate import Evaluator, RunOutcome
from pfgen_fast.pfgen.exactness import add_legacy_sum_argument
from pfgen_fast.pfgen.outputs import (
    FIGURE_CAPTION,
    FIGURE_COLUMNS,
    FIGURE_LABELS,
    run_figures,
)
from pfgen_fast.pfgen.scorer import ReferenceData

DEFAULT_PATTERN = "result/**/trials.jsonl.xz"
# The table of runs: piped, these columns; on a terminal, short labels, with the mode, the
# status and the path under the model's name.
COLUMNS = ["model", "mode", "trials", *FIGURE_COLUMNS, "status", "path"]
LABELS = ["model", "mode", "n", *FIGURE_LABELS, "status", "path"]
CAPTION = f"n: trials; {FIGURE_CAPTION}"
# A run skipped because its result.json was current is shown as such.
STATUS_SHOWN = {"scored": "scored", "skipped": "current"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_paths_argument(parser, "trials files", [DEFAULT_PATTERN])
    add_data_argument(parser, DATA_DEFAULT)
    parser.add_argument("--force", action="store_true", help="re-score runs already scored")
    add_jobs_argument(parser)
    add_json_argument(parser, "the summary")
    parser.add_argument(
        "--allow-partial",
        action="store_true",
        help="score runs that lack some questions, over the questions present",
    )
    parser.add_argument(
        "--sources",
        type=source_names,
        help="comma-separated reference sources to score against (e.g. P); questions that "
        "have none of them keep their own",
    )
    add_legacy_sum_argument(parser)
    add_quiet_argument(parser)


def source_names(text: str) -> list[str]:
    """An argument type: comma-separated source names, at least one."""
    names = [name for name in text.split(",") if name]
    if not names:
        raise argparse.ArgumentTypeError(f"{text!r}: expected source names, e.g. P or P,W")
    return names


# The summary's totals, in its table and its JSON: to 4 places, rounded once from the sum.
SUMMARY_PLACES = 4


def summary_row(outcome: RunOutcome, legacy_sum: bool) -> dict[str, Any]:
    result = outcome.result or {}
    config = result.get("config") or {}
    figures = run_figures(result, legacy_sum) if "scores" in result else None
    valid = outcome.valid_trials
    return {
        "path": str(outcome.path),
        "status": outcome.status,
        "model": config.get("model", str(outcome.path.parent)),
        "mode": config.get("mode", ""),
        "num_trials": result.get("num_trials"),
        # The fewest trials with a generated answer of any question (all, for runs unmarked).
        "num_valid_trials": valid.valid if valid else result.get("num_trials"),
        "score": result.get("score"),
        "score_std": result.get("score_std"),
        "length": result.get("length"),
        "fluency": None if figures is None else round(figures.fluency, SUMMARY_PLACES),
        "truthfulness": None if figures is None else round(figures.truthfulness, SUMMARY_PLACES),
        "helpfulness": None if figures is None else figures.helpfulness,
        "error": outcome.error,
    }


def trials_text(valid: int | None, trials: int | None) -> str:
    """The trials cell: `98/100` where answers were given up on, else the trials."""
    if trials is None:
        return ""
    return f"{valid}/{trials}" if valid != trials else f"{trials}"


def print_runs(rows: list[dict[str, Any]]) -> None:
    """The runs scored and those already current, best first."""

    def number(value: float | None, digits: int) -> str:
        return "" if value is None else f"{value:.{digits}f}"

    table = [
        [
            row["model"],
            row["mode"],
            trials_text(row["num_valid_trials"], row["num_trials"]),
            number(row["score"], 4),
            number(row["score_std"], 4),
            number(row["length"], 1),
            number(row["fluency"], SUMMARY_PLACES),
            number(row["truthfulness"], SUMMARY_PLACES),
            number(row["helpfulness"], 4),
            STATUS_SHOWN[row["status"]],
            row["path"],
        ]
        for row in sorted(rows, key=lambda r: -(r["score"] or 0))
    ]
    print_table(
        "Evaluated runs",
        COLUMNS,
        table,
        labels=LABELS,
        second_line=("mode", "status", "path"),
        caption=CAPTION,
    )


def check_sources(sources: list[str], references: ReferenceData) -> None:
    """Every source asked for is a source of some question."""
    known = {source for question in references.questions.values() for source in question.answers}
    unknown = [source for source in sources if source not in known]
    if unknown:
        raise InputError(
            f"--sources: no question has source {', '.join(unknown)} "
            f"(the data's sources: {', '.join(sorted(known))})"
        )


def answer_rate(answers: int, started: float) -> str:
    """Answers scored per second so far; nothing before any answer was scored."""
    if not answers:
        return ""
    return f"{answers / max(time.perf_counter() - started, 1e-9):,.0f} answers/s"


def answers_summary(answers: int, started: float) -> str:
    return f" ({answers:,} answers, {answer_rate(answers, started)})" if answers else ""


def run(args: argparse.Namespace) -> int:
    console = Console(stderr=True, soft_wrap=True)
    paths = input_paths(args.paths, [DEFAULT_PATTERN], console)
    if not paths:
        raise InputError(
            "no trials files to evaluate (give paths, or run inside a pfgen-bench checkout)"
        )
    data_dir = resolve_data_dir(args.data)
    references = ReferenceData.load(data_dir)
    if args.sources is not None:
        check_sources(args.sources, references)
    evaluator = Evaluator(references, args.sources, args.allow_partial, args.force, args.legacy_sum)
    if evaluator.partial_data:
        console.print(
            f"note: {escape(str(data_dir))} has {len(references.questions)} of the benchmark's "
            f"{BENCHMARK_QUESTIONS} questions ({', '.join(references.questions)}): each run is "
            "scored on those, its answers to the others left out"
        )

    started = time.perf_counter()
    answers_done = 0
    files = Progress(enabled=not (args.json or args.quiet)).task("trials files", len(paths))

    def on_done(outcome: RunOutcome) -> None:
        nonlocal answers_done
        answers_done += outcome.num_answers
        files.advance(cached=outcome.status == "skipped", failed=outcome.status == "failed")
        for warning in outcome.warnings:
            console.print(f"[yellow]warning:[/] {escape(warning)}")
        if outcome.status == "failed":
            console.print(f"[red]error:[/] {escape(outcome.error or '')}")

    try:
        outcomes = evaluator.run(paths, args.jobs, on_done)
    finally:
        files.close()

    scored = [o for o in outcomes if o.status == "scored"]
    skipped = [o for o in outcomes if o.status == "skipped"]
    failed = [o for o in outcomes if o.status == "failed"]
    if args.json:
        json.dump(
            [summary_row(o, args.legacy_sum) for o in outcomes],
            sys.stdout,
            ensure_ascii=False,
            indent=2,
        )
        sys.stdout.write("\n")
    elif scored or skipped:
        print_runs([summary_row(o, args.legacy_sum) for o in outcomes if o.status != "failed"])
    elapsed = time.perf_counter() - started
    console.print(
        f"{len(scored)} scored, {len(skipped)} already current, {len(failed)} failed "
        f"in {elapsed:.1f} s{answers_summary(answers_done, started)}"
    )
    if skipped and not scored:
        console.print(
            "already current: each result.json was made from the same trials file (as the "
            "published ones were), so it is kept; --force scores them again"
        )
    if failed:
        console.print(f"[red]{len(failed)} run(s) failed:[/]")
        for outcome in failed:
            console.print(f"  {outcome.error}", markup=False, highlight=False)
        return 1
    return 0
