"""result.json's numbers from the core (`question_stats`, `run_stats`) against the benchmark's
computation written from the spec (§7) with the official `sum()` of both interpreter
generations; and the chunk reader's answers about what it does not have."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_sums import official_sum

from pfgen_fast._core import pfgen as core_pfgen

# Scores as the records round them; a few values repeat, so that averages tie.
score_values = st.sampled_from([0.0, 0.1, 0.25, 1 / 3, 0.5, 0.66667, 0.9, 1.0]) | st.floats(0, 1)


def reference_mean(values: list[float], legacy_sum: bool) -> float:
    return official_sum(values, legacy_sum) / len(values)


def reference_mean_std(values: list[float], digits: int, legacy_sum: bool) -> tuple[float, float]:
    average = reference_mean(values, legacy_sum)
    variance = reference_mean([(v - average) * (v - average) for v in values], legacy_sum)
    return round(average, digits), round(math.sqrt(variance), digits)


def reference_question(
    fluency: list[list[float]], helpfulness: list[float], average: list[float],
    lengths: list[float], legacy_sum: bool,
) -> dict[str, object]:  # fmt: skip
    """The benchmark's per-question numbers: means over the answers sorted by average, best
    first (a stable sort), and the answers at ranks 0, .25, .5, .75, 1 of that order."""
    order = sorted(range(len(average)), key=lambda i: -average[i])
    averages = [average[i] for i in order]
    score = reference_mean_std(averages, 4, legacy_sum)
    length = reference_mean_std([lengths[i] for i in order], 1, legacy_sum)
    sources = len(fluency[0])
    columns = [
        round(reference_mean([fluency[i][k] for i in order], legacy_sum), 5) for k in range(sources)
    ]
    samples: list[int] = []
    for rank in (0.0, 0.25, 0.5, 0.75, 1.0):
        index = order[round(rank * (len(order) - 1))]
        if index not in samples:
            samples.append(index)
    return {
        "score": score,
        "length": length,
        "fluency": columns,
        "helpfulness": round(reference_mean([helpfulness[i] for i in order], legacy_sum), 5),
        "average": round(reference_mean(averages, legacy_sum), 5),
        "samples": samples,
    }


@st.composite
def question_scores(draw: st.DrawFn) -> tuple[list[list[float]], list[float], list[float]]:
    count = draw(st.integers(1, 40))
    sources = draw(st.integers(1, 3))
    row = st.lists(score_values, min_size=sources, max_size=sources)
    fluency = draw(st.lists(row, min_size=count, max_size=count))
    average = draw(st.lists(score_values, min_size=count, max_size=count))
    lengths = draw(st.lists(st.integers(0, 400).map(float), min_size=count, max_size=count))
    return fluency, average, lengths


@settings(max_examples=150, deadline=None)
@given(question_scores(), st.booleans())
def test_question_numbers_are_the_benchmarks(scores, legacy_sum: bool):
    fluency, average, lengths = scores
    helpfulness = [a / 2 for a in average]
    array = np.array(fluency, dtype=np.float64)
    stats = core_pfgen.question_stats(
        array, array / 2, np.array(helpfulness), np.array(average), np.array(lengths), legacy_sum
    )
    expected = reference_question(fluency, helpfulness, average, lengths, legacy_sum)
    assert (stats.score, stats.score_std) == expected["score"]
    assert (stats.length, stats.length_std) == expected["length"]
    assert stats.fluency == expected["fluency"]
    assert (stats.helpfulness, stats.average) == (expected["helpfulness"], expected["average"])
    assert stats.samples == expected["samples"]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.lists(score_values, min_size=1, max_size=12), min_size=1, max_size=6),
    st.booleans(),
)
def test_run_numbers_are_the_benchmarks(averages: list[list[float]], legacy_sum: bool):
    lengths = [[float(len(a) + i) for i in range(len(a))] for a in averages]
    stats = core_pfgen.run_stats(
        [np.array(a) for a in averages], [np.array(values) for values in lengths], legacy_sum
    )
    num_trials = min(len(a) for a in averages)
    trials = [reference_mean([a[t] for a in averages], legacy_sum) for t in range(num_trials)]
    assert stats.num_trials == num_trials
    assert (stats.score, stats.score_std) == reference_mean_std(trials, 4, legacy_sum)
    every_length = [value for values in lengths for value in values]
    assert (stats.length, stats.length_std) == reference_mean_std(every_length, 1, legacy_sum)


def test_what_a_chunk_does_not_have(tmp_path):
    paths = [tmp_path / "empty.jsonl", tmp_path / "one.jsonl"]
    paths[0].write_bytes(b"")
    paths[1].write_bytes(b'{"question": "q", "answer": "a"}\n')
    chunk = core_pfgen.TrialsChunk(paths, [False, False], [None, None], ["q", "r"])
    assert chunk.careful_bytes(0) == b"" and chunk.careful_bytes(1) is None
    assert chunk.counts(1).tolist() == [1, 0]
    assert chunk.lines(1, 0, [0]) == [b'{"question": "q", "answer": "a"}']
    with pytest.raises(IndexError):
        chunk.lines(1, 0, [1])
    with pytest.raises(IndexError):
        chunk.lines(0, 0, [0])
    with pytest.raises(ValueError, match="not scored"):
        chunk.question_stats(1, 0)
    with pytest.raises(ValueError):
        core_pfgen.run_stats([], [])
