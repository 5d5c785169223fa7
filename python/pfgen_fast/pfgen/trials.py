"""The trials files of a run folder, written and read here: `trial_NNN.jsonl` (one answer line
per question, written atomically once the trial is complete) and the `trials.jsonl.xz` they are
packed into (`trials.jsonl` also read). `generate` writes `question`, `answer`, `generated`
and `timestamp` on every line; `lm-eval-import` writes `question`, `answer` and `timestamp`.
The reader takes `question` and `answer` (strings) and `generated` (true or false) when a line
has it; other keys (a published runner's) are kept as they are.

Since pfgen-bench's PR #94 its runners write `"generated": true|false` on every line; an answer
they gave up on is a placeholder with `"generated": false` (docs/pfgen-upstream.md). A file's
lines all carry the mark or none does."""

from __future__ import annotations

import json
import lzma
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from pfgen_fast.common.errors import InputError, PfgenError
from pfgen_fast.common.files import write_atomically
from pfgen_fast.common.jsonl import line_problem, missing_field, not_an_object, wrong_type

if TYPE_CHECKING:
    from pfgen_fast.pfgen.data import Question
    from pfgen_fast.pfgen.scorer import ReferenceData


# --- writing -----------------------------------------------------------------------------

# The packed trials files `eval` reads, the compressed one first.
TRIALS_NAMES = ("trials.jsonl.xz", "trials.jsonl")
# The trial files of a run folder, all of which go into trials.jsonl.xz.
TRIAL_FILES = "trial_[0-9][0-9][0-9].jsonl"


def trial_path(run_dir: Path, trial: int) -> Path:
    return run_dir / f"trial_{trial:03d}.jsonl"


def write_file(path: Path, data: bytes) -> None:
    """Atomically (folders made as needed); a failure is an error naming the file."""
    try:
        write_atomically(path, data)
    except OSError as error:
        raise PfgenError(f"{path}: cannot write: {error.strerror or error}") from None


def trial_bytes(records: list[dict[str, Any]]) -> bytes:
    """A trial file's bytes: one JSON line per question, as the runners write them."""
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records).encode()


def write_trial(path: Path, records: list[dict[str, Any]]) -> None:
    """`trial_bytes`, written to a temporary file and renamed into place; an existing trial file
    is never rewritten."""
    if path.exists():
        return
    write_file(path, trial_bytes(records))


def pack_trials(run_dir: Path) -> Path:
    """trials.jsonl.xz: every trial file's lines, sorted bytewise (`LC_ALL=C sort`), xz -9."""
    lines: list[bytes] = []
    for path in sorted(run_dir.glob(TRIAL_FILES)):
        lines.extend(line for line in path.read_bytes().splitlines() if line.strip())
    lines.sort()
    target = run_dir / TRIALS_NAMES[0]
    write_file(target, lzma.compress(b"".join(line + b"\n" for line in lines), preset=9))
    return target


# --- reading -----------------------------------------------------------------------------


def trials_file(run_dir: Path) -> Path | None:
    """The run's trials file, the compressed one first; None when it has neither."""
    return next((run_dir / n for n in TRIALS_NAMES if (run_dir / n).is_file()), None)


@dataclass(frozen=True)
class Trials:
    """The answers of one trials file and the line number of each; `marked`: its lines carry
    the runners' `generated` mark."""

    path: Path
    records: list[dict[str, Any]]
    line_numbers: list[int]
    marked: bool = False


def read_raw(path: Path) -> bytes:
    """A trials file's bytes as stored (compressed or not: its hash is the run's input hash)."""
    try:
        return path.read_bytes()
    except OSError as error:
        raise InputError(f"{path}: cannot read: {error.strerror or error}") from None


def read_trials(path: Path, raw: bytes) -> Trials:
    """Parses and checks every line of a trials file's bytes (decompressed if .xz); errors
    name the file, the line and the field."""
    if not raw:
        raise InputError(f"{path}: no answers (the file is empty)")
    text = raw
    if path.name.endswith(".xz"):
        try:
            text = lzma.decompress(raw)
        except lzma.LZMAError as error:
            raise InputError(f"{path}: not a valid .xz file: {error}") from None
    records = []
    line_numbers = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        records.append(parse_answer_line(line, f"{path}:{number}"))
        line_numbers.append(number)
    if not records:
        raise InputError(f"{path}: no answers (the file is empty)")
    return Trials(path, records, line_numbers, marked_run(path, records, line_numbers))


def marked_run(path: Path, records: list[dict[str, Any]], line_numbers: list[int]) -> bool:
    """Whether the lines carry `generated` (all of them, as its first one does); an InputError
    naming the first line that differs from the first."""
    marked = "generated" in records[0]
    for record, number in zip(records, line_numbers, strict=True):
        if ("generated" in record) != marked:
            first = line_numbers[0]
            problem = (
                f"missing, but line {first} has it"
                if marked
                else f"present, but line {first} lacks it"
            )
            raise InputError(
                f'{path}:{number}: field "generated": {problem} '
                "(a run's lines all carry it or none does)"
            )
    return marked


def given_up(record: dict[str, Any]) -> bool:
    """Whether the line is an answer the runner gave up on (`"generated": false`)."""
    return record.get("generated") is False


def parse_answer_line(line: bytes, where: str) -> dict[str, Any]:
    """One JSON object with string fields `question` and `answer`, and `generated` true or
    false if it has one."""
    try:
        record = orjson.loads(line)  # checks UTF-8 too
    except orjson.JSONDecodeError as error:
        raise InputError(f"{where}: {line_problem(line, error)}") from None
    if (
        type(record) is dict
        and type(record.get("question")) is str
        and type(record.get("answer")) is str
        and type(record.get("generated", True)) is bool
    ):
        return record
    if not isinstance(record, dict):
        raise InputError(f"{where}: {not_an_object(record)}")
    for field in ("question", "answer"):
        if field not in record:
            raise InputError(f"{where}: {missing_field(field)}")
        if not isinstance(record[field], str):
            raise InputError(f"{where}: {wrong_type(field, 'a string', record[field])}")
    raise InputError(f"{where}: {wrong_type('generated', 'true or false', record['generated'])}")


def unknown_question(where: str, text: str) -> InputError:
    """The error of a line whose question is not one of the data's."""
    return InputError(f'{where}: field "question": not a question of the data: {text[:40]!r}')


def question_of(references: ReferenceData, text: str, where: str) -> Question:
    """The data's question with this text; an InputError naming `where` otherwise."""
    try:
        return references.by_text(text)
    except KeyError:
        raise unknown_question(where, text) from None


def records_by_question(
    trials: Trials, references: ReferenceData, leave_out_others: bool = False
) -> dict[str, list[dict[str, Any]]]:
    """The trials' records by question id, each question's in file order; an InputError naming
    the first line whose question is not one of the data's, unless `leave_out_others` (data
    holding only some of the benchmark's questions): such lines are then left out."""
    records: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line, record in zip(trials.line_numbers, trials.records, strict=True):
        try:
            question = references.by_text(record["question"])
        except KeyError:
            if leave_out_others:
                continue
            raise unknown_question(f"{trials.path}:{line}", record["question"]) from None
        records[question.question_id].append(record)
    return dict(records)
