"""`python -m pfgen_fast judge pairwise|rank|pointwise ...`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

from pfgen_fast.common.cli_args import add_table_argument, positive_int
from pfgen_fast.common.errors import InputError, PfgenError
from pfgen_fast.common.files import write_atomically
from pfgen_fast.common.jsonl import dumps_line, iter_json_lines, require
from pfgen_fast.common.llm import LLMStats, add_llm_arguments, client_from_args
from pfgen_fast.common.pfgen_data import DATA_DEFAULT, resolve_data_dir
from pfgen_fast.common.tables import print_table, write_table
from pfgen_fast.judge.items import PairItem, load_items
from pfgen_fast.judge.pairwise import METHODS, JudgeSetup, Progress, judge_pairs, summarise
from pfgen_fast.judge.pointwise import draw_scatter, rate_runs, rating_correlation
from pfgen_fast.judge.prompts import PROMPT_VARIANTS, PairwisePrompt
from pfgen_fast.judge.ranking import Comparison, rank_models
from pfgen_fast.judge.runs import load_questions, load_run, run_pairs, run_score
from pfgen_fast.judge.verdicts import LETTERS

DESCRIPTION = "pairwise LLM-as-a-judge with verdict probabilities, rankings, a 10-point judge"


def add_pairwise_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "items",
        nargs="?",
        type=Path,
        metavar="ITEMS.jsonl",
        help="pairs: id, question, reference (optional), answer_a, answer_b, labels (optional)",
    )
    parser.add_argument(
        "--runs",
        nargs=2,
        type=Path,
        metavar=("RUN_A", "RUN_B"),
        help="judge two pfgen-bench run directories against each other (instead of ITEMS)",
    )
    parser.add_argument(
        "--data", type=Path, help=f"pfgen-bench data/ for --runs (default: {DATA_DEFAULT})"
    )
    parser.add_argument(
        "--trials", type=positive_int, help="with --runs: the first N trials of each question"
    )
    parser.add_argument(
        "--prompt",
        choices=PROMPT_VARIANTS,
        default="reason-then-result",
        help="the verdict alone, or a reason then the verdict (default: reason-then-result)",
    )
    parser.add_argument(
        "--criteria",
        action="store_true",
        help="generate evaluation criteria once per question and give them to the judge",
    )
    add_output_arguments(parser, "items.jsonl, summary.json and replies.jsonl")
    add_llm_arguments(parser)


def add_output_arguments(parser: argparse.ArgumentParser, files: str) -> None:
    parser.add_argument("--out", type=Path, help=f"write {files} into DIR")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="judge_command", required=True, metavar="COMMAND")
    add_pairwise_arguments(
        commands.add_parser(
            "pairwise",
            help="judge pairs in both orders; proposed, BS1 and BS2 verdicts and measures",
            description="Judge pairs of answers in both presentation orders and aggregate the "
            "probabilities of the verdict letters (the proposed method), with BS1 and BS2.",
        )
    )
    add_rank_arguments(
        commands.add_parser(
            "rank",
            help="rank models by Bradley-Terry from pairwise results, with bootstrap intervals",
            description="Rank models by a Bradley-Terry fit of pairwise verdicts (a tie is half "
            "a win each), with 95 % percentile bootstrap intervals of the log strengths.",
        )
    )
    add_pointwise_arguments(
        commands.add_parser(
            "pointwise",
            help="the pfgen-bench paper's 10-point judge over runs, correlated with pfgen scores",
            description="Rate every answer of pfgen-bench runs 1-10 with the pfgen-bench paper's "
            "reference-guided judge prompt; each run's mean rating against its score.",
        )
    )


def add_rank_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results",
        nargs="+",
        type=Path,
        metavar="RESULT",
        help="items.jsonl files of `judge pairwise --out` (or those directories), with models",
    )
    parser.add_argument(
        "--method", choices=METHODS, default="proposed", help="which verdicts (default: proposed)"
    )
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=1000,
        help="bootstrap resamples for the intervals (default: 1000; 0: none)",
    )
    add_table_argument(parser, "the ranking", old_name="--out")
    parser.add_argument("--json", action="store_true", help="print the ranking as JSON")


def add_pointwise_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "runs", nargs="+", type=Path, metavar="RUN", help="pfgen-bench run directories"
    )
    parser.add_argument("--data", type=Path, help=f"pfgen-bench data/ (default: {DATA_DEFAULT})")
    parser.add_argument("--trials", type=positive_int, help="the first N trials of each question")
    parser.add_argument("--plot", type=Path, help="draw the scatter plot into a .png or .svg")
    add_output_arguments(parser, "ratings.jsonl, summary.json and replies.jsonl")
    add_llm_arguments(parser)


def progress_printer() -> Progress | None:
    """A progress line on a terminal's stderr (one per batch: criteria, then verdicts),
    nothing otherwise."""
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        end = "\n" if done == total else ""
        print(f"\rcalls {done}/{total}", end=end, file=sys.stderr, flush=True)

    return show


def stats_record(stats: LLMStats) -> dict[str, int]:
    return {
        "calls": stats.calls,
        "cached": stats.cached,
        "failed": stats.failed,
        "prompt_tokens": stats.prompt_tokens,
        "completion_tokens": stats.completion_tokens,
    }


def pairwise_items(args: argparse.Namespace) -> list[PairItem]:
    if (args.items is None) == (args.runs is None):
        raise PfgenError("judge pairwise: give ITEMS.jsonl or --runs RUN_A RUN_B (one of them)")
    if args.items is not None:
        if args.trials is not None or args.data is not None:
            raise PfgenError("judge pairwise: --trials and --data go with --runs")
        return load_items(args.items)
    questions = load_questions(resolve_data_dir(args.data))
    run_a, run_b = (load_run(directory, questions) for directory in args.runs)
    return run_pairs(run_a, run_b, questions, args.trials)


def write_outputs(
    out: Path, name: str, records: list[dict[str, Any]], summary: dict[str, Any]
) -> None:
    write_atomically(out / name, b"".join(dumps_line(r) for r in records))
    write_atomically(out / "summary.json", orjson.dumps(summary, option=orjson.OPT_INDENT_2))


def show_pairwise(summary: dict[str, Any]) -> None:
    def cell(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.1f}"

    rows = []
    for method in METHODS:
        counts = summary["verdicts"][method]
        rows.append([method, cell(summary[method]), *(counts[x] for x in ("A", "B", "C", "none"))])
    title = (
        f"{summary['prompt']} by {summary['judge_model']}: {summary['items']} items, "
        f"{summary['errors']} errors, {summary['labelled']} with labels"
    )
    print_table(title, ["method", "concordance %", "A", "B", "C", "no verdict"], rows)
    usage = summary["usage"]
    print(
        f"robustness {cell(summary['robustness'])} %, Fleiss' kappa "
        f"{'-' if summary['fleiss_kappa'] is None else round(summary['fleiss_kappa'], 3)}, "
        f"tie-breaks {summary['tie_breaks']}; calls {usage['calls']} "
        f"(cached {usage['cached']}, failed {usage['failed']}); tokens of these calls "
        f"{usage['prompt_tokens']} in / {usage['completion_tokens']} out, of all replies "
        f"{summary['tokens']['prompt']} in / {summary['tokens']['completion']} out"
    )


def run_pairwise(args: argparse.Namespace) -> int:
    items = pairwise_items(args)
    prompt = PairwisePrompt(
        reasoning=args.prompt == "reason-then-result", with_criteria=args.criteria
    )
    log = args.out / "replies.jsonl" if args.out is not None else None
    with client_from_args(args, log_path=log) as client:
        setup = JudgeSetup(prompt, client.base_url, client.model)
        records, tokens = judge_pairs(client, items, setup, progress_printer())
        summary = {"prompt": prompt.name, "judge_model": client.model, **summarise(records)}
        summary["usage"] = stats_record(client.stats)
        summary["tokens"] = {"prompt": tokens["prompt"], "completion": tokens["completion"]}
    if args.out is not None:
        write_outputs(args.out, "items.jsonl", records, summary)
    if args.json:
        sys.stdout.buffer.write(orjson.dumps({"items": records, "summary": summary}) + b"\n")
    else:
        show_pairwise(summary)
    return report_errors(records)


def report_errors(records: list[dict[str, Any]]) -> int:
    """Items that could not be judged are named on stderr; the status is then 1."""
    failed = [r for r in records if "error" in r]
    for record in failed:
        print(f"error: item {record['id']!r}: {record['error']}", file=sys.stderr)
    return 1 if failed else 0


def load_comparisons(paths: list[Path], method: str) -> list[Comparison]:
    """The verdicts of `method` between named models; items with errors or without a verdict
    (BS1 on disagreeing orders) give none."""
    comparisons = []
    for path in paths:
        path = path / "items.jsonl" if path.is_dir() else path
        for line in iter_json_lines(path):
            record = line.value
            if "error" in record:
                continue
            model_a = require(record, "model_a", str, line.where)
            model_b = require(record, "model_b", str, line.where)
            verdict = require(record, "verdict", dict, line.where).get(method)
            if verdict is None:
                continue
            if verdict not in LETTERS:
                raise InputError(f'{line.where}: field "verdict": {verdict!r} is not A, B or C')
            comparisons.append(Comparison(model_a, model_b, verdict))
    return comparisons


def run_rank(args: argparse.Namespace) -> int:
    if args.bootstrap < 0:
        raise PfgenError("--bootstrap: expected 0 or more")
    ranked = rank_models(load_comparisons(args.results, args.method), bootstrap=args.bootstrap)
    columns = ["rank", "model", "strength", "low", "high", "wins", "losses", "ties"]
    rows = [
        [
            n,
            r.model,
            round(r.strength, 4),
            round(r.low, 4),
            round(r.high, 4),
            r.wins,
            r.losses,
            r.ties,
        ]
        for n, r in enumerate(ranked, start=1)
    ]
    if args.table is not None:
        write_table(args.table, columns, rows)
    if args.json:
        print(orjson.dumps([dict(zip(columns, row, strict=True)) for row in rows]).decode())
    else:
        title = f"Bradley-Terry log strengths ({args.method} verdicts, 95 % bootstrap interval)"
        print_table(title, columns, rows)
    return 0


def run_pointwise(args: argparse.Namespace) -> int:
    questions = load_questions(resolve_data_dir(args.data))
    runs = [(load_run(directory, questions), run_score(directory)) for directory in args.runs]
    log = args.out / "replies.jsonl" if args.out is not None else None
    with client_from_args(args, log_path=log) as client:
        records, summaries, tokens = rate_runs(
            client, runs, questions, args.trials, progress_printer()
        )
        usage = stats_record(client.stats)
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
        write_outputs(args.out, "ratings.jsonl", records, summary)
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


def run(args: argparse.Namespace) -> int:
    if args.judge_command == "pairwise":
        return run_pairwise(args)
    if args.judge_command == "rank":
        return run_rank(args)
    if args.judge_command == "pointwise":
        return run_pointwise(args)
    raise PfgenError(f"judge: unknown command {args.judge_command}")
