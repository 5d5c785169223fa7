"""Reading candidate answers (JSON lines, optionally .xz, or Parquet) in batches grouped by
(question id, source), with every unusable line or row counted and the first few named."""

from __future__ import annotations

import lzma
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from pfgen_fast._core import pfgen as core_pfgen
from pfgen_fast.common.errors import InputError, PfgenError
from pfgen_fast.pfgen.data import Question

# JSON lines are read in blocks of about this many bytes, Parquet in batches of rows.
BLOCK_BYTES = 32 << 20
BATCH_ROWS = 100_000
CANDIDATE_SCHEMA = {"question": pl.String, "answer": pl.String, "source": pl.String}
# Problems beyond this many are counted, not listed.
MAX_LISTED_PROBLEMS = 20


class Problems:
    """Unusable input lines: counted, the first few kept for the user."""

    def __init__(self) -> None:
        self.count = 0
        self.messages: list[str] = []

    def add(self, message: str) -> None:
        self.count += 1
        if len(self.messages) < MAX_LISTED_PROBLEMS:
            self.messages.append(message)

    def add_rows(self, rows: np.ndarray, message: Callable[[int], str]) -> None:
        """Problems at `rows`, each worded by `message(row)` (only the listed ones are)."""
        room = max(MAX_LISTED_PROBLEMS - len(self.messages), 0)
        self.messages.extend(message(int(row)) for row in rows[:room])
        self.count += len(rows)


GroupKey = tuple[str, str]  # (question_id, source)
Batch = dict[GroupKey, pl.Series]


@dataclass(frozen=True)
class Locations:
    """Where the rows of a batch come from, for messages: `path:line` for JSON lines,
    `path: row n` for Parquet."""

    path: Path
    numbers: np.ndarray
    lines: bool

    def __call__(self, row: int) -> str:
        number = int(self.numbers[row])
        return f"{self.path}:{number}" if self.lines else f"{self.path}: row {number}"


def checked_blocks(path: Path, problems: Problems) -> Iterator[tuple[bytes, np.ndarray]]:
    """The usable lines of a JSON lines file, in blocks of about BLOCK_BYTES joined by line
    breaks, with their line numbers; unusable lines go to `problems`. One buffer is reused:
    a line longer than it grows it."""
    opener = lzma.open if path.name.endswith(".xz") else open
    buffer = bytearray(BLOCK_BYTES)
    filled = 0
    first_line = 1
    try:
        with opener(path, "rb") as handle:
            while True:
                if filled == len(buffer):
                    buffer.extend(bytes(len(buffer)))
                with memoryview(buffer) as view:
                    read = handle.readinto(view[filled:])
                filled += read
                end = filled if read == 0 else buffer.rfind(b"\n", 0, filled) + 1
                if end > 0:
                    checked = core_pfgen.check_candidate_lines(buffer, end)
                    for index, message in checked.problems:
                        problems.add(f"{path}:{first_line + index}: {message}")
                    if len(checked.line_indices):
                        yield checked.usable, first_line + checked.line_indices.astype(np.int64)
                    buffer[: filled - end] = buffer[end:filled]
                    filled -= end
                    first_line += checked.num_lines
                if read == 0:
                    return
    except (lzma.LZMAError, EOFError) as error:
        raise InputError(f"{path}: not a valid .xz file: {error}") from None


def jsonl_batches(
    path: Path, default_source: str, questions: dict[str, Question], problems: Problems
) -> Iterator[Batch]:
    """Batches of a JSON lines file's candidates, grouped by (question id, source)."""
    for usable, line_numbers in checked_blocks(path, problems):
        frame = pl.read_ndjson(usable, schema=CANDIDATE_SCHEMA)
        if frame.height != len(line_numbers):
            raise PfgenError(f"{path}: polars read {frame.height} of {len(line_numbers)} lines")
        lines = Locations(path, line_numbers, lines=True)
        yield group_frame(frame, lines, default_source, questions, problems)


def group_frame(
    frame: pl.DataFrame,
    where: Locations,
    default_source: str,
    questions: dict[str, Question],
    problems: Problems,
) -> Batch:
    """The answers of a frame (question, answer, source: String) by (question id, source);
    rows without a usable question, answer or source are problems, named by `where(row)`."""
    for name in ("question", "answer"):
        missing = np.flatnonzero(frame[name].is_null().to_numpy())

        def not_a_string(row: int, name: str = name) -> str:
            return f'{where(row)}: field "{name}": expected a string, got null'

        problems.add_rows(missing, not_a_string)
    question_ids = {text: q.question_id for text, q in questions.items()}
    frame = frame.with_row_index("row").with_columns(
        pl.col("question").replace_strict(question_ids, default=None).alias("question_id"),
        pl.col("source").fill_null(default_source),
    )
    usable = pl.col("question").is_not_null() & pl.col("answer").is_not_null()
    unknown = frame.filter(usable & pl.col("question_id").is_null())
    unknown_rows = unknown["row"].to_numpy()
    unknown_texts = unknown["question"]
    problems.add_rows(
        np.arange(len(unknown_rows)),
        lambda i: (
            f'{where(int(unknown_rows[i]))}: field "question": not a question of --meta: '
            f"{unknown_texts[i][:40]!r}"
        ),
    )
    empty_source = frame.filter(usable & (pl.col("source") == ""))["row"].to_numpy()
    problems.add_rows(
        empty_source,
        lambda row: f'{where(row)}: field "source": expected a non-empty string, got ""',
    )
    frame = frame.filter(usable & pl.col("question_id").is_not_null() & (pl.col("source") != ""))
    groups = frame.partition_by(["question_id", "source"], maintain_order=True, as_dict=True)
    return {(str(q), str(source)): group["answer"] for (q, source), group in groups.items()}


def parquet_batches(
    path: Path, default_source: str, questions: dict[str, Question], problems: Problems
) -> Iterator[Batch]:
    """Batches of a Parquet file's rows, grouped by (question id, source)."""
    try:
        schema = pl.read_parquet_schema(path)
    except (OSError, pl.exceptions.PolarsError) as error:
        raise InputError(f"{path}: not a readable Parquet file: {error}") from None
    for name in ("question", "answer", "source"):
        if name not in schema:
            if name != "source":
                raise InputError(f"{path}: no column '{name}'")
        elif schema[name] != pl.String:
            raise InputError(f"{path}: column '{name}' must hold strings, not {schema[name]}")
    columns = [c for c in CANDIDATE_SCHEMA if c in schema]
    offset = 0
    while True:
        frame = pl.scan_parquet(path).select(columns).slice(offset, BATCH_ROWS).collect()
        if frame.height == 0:
            return
        if "source" not in schema:
            frame = frame.with_columns(source=pl.lit(None, dtype=pl.String))
        rows = Locations(path, np.arange(offset + 1, offset + 1 + frame.height), lines=False)
        yield group_frame(frame, rows, default_source, questions, problems)
        offset += frame.height


def candidate_batches(
    path: Path, default_source: str, questions: dict[str, Question], problems: Problems
) -> Iterator[Batch]:
    if path.is_dir():
        raise InputError(f"{path}: is a directory, not a candidate file")
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    if path.suffix == ".parquet":
        return parquet_batches(path, default_source, questions, problems)
    return jsonl_batches(path, default_source, questions, problems)
