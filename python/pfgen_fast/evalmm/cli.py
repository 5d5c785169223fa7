"""`python -m pfgen_fast mm ACTION`: llm-jp-eval-mm's scorers — score a JSON lines file with one
metric, re-score a result directory of its `evaluate` (with a leaderboard), fetch and verify
its judge prompt files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.files import write_atomically
from pfgen_fast.common.jsonl import dumps_line
from pfgen_fast.common.llm import add_llm_arguments
from pfgen_fast.evalmm.scorers import SCORERS, Options, get_scorer
from pfgen_fast.evalmm.scoring import read_items, score_items

DESCRIPTION = "llm-jp-eval-mm's scorers (Japanese vision-language tasks), exact and fast"
JUDGE_ERRORS = ("exclude", "zero")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    score = actions.add_parser(
        "score", help="score a JSON lines file (ref, pred, document fields) with one metric"
    )
    score.add_argument("file", type=Path, help="JSON lines: ref, pred and the metric's fields")
    score.add_argument("--metric", required=True, choices=sorted(SCORERS), metavar="NAME")
    score.add_argument("--json", action="store_true", help="print the aggregate as JSON")
    score.add_argument("-o", "--output", type=Path, help="write the scored lines here")
    add_scoring_options(score)


def add_scoring_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--neologdn",
        action="store_true",
        help="ROUGE-L normalises with neologdn (as llm-jp-eval-mm does where it is installed) "
        "instead of NFKC",
    )
    parser.add_argument(
        "--fix-quirks",
        action="store_true",
        help="JMMMU: the indicator list as meant (no fused entry, not growing between items)",
    )
    parser.add_argument(
        "--judge-errors",
        choices=JUDGE_ERRORS,
        default="exclude",
        help="a failed judge call: excluded from the means and counted (default), or scored "
        "as llm-jp-eval-mm does (0, heron -1)",
    )
    add_llm_arguments(parser)
    for action in parser._actions:
        if action.dest in ("base_url", "judge_model"):
            action.required = False
            action.help = f"{action.help} (judge metrics only)"


def options_from_args(args: argparse.Namespace) -> Options:
    return Options(
        use_neologdn=args.neologdn, fix_quirks=args.fix_quirks, judge_errors=args.judge_errors
    )


def run(args: argparse.Namespace) -> int:
    if args.action == "score":
        return run_score(args)
    raise PfgenError(f"unknown action {args.action!r}")


def run_score(args: argparse.Namespace) -> int:
    scorer = get_scorer(args.metric)
    items = read_items(args.file, scorer)
    options = options_from_args(args)
    scores, aggregate = score_items(scorer, items.refs, items.preds, items.lines, options)
    lines = b"".join(
        dumps_line({**line, "score": score})
        for line, score in zip(items.lines, scores, strict=True)
    )
    if args.output is not None:
        write_atomically(args.output, lines)
    if args.json:
        print_json(aggregate)
    elif args.output is None:
        sys.stdout.buffer.write(lines)
        sys.stdout.buffer.flush()
    return 0


def print_json(value: Any) -> None:
    sys.stdout.buffer.write(orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n")
    sys.stdout.buffer.flush()
