"""Type stubs of `pfgen_fast._core.pfgen` (rust/pfgen-python/src/pfgen): pfgen-bench's scorer,
the answer lines of `score`, the trials chunks and summaries of `eval`, reference-set
construction."""

from collections.abc import Sequence
from pathlib import Path
from typing import Final, Protocol, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "AnswerLines",
    "BLANK_LINE",
    "CheckedLines",
    "HELPFULNESS_CUT",
    "KeywordRule",
    "NOT_FOUND",
    "OTHER_LINE",
    "QuestionScorer",
    "QuestionStats",
    "RareNgramCounter",
    "RareNgrams",
    "RunStats",
    "Scores",
    "TrialsChunk",
    "check_candidate_lines",
    "question_stats",
    "run_stats",
    "trigram_coverage",
]

# The numbers of scoring-spec.md.

HELPFULNESS_CUT: Final[int]
"""Helpfulness reads the first HELPFULNESS_CUT characters of an answer."""
NOT_FOUND: Final[int]
"""The value of a keyword leaf whose pattern is absent from an answer."""
BLANK_LINE: Final[int]
"""`AnswerLines.question_of_line` of a line holding only whitespace."""
OTHER_LINE: Final[int]
"""`AnswerLines.question_of_line` of a line left to the caller."""

@final
class KeywordRule:
    """A keyword rule (a leaf, or all / any of other rules), named as in
    `helpfulness_results`."""

    @staticmethod
    def literal(name: str, pattern: str) -> KeywordRule:
        """A leaf found by a plain substring search of `pattern`."""
    @staticmethod
    def external(name: str, column: int) -> KeywordRule:
        """A leaf whose match ends the caller gives: column `column` of the scorer's
        `external`."""
    @staticmethod
    def all_of(children: Sequence[KeywordRule], name: str | None = None) -> KeywordRule:
        """Satisfied when every child is; named after the child satisfied last unless `name`."""
    @staticmethod
    def any_of(children: Sequence[KeywordRule], name: str | None = None) -> KeywordRule:
        """Satisfied when any child is; named after the child satisfied first unless `name`."""

@final
class Scores:
    """Scores of a batch, rounded as in the per-answer record: 2-D arrays have a column per
    source; `lengths` in characters (as floats)."""

    @property
    def fluency(self) -> npt.NDArray[np.float64]: ...
    @property
    def truthfulness(self) -> npt.NDArray[np.float64]: ...
    @property
    def helpfulness(self) -> npt.NDArray[np.float64]: ...
    @property
    def average(self) -> npt.NDArray[np.float64]: ...
    @property
    def lengths(self) -> npt.NDArray[np.float64]: ...
    @property
    def helpfulness_results(self) -> list[list[tuple[str, float]]] | None:
        """Per answer, (name, factor) of its `helpfulness_results`, when asked for."""
    @property
    def records_json(self) -> list[bytes] | None:
        """Per answer, its record as UTF-8 JSON text, when asked for."""

@final
class QuestionScorer:
    """The n-gram tables and keyword rules of one question."""

    def __new__(
        cls,
        sources: Sequence[tuple[str, Sequence[str]]],
        rules: Sequence[tuple[KeywordRule, float]],
        num_external: int,
    ) -> QuestionScorer: ...
    @staticmethod
    def load(
        path: str | Path,
        sources: Sequence[str],
        rules: Sequence[tuple[KeywordRule, float]],
        num_external: int,
    ) -> QuestionScorer: ...
    def save_tables(self, path: str | Path) -> None: ...
    def score(
        self,
        answers: Sequence[str],
        external: npt.NDArray[np.uint32] | None = None,
        with_results: bool = False,
        with_json: bool = False,
        legacy_sum: bool = False,
    ) -> Scores: ...
    def score_lines(
        self,
        lines: AnswerLines,
        question: int,
        external: npt.NDArray[np.uint32] | None = None,
        legacy_sum: bool = False,
    ) -> None: ...
    def score_chunk(
        self,
        chunk: TrialsChunk,
        question: int,
        runs: Sequence[int],
        external: npt.NDArray[np.uint32] | None = None,
        legacy_sum: bool = False,
    ) -> None: ...
    @property
    def baselines(self) -> list[float]: ...
    @property
    def num_nodes(self) -> int: ...
    @property
    def memory_bytes(self) -> int: ...

@final
class AnswerLines:
    """A block of `score`'s input (JSON lines with `question` and `answer`): the lines the core
    reads, the others left to the caller (OTHER_LINE), blank ones (BLANK_LINE)."""

    def __new__(cls, block: bytes) -> AnswerLines: ...
    @property
    def questions(self) -> list[str]: ...
    @property
    def question_of_line(self) -> npt.NDArray[np.int32]: ...
    def line(self, index: int) -> bytes: ...
    def answers(self, question: int) -> list[str]: ...
    def write(self, outputs: Sequence[tuple[int, bytes]]) -> bytes: ...

