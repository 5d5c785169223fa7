"""Type stubs of the compiled core (rust/pfgen-python)."""

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

# A keyword rule as nested tuples: ("literal", name, pattern), ("external", name, column),
# ("and" | "or", name or None, [rules]).
Rule = tuple[object, ...]

class QuestionScorer:
    def __init__(
        self,
        sources: list[tuple[str, list[str]]],
        rules: list[tuple[Rule, float]],
        num_external: int,
    ) -> None: ...
    @staticmethod
    def load(
        path: Path,
        sources: list[str],
        rules: list[tuple[Rule, float]],
        num_external: int,
    ) -> QuestionScorer: ...
    def save_tables(self, path: Path) -> None: ...
    def score(
        self,
        answers: list[str],
        external: npt.NDArray[np.uint32] | None = None,
        with_results: bool = False,
        with_json: bool = False,
    ) -> tuple[
        npt.NDArray[np.float64],
        npt.NDArray[np.float64],
        npt.NDArray[np.float64],
        npt.NDArray[np.float64],
        npt.NDArray[np.float64],
        list[list[tuple[str, float]]] | None,
        list[bytes] | None,
    ]: ...
    def score_lines(
        self,
        lines: AnswerLines,
        question: int,
        external: npt.NDArray[np.uint32] | None = None,
    ) -> None: ...
    @property
    def baselines(self) -> list[float]: ...
    @property
    def num_nodes(self) -> int: ...
    @property
    def memory_bytes(self) -> int: ...

class AnswerLines:
    """A block of `score`'s input (JSON lines with `question` and `answer`): the lines the core
    reads, the others left to the caller (question_of_line -2), blank ones (-1)."""

    def __init__(self, block: bytes) -> None: ...
    @property
    def questions(self) -> list[str]: ...
    @property
    def question_of_line(self) -> npt.NDArray[np.int32]: ...
    def line(self, index: int) -> bytes: ...
    def answers(self, question: int) -> list[str]: ...
    def write(self, outputs: list[tuple[int, bytes]]) -> bytes: ...

def py_round(x: float, digits: int) -> float: ...
def release_free_memory() -> None: ...
def trigram_coverage(references: list[str], texts: list[str]) -> npt.NDArray[np.uint32]: ...

# The rare n-gram counter of reference-set construction (rust/pfgen-python/src/build_refs.rs).

class RareNgramCounter:
    """Counts one question's candidate n-grams to find those fewer than `min_count` candidates
    contain; spills to `spill_dir` beyond `memory_budget` bytes of tables and texts."""

    def __init__(self, n: int, min_count: int, spill_dir: Path, memory_budget: int) -> None: ...
    def add(self, candidates: Sequence[str] | SupportsArrowStream) -> None: ...
    def spill(self) -> None: ...
    @property
    def buffered_bytes(self) -> int: ...
    @property
    def num_candidates(self) -> int: ...
    def finish(
        self,
    ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.uint32], dict[str, int]]: ...
    def texts(self, indices: list[int]) -> list[str]: ...

class SupportsArrowStream(Protocol):
    """An object exporting an Arrow C stream (e.g. a polars Series of strings)."""

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...

def check_candidate_lines(
    buffer: bytearray, length: int
) -> tuple[bytes, npt.NDArray[np.uint32], int, list[tuple[int, str]]]: ...
