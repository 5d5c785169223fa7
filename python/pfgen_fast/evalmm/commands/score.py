"""`mm score`: a JSON lines file scored with one metric."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

from pfgen_fast.common.files import write_atomically
from pfgen_fast.common.jsonl import dumps_line
from pfgen_fast.common.llm_options import add_strip_reasoning_argument
from pfgen_fast.common.reasoning import strip_reasoning
from pfgen_fast.evalmm.commands.scoring_options import (
    add_scoring_options,
    open_judge,
    options_from_args,
    report_judge,
)
from pfgen_fast.evalmm.metrics.base import JudgeErrors
from pfgen_fast.evalmm.metrics.scorers import SCORERS, fields_help, get_scorer
from pfgen_fast.evalmm.metrics.scoring import read_items, record_judge_failures, score_items


def add_arguments(score: argparse.ArgumentParser) -> None:
    score.epilog = fields_help()
    score.formatter_class = argparse.RawDescriptionHelpFormatter
    score.add_argument(
        "file", type=Path, metavar="FILE", help="JSON lines: ref, pred and the metric's fields"
    )
    score.add_argument(
        "--metric",
        required=True,
        choices=sorted(SCORERS),
        metavar="NAME",
        help=f"one of: {', '.join(sorted(SCORERS))}",
    )
    score.add_argument("--json", action="store_true", help="print the aggregate as JSON")
    score.add_argument("-o", "--out", type=Path, help="write the scored lines here")
    score.add_argument(
        "--judge-log",
        type=Path,
        help="judge metrics: where the raw replies go, one JSON line each "
        "(default: FILE's name with .judge-replies.jsonl)",
    )
    add_strip_reasoning_argument(score)
    add_scoring_options(score)


def run(args: argparse.Namespace) -> int:
    """Scores the file; a line the judge gave no verdict for gets its reason in
    `judge_error` (exit 1)."""
    scorer = get_scorer(args.metric)
    items = read_items(args.file, scorer)
    if args.strip_reasoning:
        for line in items.lines:
            line["pred"] = strip_reasoning(line["pred"])
    log_path = args.judge_log or args.file.with_name(f"{args.file.stem}.judge-replies.jsonl")
    judge = open_judge(args, [args.metric], log_path)
    try:
        options = options_from_args(args, judge)
        result = score_items(scorer, items.refs, items.preds, items.lines, options, items.wheres)
    finally:
        if judge is not None:
            judge.close()
    scored = [
        {**line, "score": score} for line, score in zip(items.lines, result.scores, strict=True)
    ]
    unjudged = record_judge_failures(args.metric, result.judge_failures, scored)
    for line in scored:
        if "judge_errors" in line:
            line["judge_error"] = line.pop("judge_errors")[args.metric]
    status = report_judge(judge, JudgeErrors(args.judge_errors), log_path, unjudged)
    lines = b"".join(dumps_line(line) for line in scored)
    if args.out is not None:
        write_atomically(args.out, lines)
    if args.json:
        print_json(result.aggregate)
    elif args.out is None:
        sys.stdout.buffer.write(lines)
        sys.stdout.buffer.flush()
    return status


def print_json(value: Any) -> None:
    sys.stdout.buffer.write(orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n")
    sys.stdout.buffer.flush()
