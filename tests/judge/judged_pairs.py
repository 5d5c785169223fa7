"""Pairs as `judge pairwise` records them in `items.jsonl`, for the tests of what reads that
file (`judge rank`, the site) without a judge to ask."""

from __future__ import annotations

from pathlib import Path

from pfgen_fast.common.jsonl import dumps_line
from pfgen_fast.judge.outputs import OrderRecord, PairRecord, PairVerdict


def judged_pair(number: int, model_a: str | None, model_b: str | None, letter: str) -> PairRecord:
    """Pair `number`, both orders giving `letter` (in model terms) with probability 0.8."""

    def probabilities() -> dict[str, float]:
        return {x: 0.8 if x == letter else 0.1 for x in "ABC"}

    orders = [
        OrderRecord(first, letter, 0, probabilities(), [(letter, -0.22)], 1, letter)
        for first in "AB"
    ]
    return PairRecord(
        id=number,
        question="質問",
        answer_a="甲",
        answer_b="乙",
        model_a=model_a,
        model_b=model_b,
        verdict=PairVerdict(letter, letter, letter, True, probabilities(), False),
        orders=orders,
    )


def write_pairs(path: Path, pairs: list[PairRecord]) -> Path:
    path.write_bytes(b"".join(dumps_line(pair.line()) for pair in pairs))
    return path
