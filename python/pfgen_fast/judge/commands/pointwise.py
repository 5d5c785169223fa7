"""`judge pointwise`: every answer of pfgen-bench runs rated 1-10 with the pfgen-bench
paper's reference-guided judge prompt; each run's mean rating against its score."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

from pfgen_fast.common.cli_args import positive_int
from pfgen_fast.common.llm_options import add_llm_arguments, client_from_args
from pfgen_fast.common.pfgen_data import DATA_DEFAULT, resolve_data_dir
from pfgen_fast.common.tables import print_table
from pfgen_fast.judge.commands import outputs
from pfgen_fast.judge.data import load_questions, load_run, run_score
from pfgen_fast.judge.pointwise import draw_scatter, rate_runs, rating_correlation


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "runs", nargs="+", type=Path, metavar="RUN", help="pfgen-bench run directories"
    )
    parser.add_argument("--data", type=Path, help=f"pfgen-bench data/ (default: {DATA_DEFAULT})")
    parser.add_argument("--trials", type=positive_int, help="the first N trials of each question")
    parser.add_argument("--plot", type=Path, help="draw the scatter plot into a .png or .svg")
    outputs.add_output_arguments(parser, "ratings.jsonl, summary.json and replies.jsonl")
    add_llm_arguments(parser, request_fields=("temperature",))


def run(args: argparse.Namespace) -> int:
    questions = load_questions(resolve_data_dir(args.data))
    runs = [(load_run(directory, questions), run_score(directory)) for directory in args.runs]
    log = args.out / "replies.jsonl" if args.out is not None else None
    with client_from_args(args, log_path=log) as client:
        records, summaries, tokens = rate_runs(client, runs, questions, args.trials)
        usage = outputs.stats_record(client.stats)
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
        "usage": usage,
        "tokens": {"prompt": tokens["prompt"], "completion": tokens["completion"]},
    }
    if args.out is not None:
        outputs.write_outputs(args.out, "ratings.jsonl", records, summary)
    if args.plot is not None:
        draw_scatter(summaries, r, args.plot)
    if args.json:
        sys.stdout.buffer.write(orjson.dumps({"ratings": records, "summary": summary}) + b"\n")
    else:
        print_table(f"10-point judge {args.judge_model}", columns, rows)
        print(
            f"Pearson r {'-' if r is None else f'{r:.4f}'} over runs; calls {usage['calls']} "
            f"(cached {usage['cached']}, failed {usage['failed']}); tokens of these calls "
            f"{usage['prompt_tokens']} in / {usage['completion_tokens']} out, of all replies "
            f"{tokens['prompt']} in / {tokens['completion']} out"
        )
    failed = sum(s.unrated for s in summaries)
    if failed:
        print(
            f"error: {failed} answers got no rating (see the ratings' text or error)",
            file=sys.stderr,
        )
    return 1 if failed else 0
