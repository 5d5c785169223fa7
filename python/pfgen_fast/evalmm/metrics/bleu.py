"""Sentence BLEU with sacrebleu's settings in jdocqa (ja-mecab tokens, exponential smoothing,
no effective order, one reference), divided by 100. Fewer than four tokens give 0."""

from __future__ import annotations

from collections.abc import Sequence

from pfgen_fast._core import evalmm as core_evalmm
from pfgen_fast.evalmm.metrics.tokens import ParsedBatch, bleu_parse


def sentence_bleu_scores(refs: Sequence[str], preds: Sequence[str]) -> list[float]:
    batch = ParsedBatch(bleu_parse)
    hypotheses = batch.indexes(preds)
    references = batch.indexes(refs)
    ids, offsets = batch.arrays()
    return core_evalmm.sentence_bleu(ids, offsets, hypotheses, references).tolist()
