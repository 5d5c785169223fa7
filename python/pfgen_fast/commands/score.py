"""`score`: JSON lines with `question` and `answer` in, the same objects with `scores` out."""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from typing import IO, Any

import orjson

from pfgen_fast.data import resolve_data_dir
from pfgen_fast.errors import InputError
from pfgen_fast.scorer import QuestionScorer, ReferenceData, build_scorers
from pfgen_fast.trials import parse_answer_line

# Lines are scored in blocks: memory stays bounded and output starts before the input ends.
BLOCK_LINES = 200_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", nargs="?", help="JSON lines file (default: standard input)")
    parser.add_argument("--data", help="directory of Qxx.json (default: ./data or the cache)")
    parser.add_argument(
        "--skip-invalid",
        action="store_true",
        help="report unusable lines on stderr and go on (they are not written out)",
    )


class BlockScorer:
    """Scores blocks of lines, building each question's tables the first time it occurs."""

    def __init__(self, references: ReferenceData) -> None:
        self.references = references
        self.scorers: dict[str, QuestionScorer] = {}

    def score(self, block: list[tuple[bytes, dict[str, Any]]]) -> list[bytes]:
        """The output line of every (input line, parsed object), in input order."""
        by_question: dict[str, list[int]] = defaultdict(list)
        for index, (_, record) in enumerate(block):
            by_question[self.references.by_text(record["question"]).question_id].append(index)
        missing = [self.references.questions[q] for q in by_question if q not in self.scorers]
        self.scorers.update(build_scorers(missing))
        output: list[bytes] = [b""] * len(block)
        for question_id, indices in by_question.items():
            scores = self.scorers[question_id].score_json([block[i][1]["answer"] for i in indices])
            for index, scores_json in zip(indices, scores, strict=True):
                raw, record = block[index]
                if "scores" in record:
                    record["scores"] = orjson.Fragment(scores_json)
                    output[index] = orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
                else:
                    # The input object unchanged, with "scores" appended before its final "}".
                    output[index] = raw.rstrip()[:-1] + b', "scores": ' + scores_json + b"}\n"
        return output


def score_stream(
    lines: IO[bytes], name: str, block_scorer: BlockScorer, skip_invalid: bool, out: IO[bytes]
) -> int:
    """Scores every line; returns the number of skipped lines (raises on the first bad line
    unless skip_invalid)."""
    skipped = 0
    block: list[tuple[bytes, dict[str, Any]]] = []
    known = block_scorer.references
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        where = f"{name}:{number}"
        try:
            record = parse_answer_line(raw, where)
            try:
                known.by_text(record["question"])
            except KeyError:
                raise InputError(
                    f"{where}: field 'question': not a question of the data: "
                    f"{record['question'][:40]!r}"
                ) from None
        except InputError as error:
            if not skip_invalid:
                raise
            print(f"skipped {error}", file=sys.stderr)
            skipped += 1
            continue
        block.append((raw, record))
        if len(block) >= BLOCK_LINES:
            out.writelines(block_scorer.score(block))
            block.clear()
    if block:
        out.writelines(block_scorer.score(block))
    return skipped


def run(args: argparse.Namespace) -> int:
    references = ReferenceData.load(resolve_data_dir(args.data))
    block_scorer = BlockScorer(references)
    if args.file is None:
        skipped = score_stream(
            sys.stdin.buffer, "<stdin>", block_scorer, args.skip_invalid, sys.stdout.buffer
        )
    else:
        try:
            with open(args.file, "rb") as lines:
                skipped = score_stream(
                    lines, args.file, block_scorer, args.skip_invalid, sys.stdout.buffer
                )
        except OSError as error:
            raise InputError(f"{args.file}: cannot read: {error.strerror or error}") from None
    if skipped:
        print(f"{skipped} invalid line(s) skipped", file=sys.stderr)
    return 0
