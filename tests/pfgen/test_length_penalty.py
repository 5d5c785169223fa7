"""Answers over the 100-character limit (a `字超過` entry in helpfulness_results): the official
scorer's records of published answers (pfgen-bench-cases, read through `PFGEN_BENCH_CASES`),
reproduced in both `sum()` modes by the core, the `score` command and the reference scorer;
and adversarial answers around the length limits, core against the from-spec reference.

The record's `average` adds the rounded helpfulness (as it adds the rounded per-source values):
with the unrounded one, answers whose exact average is a tie at the fifth digit end up one
digit off."""

from __future__ import annotations

import json
import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference_sums import official_sum

from cli_runner import run_cli
from pfgen_fast import QuestionScorer, ReferenceData
from pfgen_fast.pfgen.data import Question
from reference_scorer import ReferenceScorer, helpfulness

pytestmark = pytest.mark.slow

SETTINGS = settings(
    max_examples=300,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# Where the length discount starts (100), where it reaches 0 (150), where Helpfulness stops
# reading (200); one either side of each.
LIMITS = [99, 100, 101, 149, 150, 151, 199, 200, 201]


# Session fixtures: a pytest worker may come back to this module after another one, and a
# module fixture would build the reference tables again.
@pytest.fixture(scope="session")
def cases(bench_cases: Path) -> list[dict[str, Any]]:
    """The published over-length answers with the official scorer's records."""
    with (bench_cases / "length-penalty.jsonl").open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="session")
def case_questions(cases: list[dict[str, Any]], data_dir: Path) -> dict[str, Question]:
    """The questions of the cases, by question text."""
    data = ReferenceData.load(data_dir)
    return {case["question"]: data.by_text(case["question"]) for case in cases}


@pytest.fixture(scope="session")
def case_scorers(
    case_questions: dict[str, Question],
) -> dict[str, tuple[QuestionScorer, ReferenceScorer]]:
    """The core's and the reference's scorers of the cases' questions, by question text."""
    return {
        text: (QuestionScorer(question), ReferenceScorer.build(question))
        for text, question in case_questions.items()
    }


def record_text(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False)


def assert_core_equals_reference(
    core: QuestionScorer, reference: ReferenceScorer, answers: list[str]
) -> None:
    """Records as JSON text (dicts and the core's own JSON) equal the reference's, both modes."""
    for legacy_sum in (False, True):
        records = core.score(answers, legacy_sum)
        records_json = core.score_json(answers, legacy_sum)
        for answer, record, text in zip(answers, records, records_json, strict=True):
            expected = record_text(reference.score_record(answer, legacy_sum))
            where = f"legacy_sum={legacy_sum} answer {answer!r}"
            assert record_text(record) == expected, where
            assert text.decode() == expected, where


def test_the_cases_are_over_length_answers(cases: list[dict[str, Any]]) -> None:
    assert len(cases) == 6
    for case in cases:
        assert case["scores"]["helpfulness_results"][-1][0].endswith("字超過")


def test_published_over_length_records_in_both_modes(
    cases: list[dict[str, Any]], case_scorers: dict[str, tuple[QuestionScorer, ReferenceScorer]]
) -> None:
    for case in cases:
        core, reference = case_scorers[case["question"]]
        expected = record_text(case["scores"])
        for legacy_sum in (False, True):
            where = f"legacy_sum={legacy_sum} {case['question']}"
            assert record_text(core.score([case["answer"]], legacy_sum)[0]) == expected, where
            assert core.score_json([case["answer"]], legacy_sum)[0].decode() == expected, where
            assert record_text(reference.score_record(case["answer"], legacy_sum)) == expected


