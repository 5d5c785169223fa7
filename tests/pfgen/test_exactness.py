"""The core's records equal the from-spec reference scorer's, exactly, on random and adversarial
answers: special lengths, excluded punctuation, literal ^ and $, astral characters, combining
marks, control characters, width variants, edited reference answers and published trial answers.
Questions with 1, 2 and 3 sources, a subset of sources, and a synthetic question whose keyword
rules are real regular expressions (and/or/name/importance) are covered.

Equality is exact (not §9's last-digit tolerance): the core follows the spec's operation order."""

from __future__ import annotations

import json
import lzma
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pfgen_bench import published_runs
from pfgen_fast import QuestionScorer
from pfgen_fast._core import pfgen as core_pfgen
from pfgen_fast.pfgen.data import Question, load_questions
from reference_scorer import EXCLUDED, ReferenceScorer

# Deterministic and database-less, so CI runs the same examples every time.
EXACTNESS = settings(
    max_examples=200,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Q01: one source (R); Q16: two (P, S); Q13 and Q48: three, with nested and/or and importance.
QUESTION_IDS = ["Q01", "Q16", "Q13", "Q48"]

# Lengths where a cut-off or discount changes: 100/150 (discounts), 200/202 (cuts), 1000+.
SPECIAL_LENGTHS = [0, 1, 2, 3, *range(99, 103), *range(149, 153), *range(199, 204), 1000, 1237]

ASTRAL = ["😀", "𠮷", "🎌", "👨\u200d👩\u200d👧", "\U0001f1ef\U0001f1f5", "𩸽"]
COMBINING = ["\u0301", "\u3099", "\u309a", "か\u3099", "e\u0301"]
CONTROL = ["\x00", "\x01", "\x1f", "\x7f", "\n", "\t", "\r", "\u2028", "\u200b", "\ufeff"]
WIDTH_VARIANTS = ["Ａ", "A", "ａ", "１", "1", "ｱ", "ア", "！", "!", "？", "?", "　", " "]
# Look-alikes of the excluded marks that are not excluded (§4), and regex metacharacters.
NOT_EXCLUDED = ["，", "．", "(", ")", "[", "]", "<", ">", "｡", "｢", "｣", "､", "･", "〔", "〕"]
REGEX_META = [".", "*", "+", "?", "{", "}", "|", "\\", "-"]
ADVERSARIAL = [
    *sorted(EXCLUDED),
    *ASTRAL,
    *COMBINING,
    *CONTROL,
    *WIDTH_VARIANTS,
    *NOT_EXCLUDED,
    *REGEX_META,
]


def answers_of_trials(question_texts: set[str]) -> dict[str, list[str]]:
    """The answers of every published trials file to the given questions, by question text."""
    answers: dict[str, list[str]] = {text: [] for text in question_texts}
    for run in published_runs():
        with lzma.open(run / "trials.jsonl.xz", "rt", encoding="utf-8") as lines:
            for line in lines:
                trial = json.loads(line)
                if trial["question"] in answers:
                    answers[trial["question"]].append(trial["answer"])
    return answers


class Pair:
    """The core and the reference scorer of the same question and sources."""

    def __init__(self, core: QuestionScorer, reference: ReferenceScorer) -> None:
        self.question = reference.question
        self.core = core
        self.reference = reference

    def assert_same(self, answers: Sequence[str]) -> None:
        """Records (key order included) and arrays of the core equal the reference's, with
        either `sum()` (Python >= 3.12's, and <= 3.11's: `legacy_sum`)."""
        for legacy_sum in (False, True):
            records = self.core.score(answers, legacy_sum)
            arrays = self.core.score_arrays(answers, legacy_sum=legacy_sum)
            assert arrays.sources == self.reference.sources
            for index, (answer, record) in enumerate(zip(answers, records, strict=True)):
                expected = self.reference.score_record(answer, legacy_sum)
                where = (
                    f"{self.question.question_id} {self.reference.sources} "
                    f"legacy_sum={legacy_sum} answer {answer!r}"
                )
                assert json.dumps(record) == json.dumps(expected), where
                assert arrays.fluency[index].tolist() == list(expected["fluency"].values())
                assert arrays.truthfulness[index].tolist() == list(
                    expected["truthfulness"].values()
                )
                assert arrays.helpfulness[index] == expected["helpfulness"], where
                assert arrays.average[index] == expected["average"], where


# Session fixtures: a pytest worker may come back to this module after another one, and a
# module fixture would build the reference tables again.
@pytest.fixture(scope="session")
def questions(data_dir: Path) -> dict[str, Question]:
    return load_questions(data_dir, set(QUESTION_IDS))


@pytest.fixture(scope="session")
def pairs(questions: dict[str, Question]) -> dict[str, Pair]:
    return {
        question_id: Pair(QuestionScorer(question), ReferenceScorer.build(question))
        for question_id, question in questions.items()
    }


@pytest.fixture(scope="session")
def trial_answers(questions: dict[str, Question]) -> dict[str, list[str]]:
    """Published trial answers by question id."""
    by_text = answers_of_trials({q.question for q in questions.values()})
    return {q.question_id: by_text[q.question] for q in questions.values()}


def strings(alphabet: list[str], min_size: int = 0, max_size: int = 260) -> st.SearchStrategy[str]:
    """Concatenations of alphabet pieces (some pieces are several code points long)."""
    return st.lists(st.sampled_from(alphabet), min_size=min_size, max_size=max_size).map("".join)


def edited(texts: st.SearchStrategy[str], alphabet: list[str]) -> st.SearchStrategy[str]:
    """A text with a few insertions, deletions and replacements of adversarial characters."""
    kinds = st.sampled_from(["insert", "delete", "replace"])
    edits = st.lists(
        st.tuples(st.integers(0, 10_000), kinds, st.sampled_from(alphabet)), max_size=4
    )

    def apply(text: str, changes: list[tuple[int, str, str]]) -> str:
        for position, kind, char in changes:
            at = position % (len(text) + 1)
            if kind == "insert":
                text = text[:at] + char + text[at:]
            elif kind == "delete":
                text = text[:at] + text[at + 1 :]
            else:
                text = text[:at] + char + text[at + 1 :]
        return text

    return st.builds(apply, texts, edits)


def sized(texts: st.SearchStrategy[str], alphabet: list[str]) -> st.SearchStrategy[str]:
    """Realistic text cut to a special length, with a few same-length replacements."""

    def cut(pieces: list[str], length: int, changes: list[tuple[int, str]]) -> str:
        text = "".join(pieces)
        while len(text) < length:
            text += text or "あ"
        chars = list(text[:length])
        for position, char in changes:
            if chars:
                chars[position % len(chars)] = char
        return "".join(chars)

    pieces = st.lists(texts, min_size=1, max_size=3)
    replacements = st.lists(
        st.tuples(st.integers(0, 10_000), st.sampled_from(alphabet)), max_size=3
    )
    return st.builds(cut, pieces, st.sampled_from(SPECIAL_LENGTHS), replacements)


def answers_strategy(references: list[str], trials: list[str]) -> st.SearchStrategy[str]:
    """Random text over the references' characters and adversarial ones, edited reference and
    trial answers, and such texts cut at every special length."""
    reference_chars = sorted(set("".join(references[:50])))
    alphabet = ADVERSARIAL + reference_chars
    realistic = st.sampled_from(references) | st.sampled_from(trials)
    return st.one_of(
        strings(alphabet),
        strings(ADVERSARIAL, max_size=120),
        edited(realistic, alphabet),
        sized(realistic, alphabet),
    )


@pytest.mark.slow
@pytest.mark.parametrize("question_id", QUESTION_IDS)
def test_random_and_adversarial_answers(
    question_id: str, pairs: dict[str, Pair], trial_answers: dict[str, list[str]]
) -> None:
    pair = pairs[question_id]
    references = [a for refs in pair.question.answers.values() for a in refs]
    answers = answers_strategy(references, trial_answers[question_id])
    strategy = st.lists(answers, min_size=1, max_size=4)

    @EXACTNESS
    @given(strategy)
    def check(answers: list[str]) -> None:
        pair.assert_same(answers)

    check()


@pytest.mark.slow
@pytest.mark.parametrize("question_id", QUESTION_IDS)
def test_published_trial_answers_in_one_large_batch(
    question_id: str, pairs: dict[str, Pair], trial_answers: dict[str, list[str]]
) -> None:
    # Every 4th of the published answers (all runs): over 512, so the core scores this batch on
    # all its threads.
    answers = trial_answers[question_id][::4]
    assert len(answers) >= 600
    pairs[question_id].assert_same(answers)


@pytest.mark.parametrize("mark", sorted(EXCLUDED))
def test_every_excluded_mark(mark: str, pairs: dict[str, Pair]) -> None:
    pair = pairs["Q13"]
    reference = pair.question.answers[pair.reference.sources[0]][0] * 3
    answers = [mark, mark * 3, mark * 120, mark * 210]
    for position in (0, 1, 50, 98, 99, 100, 101, 149, 150, 198, 199, 200, 201):
        answers.append(reference[:position] + mark + reference[position:])
        answers.append(mark * position + reference)
    pair.assert_same(answers)


@pytest.mark.parametrize("sources", [["T", "S"], ["P"], ["S", "P", "T"], ["T", "P", "S"]])
def test_subset_and_order_of_sources(
    sources: list[str], pairs: dict[str, Pair], trial_answers: dict[str, list[str]]
) -> None:
    full = pairs["Q13"]
    pair = Pair(QuestionScorer(full.question, sources), full.reference.restricted_to(sources))
    pair.assert_same(trial_answers["Q13"][:150])


@pytest.mark.slow
@pytest.mark.parametrize("question_id", QUESTION_IDS)
def test_report_trigram_coverage(
    question_id: str, pairs: dict[str, Pair], trial_answers: dict[str, list[str]]
) -> None:
    pair = pairs[question_id]
    references = [a for refs in pair.question.answers.values() for a in refs]

    @EXACTNESS
    @given(st.lists(answers_strategy(references, trial_answers[question_id]), max_size=3))
    def check(texts: list[str]) -> None:
        expected = [df for text in texts for df in pair.reference.trigram_df(text)]
        assert core_pfgen.trigram_coverage(references, texts).tolist() == expected, repr(texts)

    check()


# A question built here: tiny reference lists (so n-gram hits are frequent) and keyword rules
# that are real regular expressions, nested and/or, names and importances.
SYNTHETIC_KEYWORDS: list[dict[str, Any]] = [
    {"t": "a+b"},
    {"name": "either end", "or": [{"t": "^x"}, {"t": "y$"}, {"t": "[0-9]{2}"}]},
    {"and": [{"t": "(?i)abc"}, {"t": "c.d", "name": "c-any-d"}], "importance": 0.5},
    {"t": "\\d+円", "importance": 0.25},
    {"t": "z*"},
    {"or": [{"and": [{"t": "\\."}, {"t": "."}]}, {"t": "(?=ab)"}, {"t": "円"}], "importance": 0.3},
    {"t": "𠮷|😀"},
    {"t": "b\\b"},
    # Literals (no metacharacter): astral and punctuation, offsets in code points.
    {"t": "𠮷野"},
    {"t": "、。"},
    {"t": "dd", "importance": 0.0},
]
# References holding literal ^ and $: 3-grams with them have document frequencies.
SYNTHETIC_ANSWERS = {
    "X": ["abcd", "abc円", "xyz", "ab12円です。", "𠮷野家の「abc」", "^ab", "cd$"],
    "Y": ["12円", "a.b", "cad", "x^y$z"],
}
SYNTHETIC_ALPHABET = [*"abcdxyzABC0123円. ", "、。", "^", "$", "𠮷", "😀", "\n", "\x00", "１"]


@pytest.fixture(scope="module")
def synthetic() -> Pair:
    question = Question(
        question_id="Q99",
        question="synthetic",
        category="",
        note="",
        keywords=SYNTHETIC_KEYWORDS,
        answers=SYNTHETIC_ANSWERS,
        path=Path("synthetic/Q99.json"),
    )
    return Pair(QuestionScorer(question), ReferenceScorer.build(question))


@EXACTNESS
@given(
    st.lists(
        strings(SYNTHETIC_ALPHABET, max_size=30)
        | sized(strings(SYNTHETIC_ALPHABET, 1, 40), SYNTHETIC_ALPHABET),
        min_size=1,
        max_size=4,
    )
)
def test_synthetic_question_with_regex_keywords(synthetic: Pair, answers: list[str]) -> None:
    synthetic.assert_same(answers)


def test_synthetic_question_regex_paths(synthetic: Pair) -> None:
    # Hand-picked answers: each rule satisfied late, early or never, around the 100/150/200 cuts.
    answers = [
        "",
        "x",
        "xaab12円abc.dy",
        "ABCcXd" + " " * 95 + "aab",
        " " * 140 + "aab 12円",
        " " * 199 + "aab",
        "zzzab" + "." * 100,
        "𠮷" * 101 + "😀",
        "abc、。" * 40,
        "b" + "𠮷" * 120 + "𠮷野dd",
        "d$",
        "^^ab$$",
    ]
    synthetic.assert_same(answers)


# Few characters, so that n-grams repeat within and across reference answers.
RANDOM_REFERENCE_ALPHABET = [*"あいうえお。、ab"]


# Reference answers: short random texts, and random texts repeated to a special length
# (99-102 and 149-152 among them: where the discount starts, and where Fluency stops).
RANDOM_REFERENCES = st.lists(
    strings(RANDOM_REFERENCE_ALPHABET, 1, 30)
    | sized(strings(RANDOM_REFERENCE_ALPHABET, 1, 40), RANDOM_REFERENCE_ALPHABET),
    min_size=1,
    max_size=12,
).filter(any)  # a source needs a non-empty answer (else its baseline is 0)


@EXACTNESS
@given(
    st.lists(RANDOM_REFERENCES, min_size=1, max_size=3),
    st.lists(strings(RANDOM_REFERENCE_ALPHABET, max_size=170), max_size=3),
)
def test_random_reference_answers(sources: list[list[str]], answers: list[str]) -> None:
    # Tables and baselines (scoring-spec.md §2) of reference answers drawn at random, many past the
    # 100 characters where the length discount starts, then answers scored against them.
    question = Question(
        question_id="Q98",
        question="random references",
        category="",
        note="",
        keywords=[],
        answers=dict(zip("PST", sources, strict=False)),
        path=Path("random/Q98.json"),
    )
    core = QuestionScorer(question)
    reference = ReferenceScorer.build(question)
    assert core.baselines == {key: table.baseline for key, table in reference.tables.items()}
    Pair(core, reference).assert_same(answers)


def test_empty_batch(pairs: dict[str, Pair]) -> None:
    core = pairs["Q13"].core
    assert core.score([]) == []
    arrays = core.score_arrays([])
    assert arrays.fluency.shape == arrays.truthfulness.shape == (0, 3)
    assert arrays.helpfulness.shape == arrays.average.shape == (0,)
