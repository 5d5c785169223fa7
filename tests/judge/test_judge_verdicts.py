"""Verdict reading and the three aggregations against the from-spec reference, on hand-made
cases (the paper's figure 1, ties, a missing C, disagreeing orders) and on random probability
tables."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from judge_reference import Reply, spec_order, spec_pair

from pfgen_fast.judge.verdicts import combine, read_order, verdict_position


@dataclass(frozen=True)
class Token:
    token: str
    top: tuple[tuple[str, float], ...]


def tokens(reply: Reply) -> list[Token]:
    return [Token(text, tuple(alternatives)) for text, alternatives in reply]


def letter_reply(letter: str, a: float, b: float, c: float | None) -> Reply:
    """A one-token reply with P(A)=a, P(B)=b, P(C)=c (C absent from the top when None)."""
    top = [("A", math.log(a)), ("B", math.log(b))]
    if c is not None:
        top.append(("C", math.log(c)))
    return [(letter, top)]


def test_figure_1() -> None:
    # order 1: A 70 %, B 10 %, C 6 %; order 2 in its own letters: "A" (LLM B) 60 %, "B" 40 %
    order1 = read_order(tokens(letter_reply("A", 0.7, 0.1, 0.06)), reasoning=False)
    order2 = read_order(tokens(letter_reply("A", 0.6, 0.4, 0.1)), reasoning=False)
    verdict = combine(order1, order2)
    assert verdict.averages == pytest.approx({"A": 0.55, "B": 0.35, "C": 0.08})
    assert (verdict.proposed, verdict.bs1, verdict.bs2, verdict.consistent) == (
        "A",
        None,
        "C",
        False,
    )


def test_c_missing_from_the_top_counts_zero() -> None:
    order1 = read_order(tokens(letter_reply("C", 0.2, 0.1, None)), reasoning=False)
    assert order1.probabilities["C"] == 0.0
    assert order1.letter == "C"


def test_exact_tie_gives_c() -> None:
    order1 = read_order(tokens(letter_reply("A", 0.5, 0.25, None)), reasoning=False)
    order2 = read_order(tokens(letter_reply("A", 0.5, 0.25, None)), reasoning=False)
    verdict = combine(order1, order2)  # A-wins 0.375, B-wins 0.375
    assert (verdict.proposed, verdict.tie_broken, verdict.bs2) == ("C", True, "C")


def test_reason_then_result_uses_the_last_lone_letter() -> None:
    reply: Reply = [
        ("回答", [("回答", -0.1)]),
        ("A", [("A", -0.2), ("B", -1.9)]),  # a lone letter inside the reason
        ("の方が", [("の方が", -0.1)]),
        ("良い。", [("良い。", -0.1)]),
        ("B", [("B", -0.3), ("A", -1.5), ("C", -3.0)]),
    ]
    order = read_order(tokens(reply), reasoning=True)
    assert (order.position, order.letter) == (4, "B")
    assert order.probabilities["B"] == pytest.approx(math.exp(-0.3))


def test_no_letter_after_a_reason() -> None:
    order = read_order(tokens([("同点", [("同点", -0.1)])]), reasoning=True)
    assert (order.position, order.letter) == (None, None)
    assert combine(order, order).proposed is None


def test_agreeing_orders() -> None:
    order1 = read_order(tokens(letter_reply("B", 0.1, 0.8, 0.05)), reasoning=False)
    order2 = read_order(tokens(letter_reply("A", 0.7, 0.2, 0.05)), reasoning=False)
    verdict = combine(order1, order2)
    assert (verdict.proposed, verdict.bs1, verdict.bs2, verdict.consistent) == ("B", "B", "B", True)


TEXTS = ["A", "B", "C", " A", "B ", "理由", "で", "Aは", "\n"]
LOGPROBS = [-0.0, -0.1, -0.6931471805599453, -1.0, -2.5, -9.0]
alternative = st.tuples(st.sampled_from(TEXTS), st.sampled_from(LOGPROBS))
reply_token = st.tuples(st.sampled_from(TEXTS), st.lists(alternative, max_size=5))
replies = st.lists(reply_token, min_size=1, max_size=6)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(replies, replies, st.booleans())
def test_matches_reference(first: Reply, second: Reply, reasoning: bool) -> None:
    expected1 = spec_order(first, reasoning)
    expected2 = spec_order(second, reasoning)
    order1 = read_order(tokens(first), reasoning)
    order2 = read_order(tokens(second), reasoning)
    assert (order1.letter, order1.probabilities) == expected1
    assert (order2.letter, order2.probabilities) == expected2
    verdict = combine(order1, order2)
    expected = spec_pair(expected1, expected2)
    assert verdict.proposed == expected["proposed"]
    assert verdict.bs1 == expected["bs1"]
    assert verdict.bs2 == expected["bs2"]
    assert verdict.consistent == expected["consistent"]


greedy_table = st.dictionaries(st.sampled_from("ABC"), st.sampled_from(LOGPROBS[1:]), min_size=1)


def greedy_reply(table: dict[str, float]) -> list[Token]:
    """A temperature-0 reply: the generated letter is the most probable (first listed) one."""
    top = tuple(sorted(table.items(), key=lambda pair: -pair[1]))
    return [Token(top[0][0], top)]


@settings(max_examples=300, deadline=None)
@given(greedy_table, greedy_table)
def test_agreeing_greedy_orders_keep_their_verdict(first: dict, second: dict) -> None:
    # spec 2.6: when both orders agree, the mean's argmax is their verdict, except on ties
    verdict = combine(
        read_order(greedy_reply(first), reasoning=False),
        read_order(greedy_reply(second), reasoning=False),
    )
    if verdict.consistent and not verdict.tie_broken:
        assert verdict.proposed == verdict.bs1 == verdict.bs2


def texts(*parts: str) -> list[Token]:
    return [Token(part, ((part, -0.1),)) for part in parts]


@pytest.mark.parametrize(
    ("parts", "reasoning", "position"),
    [
        (("B",), False, 0),  # no reasoning: the first token, as always
        (("理由", "A", "。", "B"), True, 3),
        (("<think>", "A", "</think>", "\n\n", "B"), False, 4),
        (("<", "think>", "Aか", "</", "thi", "nk>", "\n", "理由", "C"), True, 8),  # split tags
        (("<think>", "A", "</think>", "理由のみ"), True, None),  # the letter is in the reasoning
        (("<think>", "A", "だろう"), False, None),  # reasoning left open (cut)
        (("<think>", "x", "</think>", "<think>", "B"), True, None),  # a second block left open
        (("考える", "</think>", " ", "A"), False, 3),  # the template opened the block
        (("<think>", "A", "</think>\n\nB"), False, None),  # no token begins after the tag
    ],
)
def test_the_verdict_follows_the_reasoning(
    parts: tuple[str, ...], reasoning: bool, position: int | None
) -> None:
    assert verdict_position(texts(*parts), reasoning) == position