def test_score_command_writes_the_published_records_in_both_modes(
    cases: list[dict[str, Any]], data_dir: Path, tmp_path: Path
) -> None:
    lines = [
        json.dumps({"question": case["question"], "answer": case["answer"]}, ensure_ascii=False)
        for case in cases
    ]
    (tmp_path / "answers.jsonl").write_text("".join(f"{line}\n" for line in lines), "utf-8")
    expected = "".join(
        f'{line[:-1]}, "scores": {record_text(case["scores"])}}}\n'
        for line, case in zip(lines, cases, strict=True)
    )
    for flags in ((), ("--legacy-sum",)):
        done = run_cli("score", "answers.jsonl", "--data", data_dir, *flags, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout == expected, flags


def test_published_answers_moved_across_the_limits(
    cases: list[dict[str, Any]], case_scorers: dict[str, tuple[QuestionScorer, ReferenceScorer]]
) -> None:
    # Each answer cut at the limits, and pushed right by filler so that its keywords end at
    # every distance past 100.
    for case in cases:
        core, reference = case_scorers[case["question"]]
        answer = case["answer"]
        answers = [answer[:length] for length in LIMITS]
        answers += ["ー" * shift + answer for shift in range(0, 60, 3)]
        answers += [answer[shift:] for shift in range(0, 60, 7)]
        assert_core_equals_reference(core, reference, answers)


# A question built here: keyword rules with importances below 1 (factors that are not exact
# decimals once multiplied by the length discount), a regex rule, and/or with names.
KEYWORDS: list[dict[str, Any]] = [
    {"t": "鍵"},
    {"t": "扉", "importance": 0.3},
    {"name": "窓か門", "or": [{"t": "窓"}, {"t": "門"}], "importance": 0.5},
    {"and": [{"t": "庭"}, {"t": "池"}], "importance": 0.25},
    {"t": "[0-9]+年", "importance": 0.7},
]
KEYWORD_TEXTS = ["鍵", "扉", "窓", "門", "庭", "池", "12年"]
FILLER = [*"あいうえおかきくけこさしすせそ", "。", "、", "「", "」"]
# Short references over the filler and the keywords: n-gram hits everywhere, so Fluency and
# Truthfulness take many different values.
REFERENCES = {
    "P": ["あいうえお鍵かきくけこ", "さしすせそ扉。", "「窓」あいう", "庭と池、かきく"],
    "S": ["うえおかき12年", "こさし門すせ", "鍵扉窓庭池あ", "けこさしすせそ。"],
    "T": ["おかきくけ、鍵", "あいうえおかきくけこさしすせそ", "池庭門"],
}


@pytest.fixture(scope="module")
def synthetic() -> tuple[QuestionScorer, ReferenceScorer]:
    question = Question(
        question_id="Q97",
        question="over-length synthetic",
        category="",
        note="",
        keywords=KEYWORDS,
        answers=REFERENCES,
        path=Path("synthetic/Q97.json"),
    )
    return QuestionScorer(question), ReferenceScorer.build(question)


@st.composite
def over_length_answers(draw: st.DrawFn) -> str:
    """Filler of a length at or near a limit, with some keywords placed anywhere, mostly
    around the limits."""
    length = draw(st.sampled_from(LIMITS) | st.integers(90, 210))
    chars = draw(st.lists(st.sampled_from(FILLER), min_size=length, max_size=length))
    for keyword in KEYWORD_TEXTS:
        if draw(st.booleans()):
            end = draw(st.sampled_from(LIMITS) | st.integers(len(keyword), 160))
            start = max(0, min(end, len(chars)) - len(keyword))
            chars[start : start + len(keyword)] = keyword
    return "".join(chars)


@SETTINGS
@given(st.lists(over_length_answers(), min_size=1, max_size=4))
def test_adversarial_over_length_answers(
    synthetic: tuple[QuestionScorer, ReferenceScorer], answers: list[str]
) -> None:
    core, reference = synthetic
    assert_core_equals_reference(core, reference, answers)


def grid_answers() -> list[str]:
    """The must-have keyword ending at every place from 95 to 155, in answers of lengths at the
    limits, with the other rules satisfied or not; the filler changes with the end."""
    answers = []
    for end in range(95, 156):
        for length in (end, 150, 151, 200, 201):
            filler = [FILLER[(end * 7 + i * i) % len(FILLER)] for i in range(max(length, end))]
            if end % 3:
                filler[0:1] = "扉"
            if end % 2:
                filler[3:5] = "庭池"
            filler[10:14] = "12年門"
            filler[end - 1] = "鍵"
            answers.append("".join(filler[:length]))
    return answers


def test_keywords_ending_at_every_distance_past_the_limit(
    synthetic: tuple[QuestionScorer, ReferenceScorer],
) -> None:
    core, reference = synthetic
    assert_core_equals_reference(core, reference, grid_answers())


def is_tie(reference: ReferenceScorer, answer: str) -> bool:
    """Whether the exact decimal average of the answer's rounded values is a tie at the
    fifth digit (where the last bits of the float operations decide the rounding)."""
    record = reference.score_record(answer)
    values = [*record["fluency"].values(), *record["truthfulness"].values()]
    total = sum(Decimal(repr(v)) for v in [*values, record["helpfulness"]])
    return (total / 3 * 100_000) % 1 == Decimal("0.5")


def unrounded_average(reference: ReferenceScorer, answer: str, legacy_sum: bool) -> float:
    """The average with the unrounded helpfulness (as scoring-spec.md §6 words it)."""
    record = reference.score_record(answer, legacy_sum)
    fluency_sum = official_sum(record["fluency"].values(), legacy_sum)
    truth_sum = official_sum(record["truthfulness"].values(), legacy_sum)
    value, _ = helpfulness(answer, KEYWORDS)
    return round((fluency_sum + truth_sum + value) / 3, 5)


def test_over_length_answers_whose_average_is_a_tie(
    synthetic: tuple[QuestionScorer, ReferenceScorer],
) -> None:
    # A seeded stream of answers whose must-have keyword ends past 100, the other rules
    # satisfied anywhere or not at all; the first 40 ties are kept.
    core, reference = synthetic
    rng = random.Random(36)
    ties: list[str] = []
    while len(ties) < 40:
        length = rng.choice([101, *LIMITS[3:], rng.randint(101, 210)])
        chars = [rng.choice(FILLER) for _ in range(length)]
        for keyword in KEYWORD_TEXTS[1:]:
            if rng.random() < 0.5:
                start = max(0, min(rng.randint(len(keyword), 160), length) - len(keyword))
                chars[start : start + len(keyword)] = keyword
        chars[rng.randint(101, min(length, 149)) - 1] = "鍵"
        answer = "".join(chars)
        if is_tie(reference, answer):
            ties.append(answer)
    assert_core_equals_reference(core, reference, ties)
    # The unrounded helpfulness would break some of these ties the other way.
    for legacy_sum in (False, True):
        averages = core.score_arrays(ties, legacy_sum=legacy_sum).average.tolist()
        flipped = [
            answer
            for answer, average in zip(ties, averages, strict=True)
            if unrounded_average(reference, answer, legacy_sum) != average
        ]
        assert flipped, legacy_sum
