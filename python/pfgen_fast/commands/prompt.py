"""`prompt`: print the published task of every question for one trial, as JSON lines."""

from __future__ import annotations

import argparse
import json
import sys

from pfgen_fast.data import resolve_data_dir
from pfgen_fast.prompts import MODES, build_task, load_examples


def unescape(text: str) -> str:
    """Backslash escapes (\\n, \\t, ...) as the published runner reads its --prefix."""
    return text.encode("utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", help="directory holding questions.jsonl (default: ./data)")
    parser.add_argument("--mode", choices=MODES, required=True)
    parser.add_argument("--trial", type=int, required=True, help="trial number, from 1")
    parser.add_argument("--seed", default="", help="seed string of the run (default: empty)")
    parser.add_argument("--prefix", default="", help="text before every prompt; \\n etc. allowed")
    parser.add_argument("--num-examples", type=int, default=20, help="few-shot examples")


def run(args: argparse.Namespace) -> int:
    examples = load_examples(resolve_data_dir(args.data) / "questions.jsonl")
    prefix = unescape(args.prefix)
    for example in examples:
        task = build_task(
            examples, example.question, args.mode, args.trial, args.num_examples, prefix, args.seed
        )
        sys.stdout.write(json.dumps(task, ensure_ascii=False) + "\n")
    return 0
