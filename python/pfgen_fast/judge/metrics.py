"""The paper's measures: concordance with human annotators (its eq. 1, averaged over annotators),
Fleiss' kappa among the annotators, and robustness (the share of items whose orders agree)."""

from __future__ import annotations

from collections.abc import Sequence

from pfgen_fast.judge.verdicts import LETTERS


def concordance(verdicts: Sequence[str | None], labels: Sequence[Sequence[str]]) -> float | None:
    """The mean over annotators j of the share of items whose verdict equals annotator j's
    label; a verdict of None (BS1 on a biased item) matches no one. Every item has the same
    number of labels, annotator j's being the j-th. None without items or annotators."""
    if not verdicts or not labels or not labels[0]:
        return None
    annotators = len(labels[0])
    matches = sum(
        1
        for verdict, row in zip(verdicts, labels, strict=True)
        for label in row
        if label == verdict
    )
    return matches / (annotators * len(verdicts))


def fleiss_kappa(labels: Sequence[Sequence[str]]) -> float | None:
    """Fleiss' kappa of n raters (n = labels per item, at least 2) over categories A, B, C.
    None when it is undefined: fewer than 2 raters, no items, or chance agreement of 1."""
    if not labels or len(labels[0]) < 2:
        return None
    n = len(labels[0])
    items = len(labels)
    totals = dict.fromkeys(LETTERS, 0)
    agreement = 0.0
    for row in labels:
        counts = [row.count(letter) for letter in LETTERS]
        for letter, count in zip(LETTERS, counts, strict=True):
            totals[letter] += count
        agreement += sum(c * (c - 1) for c in counts) / (n * (n - 1))
    mean_agreement = agreement / items
    chance = sum((total / (items * n)) ** 2 for total in totals.values())
    if chance == 1.0:
        return None
    return (mean_agreement - chance) / (1.0 - chance)


def robustness(consistent: Sequence[bool]) -> float | None:
    """The share of items whose two orders gave the same verdict."""
    if not consistent:
        return None
    return sum(consistent) / len(consistent)
