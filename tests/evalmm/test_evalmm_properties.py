"""Property tests of the string scorers against the from-spec reference
(tests/evalmm/evalmm_reference.py), on Japanese, full-width and adversarial strings."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))

import evalmm_reference as reference  # noqa: E402

from pfgen_fast.evalmm.metrics import match  # noqa: E402
from pfgen_fast.evalmm.metrics.choice_parsing import parse_choice  # noqa: E402
from pfgen_fast.evalmm.metrics.judges import first_digit_score, last_boxed, parse_heron  # noqa: E402

PIECES = [
    "one", "hundred", "Twenty", " ", "seven", "teen", "1", "１", "です", "。", "、", "はい",
    "(", ")", "A", "b", "C", "d", "E", ".", "Ｄ", "答えは", "猫", "{", "}", "\\boxed{", "```json",
    "```", '"score"', '"score_gpt"', ":", ",", "7", "8.5", '"9"', "\x07", "\n", "٣", "３",
]  # fmt: skip
texts = st.one_of(st.lists(st.sampled_from(PIECES), max_size=14).map("".join), st.text(max_size=10))


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
    from pfgen_fast.evalmm.metrics.choice_parsing import (
        ENGLISH_INDICATORS,
        OpenAnswerParser,
        open_answer_correct,
    )

    indicators = ["答えは", "よって"] if japanese else list(ENGLISH_INDICATORS)
    parser = OpenAnswerParser(indicators, japanese=japanese, fresh=True)
    ours = open_answer_correct(answer, parser.candidates(response))
    assert ours == reference.open_correct(answer, response, indicators, japanese)


MATH_PIECES = [
    "The answer is", "the answer is: ", "Answer:", "answer: ", "=", " = ", "is ", "equals",
    "equal to", " ", "\n", "2024", "1999", "1,000", "12,34", "3.14", "-5", "1e3", "2E-2", "7.",
    "１２", "٣", "$", "%", ".", ",", "abc", "¥1,000", "答えは", "x" * 30, "", "\u3000",
]  # fmt: skip
math_texts = st.one_of(
    st.lists(st.sampled_from(MATH_PIECES), max_size=10).map("".join), st.text(max_size=12)
)


@settings(max_examples=400, deadline=None)
@given(math_texts, math_texts)
def test_mathvista(ref: str, pred: str) -> None:
    from pfgen_fast.evalmm.metrics.mathvista import mathvista_match

    assert mathvista_match(ref, pred) == reference.mathvista(ref, pred)
    assert mathvista_match(pred, pred) == reference.mathvista(pred, pred)


KIE_VALUES = st.one_of(
    st.none(),
    st.sampled_from(["", " ", "¥1,000", "￥１，０００", "1000", " 1 000 ", "2024-01-01",
                     "ＡＢＣ店", "None", "none", "12:30", "{x}", "a\u3000b"]),
    st.integers(-5, 3000),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.booleans(),
    st.lists(st.integers(0, 3), max_size=2),
)  # fmt: skip
KIE_NAMES = [
    "store_name", "store_address", "receipt_id", "date", "time", "total_amount", "tax_amount",
]  # fmt: skip
line_item = st.one_of(
    st.dictionaries(st.sampled_from(["item_name", "item_price", "item_quantity", "x"]),
                    KIE_VALUES, max_size=3),
    KIE_VALUES,
)  # fmt: skip
receipts = st.dictionaries(
    st.sampled_from([*KIE_NAMES, "line_items", "other"]),
    st.one_of(KIE_VALUES, st.lists(line_item, max_size=3)),
    max_size=6,
)
KIE_PIECES = [
    "{", "}", "{}", "```json", "```", "```json\n", "\n```", "\n", " ", "[1, 2]", "null", "3",
    '"store_name": "店"', '"total_amount": "¥1,000"', ",", ":", "２０２４", '"}"', "text",
]  # fmt: skip


@st.composite
def receipt_predictions(draw: st.DrawFn) -> str:
    """A JSON receipt bare or fenced with text around it, or pieces that barely parse."""
    import json

    body = json.dumps(draw(receipts), ensure_ascii=draw(st.booleans()))
    shape = draw(st.sampled_from(["bare", "fenced", "plain-fence", "pieces", "text"]))
    if shape == "pieces":
        return "".join(draw(st.lists(st.sampled_from(KIE_PIECES), max_size=10)))
    if shape == "text":
        return draw(st.text(max_size=12))
    before, after = draw(st.sampled_from(["", "答え:", "```\n"])), draw(st.sampled_from(["", "}"]))
    if shape == "fenced":
        return f"{before}```json\n{body}\n```{after}"
    if shape == "plain-fence":
        return f"```{body}```{after}"
    return f"{before}{body}{after}"


@settings(max_examples=300, deadline=None)
@given(receipts, receipt_predictions())
def test_receipt_kie(gold: dict[str, object], pred: str) -> None:
    import json

    from pfgen_fast.evalmm.metrics.receipt_kie import score_item

    ref = json.dumps(gold, ensure_ascii=False)
    assert score_item(ref, pred) == reference.receipt_kie(ref, pred)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["Math", "Physics", "Design", "Japanese_Art", "World_History",
                             "Accounting", "Art_Theory", "History"]),
            st.integers(0, 1),
        ),
        max_size=60,
    ),
    st.booleans(),
)  # fmt: skip
def test_mmmu_aggregates(items: list[tuple[str, int]], japanese: bool) -> None:
    from pfgen_fast.evalmm.metrics import mmmu

    domains = mmmu.JMMMU_DOMAINS if japanese else mmmu.MMMU_DOMAINS
    ids = [f"validation_{subject}_{i}" for i, (subject, _) in enumerate(items)]
    scores = [score for _, score in items]
    docs = [{"id": identifier} for identifier in ids]
    ours = mmmu.aggregate(scores, docs, domains)
    expected = reference.mmmu_aggregate(scores, ids, domains)
    assert ours == expected and list(ours["details"]) == list(expected["details"])
    assert [type(v) for v in ours["details"].values()] == [
        type(v) for v in expected["details"].values()
    ]
