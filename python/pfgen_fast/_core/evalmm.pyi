"""Type stubs of `pfgen_fast._core.evalmm` (rust/pfgen-python/src/evalmm.rs): llm-jp-eval-mm's
text metrics over pairs of token-id texts."""

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = [
    "bag_overlap",
    "levenshtein",
    "rouge_l",
    "sentence_bleu",
    "token_ids",
]

def rouge_l(
    ids: npt.NDArray[np.uint32],
    offsets: npt.NDArray[np.uint64],
    left: npt.NDArray[np.uint64],
    right: npt.NDArray[np.uint64],
) -> npt.NDArray[np.float64]: ...
def sentence_bleu(
    ids: npt.NDArray[np.uint32],
    offsets: npt.NDArray[np.uint64],
    left: npt.NDArray[np.uint64],
    right: npt.NDArray[np.uint64],
) -> npt.NDArray[np.float64]: ...
def bag_overlap(
    ids: npt.NDArray[np.uint32],
    offsets: npt.NDArray[np.uint64],
    left: npt.NDArray[np.uint64],
    right: npt.NDArray[np.uint64],
) -> npt.NDArray[np.uint64]: ...
def levenshtein(
    ids: npt.NDArray[np.uint32],
    offsets: npt.NDArray[np.uint64],
    left: npt.NDArray[np.uint64],
    right: npt.NDArray[np.uint64],
) -> npt.NDArray[np.uint64]: ...
def token_ids(
    texts: Sequence[str],
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint64]]: ...
