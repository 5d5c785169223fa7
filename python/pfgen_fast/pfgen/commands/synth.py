"""`synth`: synthetic candidate answers to one question, for benchmarks and tests."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pfgen_fast.common.cli_args import add_data_argument, integer, positive_int
from pfgen_fast.common.errors import InputError, PfgenError
from pfgen_fast.pfgen.construct.synth import synthetic_answers, write_candidates
from pfgen_fast.pfgen.data import DATA_DEFAULT, load_questions, resolve_data_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_data_argument(parser, DATA_DEFAULT)
    parser.add_argument("--question", required=True, help="question id, e.g. Q02")
    parser.add_argument("--count", required=True, type=positive_int, help="number of candidates")
    parser.add_argument("--seed", type=integer, default=0, help="random seed (0)")
    parser.add_argument(
        "--out", required=True, type=Path, help="output file: .jsonl, .jsonl.xz or .parquet"
    )


def run(args: argparse.Namespace) -> int:
    data_dir = resolve_data_dir(args.data)
    questions = load_questions(data_dir, {args.question})
    if args.question not in questions:
        raise InputError(f"{data_dir}: no question {args.question!r}")
    question = questions[args.question]
    chunks = synthetic_answers(question, args.count, args.seed)
    try:
        written = write_candidates(args.out, question, chunks)
    except OSError as error:
        raise PfgenError(f"{args.out}: cannot write: {error.strerror or error}") from None
    print(f"wrote {written:,} candidates to {args.out}", file=sys.stderr)
    return 0
