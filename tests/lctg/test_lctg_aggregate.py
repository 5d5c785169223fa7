"""The score table against the from-spec reference, which goes through the text files the
benchmark's scripts write and read back (hypothesis), and the rounding quirks as cases."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lctg_reference import reference_table

from pfgen_fast.lctg.aggregate import COLUMNS, constraint_scores, score_row
from pfgen_fast.lctg.data import CONSTRAINTS


def table(
    ctg: dict[str, list[list[bool | None]]], quality: dict[str, list[list[bool | str]]]
) -> dict[str, str]:
    row = score_row({c: constraint_scores(ctg[c], quality[c]) for c in CONSTRAINTS})
    assert list(row) == COLUMNS
    return {name: f"{value:.3f}" for name, value in row.items()}


def counts_to_results(total: int, satisfied: list[int]) -> list[list[bool | None]]:
    return [[True] * s + [False] * (total - s) for s in satisfied]


@st.composite
def runs(draw: st.DrawFn) -> tuple[dict, dict]:
    rows = draw(st.integers(1, 12))
    ctg_value = st.sampled_from([True, False, None])
    # Quality labels: at least one parseable label per iteration.
    label = st.sampled_from([True, False, "適切です。", "わかりません"])
    iteration = st.lists(label, min_size=rows, max_size=rows).filter(
        lambda labels: any(isinstance(x, bool) for x in labels)
    )
    ctg = {
        c: [draw(st.lists(ctg_value, min_size=rows, max_size=rows)) for _ in range(3)]
        for c in CONSTRAINTS
    }
    quality = {c: [draw(iteration) for _ in range(3)] for c in CONSTRAINTS}
    return ctg, quality


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(runs())
def test_table_matches_the_reference(run: tuple[dict, dict]) -> None:
    ctg, quality = run
    assert table(ctg, quality) == reference_table(ctg, quality)


def uniform(ctg_counts: list[int], quality_counts: list[int], total: int = 120) -> dict:
    ctg = {c: counts_to_results(total, ctg_counts) for c in CONSTRAINTS}
    quality = {c: counts_to_results(total, quality_counts) for c in CONSTRAINTS}
    return table(ctg, quality)  # type: ignore[arg-type]


def test_ctg_rounds_each_iteration_before_averaging() -> None:
    # Quirk 8: counts (0, 1, 1) of 120: 0.000, 0.008, 0.008 -> 0.005; the exact 2/360 is 0.006.
    # Quality of the same counts keeps the iterations unrounded: 0.006.
    row = uniform([0, 1, 1], [0, 1, 1])
    assert row["Format-ctg"] == "0.005"
    assert row["Format-qual"] == "0.006"


def test_cells_round_half_even_on_the_binary_value() -> None:
    # 1/16 = 0.0625 exactly: Python's "{:.3f}" gives 0.062.
    row = uniform([1, 1, 1], [1, 1, 1], total=16)
    assert row["Format-ctg"] == "0.062"
    assert row["Avg-qual"] == "0.062"


def test_none_counts_as_failure_and_stays_in_the_denominator() -> None:
    ctg = {c: [[True, None, False, None]] * 3 for c in CONSTRAINTS}
    quality = {c: [[True, True, True, True]] * 3 for c in CONSTRAINTS}
    assert table(ctg, quality)["Format-ctg"] == "0.250"  # type: ignore[arg-type]


def test_unparseable_replies_leave_the_denominator() -> None:
    ctg = {c: [[True, True, True, True]] * 3 for c in CONSTRAINTS}
    quality = {c: [[True, False, "適切です。", "**適切**"]] * 3 for c in CONSTRAINTS}
    assert table(ctg, quality)["Format-qual"] == "0.500"  # type: ignore[arg-type]


def test_an_iteration_without_a_parseable_reply_has_no_quality() -> None:
    scores = constraint_scores([[True]] * 3, [[True], ["不明"], [False]])
    assert scores.quality is None
    assert scores.quality_iterations == [1.0, None, 0.0]
    row = score_row({c: scores for c in CONSTRAINTS})
    assert row["Format-qual"] is None and row["Avg-qual"] is None
    assert row["Format-ctg"] == 1.0


def test_averages_use_unrounded_ctg_means_and_rounded_quality_means() -> None:
    # Three constraints at counts (0, 0, 1) of 1000 (mean 0.000333, shown 0.000), one at
    # (1, 1, 2) (0.001333, shown 0.001): from the unrounded means the average is 0.000583
    # (0.001); from the shown ones it would be 0.00025 (0.000). Quality is averaged from its
    # shown means: 0.000.
    counts = {"format": [0, 0, 1], "char_count": [0, 0, 1], "keyword": [0, 0, 1]}
    counts["prohibited_word"] = [1, 1, 2]
    ctg = {c: counts_to_results(1000, counts[c]) for c in CONSTRAINTS}
    quality = {c: counts_to_results(1000, counts[c]) for c in CONSTRAINTS}
    row = table(ctg, quality)  # type: ignore[arg-type]
    assert row == reference_table(ctg, quality)  # type: ignore[arg-type]
    assert (row["Format-ctg"], row["P-word-ctg"], row["Avg-ctg"]) == ("0.000", "0.001", "0.001")
    assert (row["Format-qual"], row["P-word-qual"], row["Avg-qual"]) == ("0.000", "0.001", "0.000")
