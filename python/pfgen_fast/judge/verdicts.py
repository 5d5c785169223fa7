"""From a judge's reply to a verdict: the verdict token's position, the probabilities of A, B and
C there, the mapping of the swapped order back to the models, and the three aggregations of the
two orders (the paper's proposed method, BS1 and BS2)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

LETTERS = ("A", "B", "C")
# In the swapped order (LLM B shown first) the letters name the other model.
SWAPPED = {"A": "B", "B": "A", "C": "C"}


class TokenWithAlternatives(Protocol):
    """A generated token and the top alternatives at its position (common.llm.TokenLogprob)."""

    @property
    def token(self) -> str: ...

    @property
    def top(self) -> tuple[tuple[str, float], ...]: ...


@dataclass(frozen=True)
class OrderReading:
    """What one presentation order's reply says, in that order's letters."""

    position: int | None  # index of the verdict token; None when the reply has none
    letter: str | None  # the generated letter there (A, B or C); None when it is none of them
    probabilities: dict[str, float]  # exp(logprob) of A, B, C among the top alternatives there


def verdict_position(tokens: Sequence[TokenWithAlternatives], reasoning: bool) -> int | None:
    """The result-only prompts ask for one letter: the first generated token. After a reason the
    verdict is the last generated token that is exactly A, B or C (spaces around it aside)."""
    if not tokens:
        return None
    if not reasoning:
        return 0
    for index in range(len(tokens) - 1, -1, -1):
        if tokens[index].token.strip() in LETTERS:
            return index
    return None


def letter_probabilities(top: Sequence[tuple[str, float]]) -> dict[str, float]:
    """exp(logprob) of each letter among the alternatives; a letter that is absent has 0 (no
    renormalisation). Tokens that differ only by surrounding spaces (" A", "A") are the same
    verdict: their probabilities add up."""
    probabilities = dict.fromkeys(LETTERS, 0.0)
    for token, logprob in top:
        letter = token.strip()
        if letter in probabilities:
            probabilities[letter] += math.exp(logprob)
    return probabilities


def read_order(tokens: Sequence[TokenWithAlternatives], reasoning: bool) -> OrderReading:
    position = verdict_position(tokens, reasoning)
    if position is None:
        return OrderReading(None, None, dict.fromkeys(LETTERS, 0.0))
    chosen = tokens[position]
    letter = chosen.token.strip()
    return OrderReading(
        position, letter if letter in LETTERS else None, letter_probabilities(chosen.top)
    )


def to_models(probabilities: dict[str, float], swapped: bool) -> dict[str, float]:
    """Probabilities keyed by the model they favour: A = LLM A wins, B = LLM B wins, C = tie."""
    if not swapped:
        return dict(probabilities)
    return {SWAPPED[letter]: p for letter, p in probabilities.items()}


@dataclass(frozen=True)
class PairVerdict:
    """The verdicts of one item from its two orders, in model terms (A = LLM A wins)."""

    proposed: str | None  # None when no letter has any probability in either order
    bs1: str | None  # None when the orders disagree (no verdict)
    bs2: str | None  # C when the orders disagree
    consistent: bool  # the two generated letters agree (after mapping order 2 back)
    averages: dict[str, float]  # the mean of both orders' model-keyed probabilities
    tie_broken: bool  # the highest average was shared, and the tie gave C


def proposed_verdict(first: dict[str, float], second: dict[str, float]) -> tuple[str | None, bool]:
    """argmax of the mean of the two orders' model-keyed probabilities; a tie for the highest
    gives C; no probability at all gives None. Also whether a tie decided it."""
    averages = {x: (first[x] + second[x]) / 2 for x in LETTERS}
    best = max(averages.values())
    if best <= 0.0:
        return None, False
    leaders = [x for x in LETTERS if averages[x] == best]
    if len(leaders) > 1:
        return "C", True
    return leaders[0], False


def combine(order1: OrderReading, order2: OrderReading) -> PairVerdict:
    """Order 1 shows LLM A first, order 2 shows LLM B first."""
    q1 = to_models(order1.probabilities, swapped=False)
    q2 = to_models(order2.probabilities, swapped=True)
    proposed, tie_broken = proposed_verdict(q1, q2)
    v1 = order1.letter
    v2 = SWAPPED[order2.letter] if order2.letter is not None else None
    consistent = v1 is not None and v1 == v2
    return PairVerdict(
        proposed=proposed,
        bs1=v1 if consistent else None,
        bs2=v1 if consistent else "C",
        consistent=consistent,
        averages={x: (q1[x] + q2[x]) / 2 for x in LETTERS},
        tie_broken=tie_broken,
    )
