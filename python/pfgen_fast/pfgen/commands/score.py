"""`score`: JSON lines with `question` and `answer` in, the same objects with `scores` out; a
line marked `"generated": false` (an answer the runner gave up on) goes out as it came in."""

from __future__ import annotations

import argparse
import io
import lzma
import select
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol, cast

import numpy as np
import orjson

from pfgen_fast._core import pfgen as core_pfgen
from pfgen_fast.common.cli_args import add_data_argument
from pfgen_fast.common.errors import InputError
from pfgen_fast.pfgen.data import DATA_DEFAULT, Question, resolve_data_dir
from pfgen_fast.pfgen.exactness import add_legacy_sum_argument
from pfgen_fast.pfgen.scorer import QuestionScorer, ReferenceData, build_scorers
from pfgen_fast.pfgen.trials import given_up, parse_answer_line, question_of, unknown_question

# Input is read and scored in blocks of whole lines of at most this many bytes (or one longer
# line): memory stays bounded and output starts before the input ends.
BLOCK_BYTES = 32 << 20
# Input from a pipe or a terminal is scored as it comes: a block ends when its writer pauses
# for PAUSE_SECONDS, or BLOCK_SECONDS after the block began.
PAUSE_SECONDS = 0.1
BLOCK_SECONDS = 1.0
# A block's output is written in pieces of this size: the kernel takes pieces of a megabyte
# more quickly than one write of a whole block (docs/performance.md).
WRITE_BYTES = 1 << 20
# The first bytes of an .xz file.
XZ_MAGIC = b"\xfd7zXZ\x00"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file", nargs="?", help="JSON lines file, .xz-compressed or not (default: standard input)"
    )
    add_data_argument(parser, DATA_DEFAULT)
    parser.add_argument(
        "--skip-invalid",
        action="store_true",
        help="report unusable lines on stderr and go on (they are not written out; the exit "
        "status is still 1); without it, the lines before the first unusable one are written. "
        'A line with "generated": false (an answer the runner gave up on) is written back '
        "unscored, and counted on stderr",
    )
    add_legacy_sum_argument(parser)


class ByteStream(Protocol):
    """What `score` reads: a file, a pipe or an .xz decompressor, chunk by chunk as it comes."""

    def read1(self, size: int = -1, /) -> bytes: ...

    def fileno(self) -> int: ...


def read_blocks(stream: ByteStream) -> Iterator[bytes]:
    """The stream in blocks of whole lines (the last one may lack its newline)."""
    parts: list[bytes | memoryview] = []
    size = 0
    began = time.monotonic()
    # read1: what has arrived (at least a byte), all BLOCK_BYTES from a file.
    while chunk := stream.read1(BLOCK_BYTES):
        parts.append(chunk)
        size += len(chunk)
        if size < BLOCK_BYTES and more_input_soon(stream, began):
            continue
        # The block ends at the last newline of this chunk (lines written in one piece).
        newline = chunk.rfind(b"\n") + 1
        if newline:
            parts[-1] = memoryview(chunk)[:newline]
            yield b"".join(parts)
            parts = [chunk[newline:]] if newline < len(chunk) else []
            size = len(chunk) - newline
            began = time.monotonic()
    if parts:
        yield b"".join(parts)


def more_input_soon(stream: ByteStream, began: float) -> bool:
    """Whether more of the stream is ready, or comes within PAUSE_SECONDS and BLOCK_SECONDS
    after `began` (a file is always ready)."""
    wait = min(PAUSE_SECONDS, began + BLOCK_SECONDS - time.monotonic())
    if wait <= 0:
        return False
    try:
        ready, _, _ = select.select([stream], [], [], wait)
    except (OSError, ValueError):  # not selectable (pipes on Windows): whole blocks
        return True
    return bool(ready)


