"""`prompt`: print the published task of every question for one trial, as JSON lines."""

from __future__ import annotations

import argparse
import json
import sys

from pfgen_fast.common.cli_args import add_data_argument, non_negative_int, positive_int
from pfgen_fast.pfgen.data import DATA_DEFAULT, resolve_data_dir
from pfgen_fast.pfgen.prompts import MODES, build_task, load_examples, unescape_prefix


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_data_argument(parser, DATA_DEFAULT)
    parser.add_argument("--mode", choices=MODES, required=True)
    parser.add_argument("--trial", type=positive_int, required=True, help="trial number, from 1")
    parser.add_argument("--seed", default="", help="seed string of the run (default: empty)")
    parser.add_argument("--prefix", default="", help="text before every prompt; \\n etc. allowed")
    parser.add_argument(
        "--num-examples", type=non_negative_int, default=20, help="few-shot examples"
    )


def run(args: argparse.Namespace) -> int:
    prefix = unescape_prefix(args.prefix)
    examples = load_examples(resolve_data_dir(args.data) / "questions.jsonl")
    for example in examples:
        task = build_task(
            examples, example.question, args.mode, args.trial, args.num_examples, prefix, args.seed
        )
        sys.stdout.write(json.dumps(task, ensure_ascii=False) + "\n")
    return 0
