"""Character-level OCR scores: cc-ocr's bag-of-characters F1 (Japanese setting) and the
normalised edit similarity of jawildtext-handwriting-ocr."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np

from pfgen_fast._core import evalmm as core_evalmm
from pfgen_fast.evalmm.metrics.tokens import TokenBatch

SPACES = re.compile(r"\s+")
LINE_SPACES = re.compile(r"[ \t]+")
# cc-ocr's guard against empty denominators.
EPSILON = 1e-9
# The settings cc-ocr reports with its scores (character level, lower-cased).
METRIC_CONFIG = {
    "is_word_level": False,
    "is_lower": True,
    "is_alphanum_only": False,
    "description": "Optimized for Japanese (character-level)",
}


def cc_ocr_characters(text: Any) -> list[str]:
    """The text's characters as cc-ocr counts them: marks `###`/`***` and all whitespace
    removed, each character lower-cased (which may give more than one code point)."""
    text = str(text).strip().replace("\t", " ").replace("\n", " ")
    text = text.replace("###", "").replace("***", "")
    text = SPACES.sub(" ", text).replace(" ", "")
    return [lowered for c in text if (lowered := c.lower())]


def overlap_counts(refs: Sequence[Any], preds: Sequence[Any]) -> list[tuple[int, int, int]]:
    """(shared characters, |gt|, |pred|) per pair."""
    batch = TokenBatch(cc_ocr_characters)
    left = batch.indexes([str(ref) for ref in refs])
    right = batch.indexes([str(pred) for pred in preds])
    ids, offsets = batch.arrays()
    shared = core_evalmm.bag_overlap(ids, offsets, left, right)
    lengths = np.diff(offsets.astype(np.int64))
    return [
        (int(right_count), int(lengths[g]), int(lengths[p]))
        for right_count, g, p in zip(shared, left, right, strict=True)
    ]


def f1_of_counts(right: int, gt_len: int, pred_len: int) -> tuple[float, float, float]:
    """(recall, precision, F1) as cc-ocr computes them."""
    recall = right / (gt_len + EPSILON) if gt_len > 0 else 0.0
    precision = right / (pred_len + EPSILON) if pred_len > 0 else 0.0
    f1 = 2 * recall * precision / (recall + precision + EPSILON) if recall + precision else 0.0
    return recall, precision, f1


def cc_ocr_aggregate(counts: Sequence[tuple[int, int, int]]) -> dict[str, Any]:
    """Mean sample F1 as overall score; in the details the macro recall, precision and F1
    (sums divided by n + 1e-9, the F1 a mean of the samples' F1s) and the pooled (micro)
    values."""
    per_sample = [f1_of_counts(*c) for c in counts]
    n = len(per_sample)
    mean_f1 = sum(s[2] for s in per_sample) / n if n else 0.0
    micro_r, micro_p, micro_f1 = f1_of_counts(
        sum(c[0] for c in counts), sum(c[1] for c in counts), sum(c[2] for c in counts)
    )
    return {
        "overall_score": mean_f1,
        "details": {
            "mean_sample_f1": mean_f1,
            "macro_recall": sum(s[0] for s in per_sample) / (n + EPSILON),
            "macro_precision": sum(s[1] for s in per_sample) / (n + EPSILON),
            "macro_f1_score": sum(s[2] for s in per_sample) / (n + EPSILON),
            "micro_recall": micro_r,
            "micro_precision": micro_p,
            "micro_f1_score": micro_f1,
            "metric_config": dict(METRIC_CONFIG),
        },
    }


def handwriting_normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = text.replace("\\n", "\n").replace("\r\n", "\n")
    lines = (LINE_SPACES.sub(" ", line.strip()) for line in text.split("\n"))
    return "\n".join(lines).lower()


def handwriting_scores(refs: Sequence[str], preds: Sequence[str]) -> list[float]:
    """max(0, 1 - edit distance / |ref|) over normalised code points; both empty 1, empty
    reference 0."""
    normalized_refs = [handwriting_normalize(ref) for ref in refs]
    normalized_preds = [handwriting_normalize(pred) for pred in preds]
    batch = TokenBatch(list)
    left = batch.indexes(normalized_refs)
    right = batch.indexes(normalized_preds)
    ids, offsets = batch.arrays()
    distances = core_evalmm.levenshtein(ids, offsets, left, right)
    scores = []
    for ref, pred, distance in zip(normalized_refs, normalized_preds, distances, strict=True):
        if not ref:
            scores.append(1.0 if not pred else 0.0)
        else:
            scores.append(max(0.0, 1.0 - int(distance) / len(ref)))
    return scores
