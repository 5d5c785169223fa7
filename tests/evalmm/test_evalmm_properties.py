"""Property tests of the string scorers against the from-spec reference
(tests/evalmm/evalmm_reference.py), on Japanese, full-width and adversarial strings."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))

import evalmm_reference as reference  # noqa: E402

from pfgen_fast.evalmm import match  # noqa: E402
from pfgen_fast.evalmm.choice_parsing import parse_choice  # noqa: E402
from pfgen_fast.evalmm.judges import first_digit_score, last_boxed, parse_heron  # noqa: E402

PIECES = [
    "one", "hundred", "Twenty", " ", "seven", "teen", "1", "１", "です", "。", "、", "はい",
    "(", ")", "A", "b", "C", "d", "E", ".", "Ｄ", "答えは", "猫", "{", "}", "\\boxed{", "```json",
    "```", '"score"', '"score_gpt"', ":", ",", "7", "8.5", '"9"', "\x07", "\n", "٣", "３",
]  # fmt: skip
texts = st.one_of(
    st.lists(st.sampled_from(PIECES), max_size=14).map("".join), st.text(max_size=10)
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(texts, st.lists(texts, max_size=3)), texts)
def test_substring_match(ref: str | list[str], pred: str) -> None:
    assert match.substring_match(ref, pred) == reference.substring_match(ref, pred)


@settings(max_examples=300, deadline=None)
@given(texts, texts)
def test_jdocqa_letters_and_containment(ref: str, pred: str) -> None:
    assert match.jdocqa_contains(ref, pred) == reference.jdocqa_exact(ref, pred)
    assert match.ai2d_match(ref, pred) == reference.ai2d(ref, pred)
    assert match.blink_match(ref, pred) == reference.blink(ref, pred)
    assert match.exact_match(ref, pred) == int(ref == pred)
    assert match.contains(ref, pred) == int(ref in pred)


@settings(max_examples=300, deadline=None)
@given(texts)
def test_judge_reply_parsers(reply: str) -> None:
    assert first_digit_score(reply) == reference.judge_digit(reply)
    assert last_boxed(reply) == reference.boxed(reply)
    assert parse_heron(reply) == reference.heron(reply)


@settings(max_examples=300, deadline=None)
@given(texts, st.lists(st.sampled_from(["猫", "犬です", "one", "A b"]), min_size=2, max_size=4))
def test_multiple_choice(response: str, options: list[str]) -> None:
    assert parse_choice(response, options) == reference.multiple_choice(response, options)


OPEN_PIECES = [
    "答えは", "よって", "so ", "is ", "=", "＝", "。", "！", ".", " ", "\n", "1,000", "3.14",
    "2e3", "5つ", "10", "-7", "赤", "a", "Paris", "円", "%", "：", "nan", "inf",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(OPEN_PIECES), max_size=12).map("".join),
    st.sampled_from(["10", "1000", "3.14", "赤", "a", "paris", "5", "-7", "2000"]),
    st.booleans(),
)
def test_open_answers_with_a_fresh_list(response: str, answer: str, japanese: bool) -> None:
    from pfgen_fast.evalmm.choice_parsing import (
        ENGLISH_INDICATORS,
        OpenAnswerParser,
        open_answer_correct,
    )

    indicators = ["答えは", "よって"] if japanese else list(ENGLISH_INDICATORS)
    parser = OpenAnswerParser(indicators, japanese=japanese, fresh=True)
    ours = open_answer_correct(answer, parser.candidates(response))
    assert ours == reference.open_correct(answer, response, indicators, japanese)