@dataclass
class ReadBlock:
    """A block's lines: those the core read, by question (`questions`: index in
    `lines.questions` -> question), and the others read by `parse_answer_line`, by question id
    (`others`: line index, line, object), but for those marked `"generated": false`
    (`unscored`: line index, line); `problems`: the unusable lines, in line order, and
    `problem_lines` their indexes."""

    lines: core_pfgen.AnswerLines
    questions: dict[int, Question] = field(default_factory=dict)
    others: dict[str, list[tuple[int, bytes, dict[str, Any]]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    unscored: list[tuple[int, bytes]] = field(default_factory=list)
    problems: list[InputError] = field(default_factory=list)
    problem_lines: list[int] = field(default_factory=list)


class BlockScorer:
    """Reads and scores blocks of lines, building each question's tables the first time it
    occurs; counts the lines written back unscored."""

    def __init__(self, references: ReferenceData, legacy_sum: bool = False) -> None:
        self.references = references
        self.legacy_sum = legacy_sum
        self.scorers: dict[str, QuestionScorer] = {}
        self.unscored = 0

    def read(self, block: bytes, name: str, first_line: int) -> ReadBlock:
        """The lines of a block whose first line has the number `first_line`."""
        read = ReadBlock(core_pfgen.AnswerLines(block))
        question_of_line = read.lines.question_of_line
        problems: list[tuple[int, InputError]] = []
        for index, text in enumerate(read.lines.questions):
            try:
                read.questions[index] = self.references.by_text(text)
            except KeyError:
                for line in np.flatnonzero(question_of_line == index).tolist():
                    problems.append((line, unknown_question(f"{name}:{first_line + line}", text)))
        for line in np.flatnonzero(question_of_line == core_pfgen.OTHER_LINE).tolist():
            raw = read.lines.line(line)
            where = f"{name}:{first_line + line}"
            try:
                record = parse_answer_line(raw, where)
                question = question_of(self.references, record["question"], where)
            except InputError as error:
                problems.append((line, error))
                continue
            if given_up(record):
                read.unscored.append((line, raw))
            else:
                read.others[question.question_id].append((line, raw, record))
        problems.sort(key=lambda problem: problem[0])
        read.problems = [error for _, error in problems]
        read.problem_lines = [line for line, _ in problems]
        return read

    def score(self, read: ReadBlock) -> bytes:
        """The block's output: every usable line, in order, with `scores` added."""
        question_ids = {question.question_id for question in read.questions.values()}
        question_ids.update(read.others)
        missing = [self.references.questions[q] for q in sorted(question_ids - self.scorers.keys())]
        self.scorers.update(build_scorers(missing))
        for index, question in read.questions.items():
            self.scorers[question.question_id].score_lines(read.lines, index, self.legacy_sum)
        outputs = [(line, raw.rstrip() + b"\n") for line, raw in read.unscored]
        self.unscored += len(read.unscored)
        for question_id, others in read.others.items():
            records = self.scorers[question_id].score_json(
                [record["answer"] for *_, record in others], self.legacy_sum
            )
            for (line, raw, record), scores_json in zip(others, records, strict=True):
                if "scores" in record:
                    record["scores"] = orjson.Fragment(scores_json)
                    output = orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
                else:
                    # The input object unchanged, with "scores" appended before its final "}".
                    output = raw.rstrip()[:-1] + b', "scores": ' + scores_json + b"}\n"
                outputs.append((line, output))
        return read.lines.write(outputs)


def score_stream(
    lines: ByteStream,
    name: str,
    block_scorer: BlockScorer,
    skip_invalid: bool,
    out: IO[bytes],
) -> int:
    """Scores every line; returns the number of skipped lines. Without skip_invalid, the lines
    before the first bad one are written (output is a stream: earlier blocks are out already),
    then its error is raised."""
    skipped = 0
    first_line = 1
    for block in read_blocks(lines):
        read = block_scorer.read(block, name, first_line)
        if read.problems and not skip_invalid:
            before = block[: line_offset(block, read.problem_lines[0])]
            if before:
                write_output(block_scorer.score(block_scorer.read(before, name, first_line)), out)
            raise read.problems[0]
        for problem in read.problems:
            print(f"skipped {problem}", file=sys.stderr)
        skipped += len(read.problems)
        write_output(block_scorer.score(read), out)
        first_line += len(read.lines.question_of_line)
    return skipped


def line_offset(block: bytes, line: int) -> int:
    """Where line `line` (0-based) of the block starts."""
    offset = 0
    for _ in range(line):
        offset = block.index(b"\n", offset) + 1
    return offset


def write_output(output: bytes, out: IO[bytes]) -> None:
    view = memoryview(output)
    for start in range(0, len(view), WRITE_BYTES):
        out.write(view[start : start + WRITE_BYTES])
    out.flush()  # for a reader at the end of a pipe


def score_file(name: str, block_scorer: BlockScorer, skip_invalid: bool) -> int:
    """`score_stream` over a file, decompressed when its name ends in .xz."""
    try:
        with open(name, "rb") as raw:
            if Path(name).suffix != ".xz":
                return score_stream(raw, name, block_scorer, skip_invalid, sys.stdout.buffer)
            with lzma.open(raw) as lines:
                return score_stream(lines, name, block_scorer, skip_invalid, sys.stdout.buffer)
    except (lzma.LZMAError, EOFError) as error:
        raise InputError(f"{name}: not a valid .xz file: {error}") from None
    except OSError as error:
        raise InputError(f"{name}: cannot read: {error.strerror or error}") from None


def run(args: argparse.Namespace) -> int:
    references = ReferenceData.load(resolve_data_dir(args.data))
    block_scorer = BlockScorer(references, args.legacy_sum)
    if args.file is not None:
        skipped = score_file(args.file, block_scorer, args.skip_invalid)
    else:
        # Python opens standard input's bytes as a BufferedReader (typed as BinaryIO).
        stdin = cast(io.BufferedReader, sys.stdin.buffer)
        if stdin.peek(len(XZ_MAGIC)).startswith(XZ_MAGIC):
            raise InputError(
                "<stdin>: compressed with xz: give the file's name, or decompress it (xz -dc)"
            )
        skipped = score_stream(stdin, "<stdin>", block_scorer, args.skip_invalid, sys.stdout.buffer)
    if block_scorer.unscored:
        print(
            f'{block_scorer.unscored} line(s) with "generated": false written back unscored',
            file=sys.stderr,
        )
    if skipped:
        print(f"{skipped} invalid line(s) skipped", file=sys.stderr)
        return 1
    return 0
