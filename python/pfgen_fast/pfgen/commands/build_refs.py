"""`build-refs`: reference answer sets (Qxx.json) from generated candidates, with a report."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pfgen_fast.common.cli_args import fraction, int_from_to, positive_int
from pfgen_fast.common.errors import InputError
from pfgen_fast.common.files import write_atomically
from pfgen_fast.common.tables import print_table
from pfgen_fast.pfgen.construct.build import (
    BuildOutcome,
    BuildSettings,
    build_reference_sets,
    check_writable,
    write_question_files,
)
from pfgen_fast.pfgen.construct.rules import DEFAULT_STYLE_RULES, load_ng_rules, load_style_rules
from pfgen_fast.pfgen.data import load_questions

REPORT_NAME = "build-refs-report.json"
# The steps' table: piped, these columns; on a terminal, short labels.
STEP_COLUMNS = [
    "question",
    "source",
    "step",
    "in",
    "out",
    "length_mean",
    "length_sd",
    "seconds",
    "peak_memory_mb",
]
STEP_LABELS = ["question", "source", "step", "in", "out", "len", "sd", "s", "MB"]
STEP_CAPTION = "len, sd: mean and standard deviation of the lengths; s: seconds; MB: peak memory"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--meta", required=True, help="directory of Qxx.json without answers")
    parser.add_argument(
        "--candidates",
        required=True,
        nargs="+",
        type=Path,
        help="candidate files: JSON lines (.jsonl, .jsonl.xz) or .parquet with question, answer "
        "and optional source",
    )
    parser.add_argument("--out", required=True, type=Path, help="directory for the Qxx.json")
    parser.add_argument("--source", default="X", help="source of candidates without one (X)")
    parser.add_argument(
        "--style-rules",
        type=Path,
        default=DEFAULT_STYLE_RULES,
        help="style normalisation rules (default: the shipped 公用文 rules)",
    )
    parser.add_argument("--no-style", action="store_true", help="skip style normalisation")
    parser.add_argument("--ng-rules", type=Path, help="NG patterns per question id (JSON)")
    parser.add_argument(
        "--ngram-n", type=int_from_to(1, 5), default=5, help="n of the rare n-gram filter (5)"
    )
    parser.add_argument(
        "--min-count",
        type=positive_int,
        default=2,
        help="drop candidates with an n-gram found in fewer candidates than this (2)",
    )
    parser.add_argument("--no-rare-filter", action="store_true", help="skip the rare n-grams")
    parser.add_argument(
        "--target-length", type=positive_int, default=100, help="length to select (100)"
    )
    parser.add_argument(
        "--pool-size", type=positive_int, default=30_000, help="candidates kept by length (30000)"
    )
    parser.add_argument(
        "--no-length-selection", action="store_true", help="keep every survivor in the pool"
    )
    parser.add_argument("--size", type=positive_int, default=1_000, help="answers per set (1000)")
    parser.add_argument(
        "--no-representativeness",
        action="store_true",
        help="choose evenly over the pool in input order instead",
    )
    parser.add_argument(
        "--typical-fraction",
        type=fraction,
        default=0.5,
        help="share of the pool, most representative first, to choose from (0.5)",
    )
    parser.add_argument(
        "--memory-budget-mb",
        type=positive_int,
        default=1024,
        help="n-gram tables and candidate texts held in memory before spilling (1024)",
    )
    parser.add_argument("--spill-dir", type=Path, help="where spill files go (default: TMPDIR)")
    parser.add_argument("--report", type=Path, help=f"JSON report (default: OUT/{REPORT_NAME})")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def settings_from(args: argparse.Namespace, question_ids: set[str]) -> BuildSettings:
    return BuildSettings(
        style_rules=None if args.no_style else load_style_rules(args.style_rules),
        ng_rules={} if args.ng_rules is None else load_ng_rules(args.ng_rules, question_ids),
        ngram_n=args.ngram_n,
        min_count=None if args.no_rare_filter else args.min_count,
        target_length=args.target_length,
        pool_size=None if args.no_length_selection else args.pool_size,
        final_size=args.size,
        representativeness=not args.no_representativeness,
        typical_fraction=args.typical_fraction,
        memory_budget=args.memory_budget_mb << 20,
        spill_dir=args.spill_dir,
    )


def report_json(args: argparse.Namespace, outcome: BuildOutcome) -> dict[str, Any]:
    settings = {
        key: str(value) if isinstance(value, Path) else value
        for key, value in vars(args).items()
        if key not in ("json", "report", "_module")
    }
    settings["candidates"] = [str(path) for path in args.candidates]
    return {
        "settings": settings,
        "sets": outcome.sets,
        "steps": outcome.steps,
        "skipped_lines": outcome.problems.count,
        "problems": outcome.problems.messages,
    }


def print_steps(outcome: BuildOutcome) -> None:
    rows = [
        [
            row["question_id"],
            row["source"],
            row["step"],
            row["in"],
            row["out"],
            "" if row["length_mean"] is None else f"{row['length_mean']:.1f}",
            "" if row["length_sd"] is None else f"{row['length_sd']:.1f}",
            f"{row['seconds']:.2f}",
            f"{row['peak_memory_mb']:.0f}",
        ]
        for row in outcome.steps
    ]
    print_table(
        "build-refs: reference-set construction",
        STEP_COLUMNS,
        rows,
        labels=STEP_LABELS,
        caption=STEP_CAPTION,
    )


def run(args: argparse.Namespace) -> int:
    questions = load_questions(args.meta, require_answers=False)
    settings = settings_from(args, set(questions))
    check_writable(args.out)
    if args.spill_dir is not None:
        check_writable(args.spill_dir)
    if len({q.question for q in questions.values()}) != len(questions):
        raise InputError(f"{args.meta}: two questions have the same text")
    outcome = build_reference_sets(questions, args.candidates, args.source, settings)
    for message in outcome.problems.messages:
        print(f"skipped {message}", file=sys.stderr)
    if outcome.problems.count > len(outcome.problems.messages):
        print(f"... {outcome.problems.count} unusable lines in all", file=sys.stderr)
    if not outcome.answers:
        raise InputError("no usable candidates: nothing written")
    write_question_files(args.out, questions, outcome.answers)
    for summary in outcome.sets:
        if summary["short"]:
            print(
                f"warning: {summary['question_id']}/{summary['source']}: only "
                f"{summary['answers']} answers after filtering (asked for {args.size})",
                file=sys.stderr,
            )
    report = report_json(args, outcome)
    report_path = args.report or args.out / REPORT_NAME
    write_atomically(report_path, json.dumps(report, ensure_ascii=False, indent=2).encode())
    if args.json:
        json.dump(report, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        print_steps(outcome)
    return 1 if outcome.problems.count else 0
