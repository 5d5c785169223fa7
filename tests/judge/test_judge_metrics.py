"""The paper's measures: the spec's section 6 integer counts give back the paper's tables, and
concordance and Fleiss' kappa agree with the from-spec reference."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from judge_reference import spec_concordance, spec_fleiss

from pfgen_fast.judge.metrics import concordance, fleiss_kappa, robustness

TASK_ITEMS = (69, 63, 75)  # K * S for 文章作成, 校正, 要約 (K = 23, 21, 25; S = 3)

# Table 2 of the paper: (文章作成, 校正, 要約, All) in %, and the spec's match counts summed over
# the three annotators; the two rows whose All cell does not follow from their counts are marked.
TABLE_2 = [
    ((53.1, 54.0, 56.9, 54.8), (110, 102, 128), True),
    ((57.0, 57.7, 68.4, 61.4), (118, 109, 154), True),
    ((71.0, 61.4, 68.4, 67.2), (147, 116, 154), False),
    ((56.0, 51.3, 46.7, 51.2), (116, 97, 105), True),
    ((58.5, 56.6, 50.2, 54.9), (121, 107, 113), True),
    ((72.0, 63.5, 59.6, 64.9), (149, 120, 134), True),
    ((69.6, 60.3, 67.1, 65.9), (144, 114, 151), True),
    ((70.5, 65.1, 68.4, 68.1), (146, 123, 154), True),
    ((74.9, 69.8, 71.1, 70.5), (155, 132, 160), False),
    ((73.9, 59.3, 65.3, 66.3), (153, 112, 147), True),
    ((74.9, 63.0, 68.0, 68.8), (155, 119, 153), True),
    ((77.3, 65.1, 70.7, 71.2), (160, 123, 159), True),
]
# Table 3: robustness in %, and the spec's counts of items without position bias.
TABLE_3 = [
    ((63.8, 77.8, 76.0, 72.5), (44, 49, 57)),
    ((69.6, 73.0, 73.3, 72.0), (48, 46, 55)),
    ((85.5, 82.5, 88.0, 85.5), (59, 52, 66)),
    ((94.2, 82.5, 85.3, 87.4), (65, 52, 64)),
]


def items_with_matches(items: int, matches: int) -> tuple[list[str | None], list[list[str]]]:
    """`items` verdicts of A and three labels each, exactly `matches` of them A; the items of
    the first annotator are filled first, then the second's, then the third's."""
    verdicts: list[str | None] = ["A"] * items
    labels = [["B", "B", "B"] for _ in range(items)]
    for slot in range(matches):
        labels[slot % items][slot // items] = "A"
    return verdicts, labels


def percent(value: float | None) -> float:
    assert value is not None
    return round(100 * value + 1e-9, 1)


@pytest.mark.parametrize(("table", "counts", "all_consistent"), TABLE_2)
def test_concordance_counts_give_table_2(
    table: tuple[float, ...], counts: tuple[int, ...], all_consistent: bool
) -> None:
    pooled_verdicts: list[str | None] = []
    pooled_labels: list[list[str]] = []
    for items, matches, expected in zip(TASK_ITEMS, counts, table, strict=False):
        verdicts, labels = items_with_matches(items, matches)
        assert percent(concordance(verdicts, labels)) == expected
        pooled_verdicts += verdicts
        pooled_labels += labels
    if all_consistent:
        assert percent(concordance(pooled_verdicts, pooled_labels)) == table[3]
    else:  # the paper's All cell is off by one of its other cells (spec section 6)
        assert percent(concordance(pooled_verdicts, pooled_labels)) != table[3]


def test_bs1_no_verdict_matches_nobody() -> None:
    assert concordance([None, "A"], [["A", "A", "C"], ["A", "B", "C"]]) == pytest.approx(1 / 6)


@pytest.mark.parametrize(("table", "counts"), TABLE_3)
def test_robustness_counts_give_table_3(table: tuple[float, ...], counts: tuple[int, ...]) -> None:
    pooled: list[bool] = []
    for items, agreeing, expected in zip(TASK_ITEMS, counts, table, strict=False):
        flags = [True] * agreeing + [False] * (items - agreeing)
        assert percent(robustness(flags)) == expected
        pooled += flags
    assert percent(robustness(pooled)) == table[3]


def test_fleiss_kappa_hand_computed() -> None:
    # P-bar = 5/9, p = (5/9, 2/9, 2/9), P-bar_e = 11/27, kappa = (15/27 - 11/27) / (16/27)
    labels = [["A", "A", "A"], ["A", "A", "B"], ["B", "C", "C"]]
    assert fleiss_kappa(labels) == pytest.approx(0.25)


def test_fleiss_kappa_undefined_cases() -> None:
    assert fleiss_kappa([["A", "A"], ["A", "A"]]) is None  # chance agreement 1
    assert fleiss_kappa([["A"], ["B"]]) is None  # one rater
    assert fleiss_kappa([]) is None


label = st.sampled_from("ABC")


@settings(max_examples=200, deadline=None)
@given(
    st.integers(2, 5).flatmap(
        lambda n: st.lists(st.lists(label, min_size=n, max_size=n), min_size=1, max_size=30)
    )
)
def test_fleiss_kappa_matches_reference(labels: list[list[str]]) -> None:
    expected = spec_fleiss(labels)
    actual = fleiss_kappa(labels)
    if expected is None:
        assert actual is None
    else:
        assert actual == pytest.approx(expected, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda n: st.lists(
            st.tuples(st.one_of(st.none(), label), st.lists(label, min_size=n, max_size=n)),
            min_size=1,
            max_size=30,
        )
    )
)
def test_concordance_matches_reference(rows: list[tuple[str | None, list[str]]]) -> None:
    verdicts = [v for v, _ in rows]
    labels = [row for _, row in rows]
    assert concordance(verdicts, labels) == pytest.approx(spec_concordance(verdicts, labels))
