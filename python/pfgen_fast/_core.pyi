"""Type stubs of the compiled core (rust/pfgen-python)."""

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
        list[list[tuple[str, float]]] | None,
        list[bytes] | None,
    ]: ...
    @property
    def baselines(self) -> list[float]: ...
    @property
    def num_nodes(self) -> int: ...
    @property
    def memory_bytes(self) -> int: ...

def py_round(x: float, digits: int) -> float: ...
def release_free_memory() -> None: ...
def trigram_coverage(references: list[str], texts: list[str]) -> npt.NDArray[np.uint32]: ...
