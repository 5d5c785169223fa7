"""`judge pointwise`: every answer of pfgen-bench runs rated 1-10 with the pfgen-bench
paper's reference-guided judge prompt; each run's mean rating against its score."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

from pfgen_fast.common.cli_args import positive_int
from pfgen_fast.common.files import check_writable_folder
from pfgen_fast.common.llm import warn_if_cut
from pfgen_fast.common.llm_options import add_llm_arguments, client_from_args
from pfgen_fast.common.tables import print_table
from pfgen_fast.judge.commands import outputs
from pfgen_fast.judge.data import load_questions, load_run, run_score
from pfgen_fast.judge.outputs import (
    POINTWISE_RATINGS,
    REPLIES,
    settings_record,
    stats_record,
    write_outputs,
)
from pfgen_fast.judge.pointwise import (
    DEFAULT_MAX_TOKENS,
    SAMPLING,
    check_plot_path,
    draw_scatter,
    rate_runs,
    rating_correlation,
)
from pfgen_fast.judge.replies import reason_counts
from pfgen_fast.pfgen.outputs import DATA_DEFAULT, resolve_data_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "runs", nargs="+", type=Path, metavar="RUN", help="pfgen-bench run directories"
    )
    parser.add_argument("--data", type=Path, help=f"pfgen-bench data/ (default: {DATA_DEFAULT})")
    parser.add_argument("--trials", type=positive_int, help="the first N trials of each question")
    parser.add_argument("--plot", type=Path, help="draw the scatter plot into a .png or .svg")
    parser.add_argument(
        "--max-tokens",
        type=positive_int,
        default=DEFAULT_MAX_TOKENS,
        help=f"new tokens per reply at most (default: {DEFAULT_MAX_TOKENS}, MT-Bench's judge)",
    )
    outputs.add_output_arguments(parser, "ratings.jsonl, summary.json and replies.jsonl")
    add_llm_arguments(parser, request_fields=("temperature", "max_tokens"))


def check_outputs(args: argparse.Namespace) -> None:
    """What can go wrong with the outputs, found before the first call."""
    if args.out is not None:
        check_writable_folder(args.out)
    if args.plot is not None:
        check_plot_path(args.plot)
        check_writable_folder(args.plot.parent)


def run(args: argparse.Namespace) -> int:
    questions = load_questions(resolve_data_dir(args.data))
    runs = [(load_run(directory, questions), run_score(directory)) for directory in args.runs]
    check_outputs(args)
    log = args.out / REPLIES if args.out is not None else None
    with client_from_args(args, log_path=log) as client:
        records, summaries, tokens = rate_runs(
            client, runs, questions, args.trials, args.max_tokens
        )
        usage = stats_record(client.stats)
        settings = settings_record(client, {**SAMPLING, "max_tokens": args.max_tokens})
    warn_if_cut(client.stats)
    r = rating_correlation(summaries)
    columns = ["run", "pfgen score", "mean rating", "rated", "unrated"]
    rows = [
        [
            s.run,
            s.pfgen_score,
            None if s.mean_rating is None else round(s.mean_rating, 4),
            s.rated,
            s.unrated,
        ]
        for s in summaries
    ]
    summary = {
        "judge_model": args.judge_model,
        "runs": [dict(zip(columns, row, strict=True)) for row in rows],
        "pearson_r": r,
        "settings": settings,
        "usage": usage,
        "tokens": {"prompt": tokens["prompt"], "completion": tokens["completion"]},
    }
    if args.out is not None:
        write_outputs(args.out, POINTWISE_RATINGS, records, summary)
    if args.plot is not None:
        draw_scatter(summaries, r, args.plot)
    if args.json:
        lines = [record.line() for record in records]
        sys.stdout.buffer.write(orjson.dumps({"ratings": lines, "summary": summary}) + b"\n")
    else:
        print_table(f"10-point judge {args.judge_model}", columns, rows)
        print(
            f"Pearson r {'-' if r is None else f'{r:.4f}'} over runs; calls {usage['calls']} "
            f"(cached {usage['cached']}, failed {usage['failed']}); tokens of these calls "
            f"{usage['prompt_tokens']} in / {usage['completion_tokens']} out, of all replies "
            f"{tokens['prompt']} in / {tokens['completion']} out"
        )
    failures = [record.error for record in records if record.error is not None]
    if failures:
        print(
            f"error: {len(failures)} answers got no rating ({reason_counts(failures)}); see "
            "the ratings' error",
            file=sys.stderr,
        )
    return 1 if failures else 0