@final
class TrialsChunk:
    """The trials files of a chunk of `eval`'s runs, read and hashed, and unless current
    (`is_current`) decompressed, their answers grouped by question, with the GIL released; each
    question's scores over the chunk once `QuestionScorer.score_chunk` has scored it. A run the
    core is not sure about is left to the caller (`careful_bytes`). Of a run whose lines carry
    the runners' `generated` mark (`is_marked`), only the generated answers are grouped; those
    given up are counted per question (`given_up`)."""

    def __new__(
        cls,
        paths: Sequence[str | Path],
        compressed: Sequence[bool],
        current_hashes: Sequence[str | None],
        questions: Sequence[str],
    ) -> TrialsChunk: ...
    def input_hash(self, run: int) -> str | None: ...
    def is_current(self, run: int) -> bool: ...
    def read_error(self, run: int) -> int | None: ...
    def careful_bytes(self, run: int) -> bytes | None: ...
    def counts(self, run: int) -> npt.NDArray[np.uintp]: ...
    def is_marked(self, run: int) -> bool: ...
    def given_up(self, run: int) -> npt.NDArray[np.uintp]: ...
    def answers(self, question: int, runs: Sequence[int]) -> list[str]: ...
    def lines(self, run: int, question: int, indices: Sequence[int]) -> list[bytes]: ...
    def records(self, run: int, question: int, indices: Sequence[int]) -> list[bytes]: ...
    def question_stats(
        self, run: int, question: int, legacy_sum: bool = False
    ) -> QuestionStats: ...
    def run_stats(
        self, run: int, questions: Sequence[int], legacy_sum: bool = False
    ) -> RunStats: ...
    def cache_questions(self, run: int, keys: Sequence[tuple[int, bytes]]) -> bytes: ...

@final
class QuestionStats:
    """A question's part of result.json: score, length and their deviations, per-source
    fluency and truthfulness means, helpfulness and average means (rounded as written), and the
    file-order indices of the sampled answers, in sample order."""

    @property
    def score(self) -> float: ...
    @property
    def score_std(self) -> float: ...
    @property
    def length(self) -> float: ...
    @property
    def length_std(self) -> float: ...
    @property
    def fluency(self) -> list[float]: ...
    @property
    def truthfulness(self) -> list[float]: ...
    @property
    def helpfulness(self) -> float: ...
    @property
    def average(self) -> float: ...
    @property
    def samples(self) -> list[int]: ...

@final
class RunStats:
    """A run's top-level result.json numbers."""

    @property
    def num_trials(self) -> int: ...
    @property
    def score(self) -> float: ...
    @property
    def score_std(self) -> float: ...
    @property
    def length(self) -> float: ...
    @property
    def length_std(self) -> float: ...

def question_stats(
    fluency: npt.NDArray[np.float64],
    truthfulness: npt.NDArray[np.float64],
    helpfulness: npt.NDArray[np.float64],
    average: npt.NDArray[np.float64],
    lengths: npt.NDArray[np.float64],
    legacy_sum: bool = False,
) -> QuestionStats: ...
def run_stats(
    averages: Sequence[npt.NDArray[np.float64]],
    lengths: Sequence[npt.NDArray[np.float64]],
    legacy_sum: bool = False,
) -> RunStats: ...

# Reference-set construction.

class _SupportsArrowStream(Protocol):
    """An object exporting an Arrow C stream (e.g. a polars Series of strings)."""

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...

@final
class RareNgramCounter:
    """Counts one question's candidate n-grams to find those fewer than `min_count` candidates
    contain; spills to `spill_dir` beyond `memory_budget` bytes of tables and texts."""

    def __new__(
        cls, n: int, min_count: int, spill_dir: str | Path, memory_budget: int
    ) -> RareNgramCounter: ...
    def add(self, candidates: Sequence[str] | _SupportsArrowStream) -> None: ...
    def spill(self) -> None: ...
    @property
    def buffered_bytes(self) -> int: ...
    @property
    def num_candidates(self) -> int: ...
    def finish(self) -> RareNgrams: ...
    def texts(self, indices: Sequence[int]) -> list[str]: ...

@final
class RareNgrams:
    """Per candidate, whether it holds a rare n-gram and its length in code points; `stats`:
    occurrences, distinct, rare, alphabet, wide, spilled_bytes."""

    @property
    def rare(self) -> npt.NDArray[np.bool_]: ...
    @property
    def lengths(self) -> npt.NDArray[np.uint32]: ...
    @property
    def stats(self) -> dict[str, int]: ...

@final
class CheckedLines:
    """The usable candidate lines joined by "\\n", the index in the block of each, the number
    of lines in the block, and (index, message) of each unusable line."""

    @property
    def usable(self) -> bytes: ...
    @property
    def line_indices(self) -> npt.NDArray[np.uint32]: ...
    @property
    def num_lines(self) -> int: ...
    @property
    def problems(self) -> list[tuple[int, str]]: ...

def check_candidate_lines(buffer: bytearray, length: int) -> CheckedLines: ...
def trigram_coverage(references: Sequence[str], texts: Sequence[str]) -> npt.NDArray[np.uint32]: ...
