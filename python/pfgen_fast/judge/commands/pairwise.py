"""`judge pairwise`: pairs of answers judged in both presentation orders, with the
probabilities of the verdict letters (the proposed method), BS1 and BS2."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

from pfgen_fast.common.cli_args import positive_int
from pfgen_fast.common.errors import UsageError
from pfgen_fast.common.files import check_writable_folder
from pfgen_fast.common.llm_options import add_llm_arguments, client_from_args
from pfgen_fast.common.tables import print_table
from pfgen_fast.judge.commands import outputs
from pfgen_fast.judge.data import load_questions, load_run, run_pairs
from pfgen_fast.judge.items import PairItem, load_items
from pfgen_fast.judge.outputs import (
    PAIRWISE_ITEMS,
    REPLIES,
    PairRecord,
    settings_record,
    stats_record,
    write_outputs,
)
from pfgen_fast.judge.pairwise import (
    REASONED_MAX_TOKENS,
    RESULT_ONLY_MAX_TOKENS,
    JudgeSetup,
    judge_pairs,
    summarise,
)
from pfgen_fast.judge.prompts import PROMPT_VARIANTS, PairwisePrompt
from pfgen_fast.judge.verdicts import METHODS
from pfgen_fast.pfgen.outputs import DATA_DEFAULT, resolve_data_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pairs = parser.add_mutually_exclusive_group(required=True)
    pairs.add_argument(
        "items",
        nargs="?",
        type=Path,
        metavar="ITEMS.jsonl",
        help="pairs: id, question, reference (optional), answer_a, answer_b, labels (optional)",
    )
    pairs.add_argument(
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
    parser.add_argument(
        "--max-tokens",
        type=positive_int,
        help=f"new tokens per reply at most (default: {RESULT_ONLY_MAX_TOKENS} for result-only "
        f"verdicts, {REASONED_MAX_TOKENS} for a reason then the verdict and for criteria)",
    )
    outputs.add_output_arguments(parser, "items.jsonl, summary.json and replies.jsonl")
    add_llm_arguments(
        parser, request_fields=("temperature", "seed", "logprobs", "top_logprobs", "max_tokens")
    )


def pairwise_items(args: argparse.Namespace) -> list[PairItem]:
    if args.items is not None:
        if args.trials is not None or args.data is not None:
            raise UsageError("--trials and --data go with --runs, not with ITEMS.jsonl")
        return load_items(args.items)
    questions = load_questions(resolve_data_dir(args.data))
    run_a, run_b = (load_run(directory, questions) for directory in args.runs)
    return run_pairs(run_a, run_b, questions, args.trials)


def show_pairwise(summary: dict[str, Any]) -> None:
    def cell(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.1f}"

    rows = []
    for method in METHODS:
        counts = summary["verdicts"][method]
        rows.append([method, cell(summary[method]), *(counts[x] for x in ("A", "B", "C", "none"))])
    title = (
        f"{summary['prompt']} by {summary['judge_model']}: {summary['items']} items, "
        f"{summary['judged']} judged, {summary['errors']} errors, {summary['labelled']} "
        "with labels"
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


def run(args: argparse.Namespace) -> int:
    items = pairwise_items(args)
    prompt = PairwisePrompt(
        reasoning=args.prompt == "reason-then-result", with_criteria=args.criteria
    )
    if args.out is not None:
        check_writable_folder(args.out)
    log = args.out / REPLIES if args.out is not None else None
    with client_from_args(args, log_path=log) as client:
        setup = JudgeSetup(prompt, client.base_url, client.model, args.max_tokens)
        judged = judge_pairs(client, items, setup)
        records = judged.records
        summary = {"prompt": prompt.name, "judge_model": client.model, **summarise(records)}
        summary["settings"] = settings_record(client, setup.settings())
        summary["usage"] = stats_record(client.stats)
        tokens = judged.tokens
        summary["tokens"] = {"prompt": tokens["prompt"], "completion": tokens["completion"]}
    if args.out is not None:
        write_outputs(args.out, PAIRWISE_ITEMS, records, summary)
    if args.json:
        lines = [record.line() for record in records]
        sys.stdout.buffer.write(orjson.dumps({"items": lines, "summary": summary}) + b"\n")
    else:
        show_pairwise(summary)
    for warning in judged.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return report_errors(records)


def report_errors(records: list[PairRecord]) -> int:
    """Items that could not be judged are named on stderr; the status is then 1."""
    failed = [r for r in records if r.error is not None]
    for record in failed:
        print(f"error: item {record.id!r}: {record.error}", file=sys.stderr)
    return 1 if failed else 0
