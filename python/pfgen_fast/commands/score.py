"""`score`: JSON lines with `question` and `answer` in, the same objects with `scores` out."""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from typing import IO, Any

from pfgen_fast.data import resolve_data_dir
from pfgen_fast.errors import InputError
from pfgen_fast.scorer import QuestionScorer, ReferenceData

# Lines are scored in blocks: memory stays bounded and output starts before the input ends.
BLOCK_LINES = 50_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", nargs="?", help="JSON lines file (default: standard input)")
    parser.add_argument("--data", help="directory of Qxx.json (default: ./data or the cache)")
    parser.add_argument(
        "--skip-invalid",
        action="store_true",
        help="report unusable lines on stderr and go on (they are not written out)",
    )


def parse_line(raw: bytes, where: str) -> dict[str, Any]:
    """One input object; errors name the line and the field."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{where}: invalid UTF-8 at byte {error.start}") from None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{where}: invalid JSON: {error.msg} (column {error.colno})") from None
    if not isinstance(record, dict):
        raise InputError(f"{where}: expected a JSON object")
    for field in ("question", "answer"):
        if field not in record:
            raise InputError(f"{where}: missing field '{field}'")
        if not isinstance(record[field], str):
            raise InputError(f"{where}: field '{field}' must be a string")
    return record


class BlockScorer:
    """Scores blocks of records, building each question's tables the first time it occurs."""

    def __init__(self, references: ReferenceData) -> None:
        self.references = references
        self.scorers: dict[str, QuestionScorer] = {}

    def scorer_for(self, question_text: str) -> QuestionScorer:
        question = self.references.by_text(question_text)
        scorer = self.scorers.get(question.question_id)
        if scorer is None:
            scorer = self.scorers[question.question_id] = QuestionScorer(question)
        return scorer

    def score(self, records: list[dict[str, Any]]) -> None:
        """Adds `scores` to every record (all questions already known)."""
        by_question: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for record in records:
            by_question[record["question"]].append(record)
        for question_text, group in by_question.items():
            scores = self.scorer_for(question_text).score([r["answer"] for r in group])
            for record, record_scores in zip(group, scores):
                record["scores"] = record_scores


def score_stream(
    lines: IO[bytes], name: str, block_scorer: BlockScorer, skip_invalid: bool, out: IO[str]
) -> int:
    """Scores every line; returns the number of skipped lines (raises on the first bad line
    unless skip_invalid)."""
    skipped = 0
    block: list[dict[str, Any]] = []
    known = block_scorer.references

    def flush() -> None:
        block_scorer.score(block)
        out.writelines(json.dumps(record, ensure_ascii=False) + "\n" for record in block)
        block.clear()

    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        where = f"{name}:{number}"
        try:
            record = parse_line(raw, where)
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
        block.append(record)
        if len(block) >= BLOCK_LINES:
            flush()
    if block:
        flush()
    return skipped


def run(args: argparse.Namespace) -> int:
    references = ReferenceData.load(resolve_data_dir(args.data))
    block_scorer = BlockScorer(references)
    if args.file is None:
        skipped = score_stream(sys.stdin.buffer, "<stdin>", block_scorer, args.skip_invalid, sys.stdout)
    else:
        try:
            with open(args.file, "rb") as lines:
                skipped = score_stream(lines, args.file, block_scorer, args.skip_invalid, sys.stdout)
        except OSError as error:
            raise InputError(f"{args.file}: cannot read: {error.strerror or error}") from None
    if skipped:
        print(f"{skipped} invalid line(s) skipped", file=sys.stderr)
    return 0
