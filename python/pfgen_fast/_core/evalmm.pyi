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

_U32 = npt.NDArray[np.uint32]
_U64 = npt.NDArray[np.uint64]
_F64 = npt.NDArray[np.float64]

# Texts as `token_ids` gives them (text i's tokens are ids[offsets[i]:offsets[i + 1]]), and the
# pairs to compare as two arrays of text indices: one figure per pair.
def rouge_l(ids: _U32, offsets: _U64, left: _U64, right: _U64) -> _F64: ...
def sentence_bleu(ids: _U32, offsets: _U64, left: _U64, right: _U64) -> _F64: ...
def bag_overlap(ids: _U32, offsets: _U64, left: _U64, right: _U64) -> _U64: ...
def levenshtein(ids: _U32, offsets: _U64, left: _U64, right: _U64) -> _U64: ...
def token_ids(texts: Sequence[str]) -> tuple[_U32, _U64]: ...
