"""From a judge's reply to a verdict: the verdict token's position, the probabilities of A, B and
C there, the mapping of the swapped order back to the models, and the three aggregations of the
two orders (the paper's proposed method, BS1 and BS2)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from pfgen_fast.common.reasoning import CLOSING, OPENING, has_reasoning

LETTERS = ("A", "B", "C")
# The aggregations of the two orders: the paper's proposed method and its baselines.
METHODS = ("proposed", "bs1", "bs2")
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


def answer_start(tokens: Sequence[TokenWithAlternatives]) -> int | None:
    """Where the answer begins among the generated tokens: 0 when they hold no `<think>` tag;
    after a reasoning block, the first token that begins after the end of the last
    `</think>` (a tag may span several tokens); None when reasoning is left open (an opening
    tag after the last closing one, or one never closed: the reply never reached its answer)."""
    text = "".join(token.token for token in tokens)
    if not has_reasoning(text):
        return 0
    closings = list(CLOSING.finditer(text))
    end = closings[-1].end() if closings else 0
    if OPENING.search(text, end) is not None:
        return None
    offset = 0
    for index, token in enumerate(tokens):
        if offset >= end:
            return index
        offset += len(token.token)
    return len(tokens)


def verdict_position(tokens: Sequence[TokenWithAlternatives], reasoning: bool) -> int | None:
    """The result-only prompts ask for one letter: the first generated token of the answer
    (after a reasoning block, the first that is not white space). After a reason the verdict is
    the last generated token of the answer that is exactly A, B or C (spaces around it aside).
    Replies without `<think>` tags are read from their first token."""
    start = answer_start(tokens)
    if start is None:
        return None
    answer = range(start, len(tokens))
    if not reasoning:
        if start == 0:
            return 0 if tokens else None
        return next((i for i in answer if tokens[i].token.strip()), None)
    return next((i for i in reversed(answer) if tokens[i].token.strip() in LETTERS), None)


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

    def by_method(self) -> dict[str, str | None]:
        """The verdict of each method: the proposed one, BS1 and BS2."""
        return dict(zip(METHODS, (self.proposed, self.bs1, self.bs2), strict=True))


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
