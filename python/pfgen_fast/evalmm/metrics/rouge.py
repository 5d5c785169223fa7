"""ROUGE-L as llm-jp-eval-mm's `rougel` metric reports it per item: 100 × the LCS F-measure of
the MeCab (unidic-lite) tokens. Its per-item bootstrap of a single value returns that value, so
it is computed directly."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from pfgen_fast._core import evalmm as core_evalmm
from pfgen_fast.evalmm.metrics.tokens import ParsedBatch, check_neologdn, rouge_parse


def rouge_l_scores(
    refs: Sequence[str], preds: Sequence[str], *, use_neologdn: bool = False
) -> list[float]:
    if use_neologdn:
        check_neologdn()
    batch = ParsedBatch(partial(rouge_parse, use_neologdn=use_neologdn))
    left = batch.indexes(refs)
    right = batch.indexes(preds)
    ids, offsets = batch.arrays()
    return core_evalmm.rouge_l(ids, offsets, left, right).tolist()
