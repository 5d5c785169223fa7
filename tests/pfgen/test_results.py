"""result.json assembly (scoring-spec.md §7): samples, accumulated rounding, key order, byte
layout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pfgen_fast._core import pfgen as core_pfgen
from pfgen_fast.common.files import write_atomically
from pfgen_fast.pfgen.results import (
    ScoredQuestion,
    build_result,
    result_json,
    run_stats,
    scored_question,
)
from pfgen_fast.pfgen.scorer import ScoreArrays

Question = tuple[ScoredQuestion, ScoreArrays]


def made_question(
    question: str, sources: list[str], fluency: list[list[float]], averages: list[float]
) -> Question:
    """A question's answers with given scores (truthfulness = fluency / 2, helpfulness = .5)."""
    count = len(averages)
    answers = [{"question": question, "answer": "あ" * (i + 1), "extra": i} for i in range(count)]
    scores = ScoreArrays(
        sources,
        np.array(fluency, dtype=np.float64).reshape(count, len(sources)),
        np.array(fluency, dtype=np.float64).reshape(count, len(sources)) / 2,
        np.full(count, 0.5),
        np.array(averages, dtype=np.float64),
        np.arange(1, count + 1, dtype=np.float64),
    )
    records = [{"average": average} for average in averages]
    return scored_question(question, scores, answers, records), scores


def result_of(questions: dict[str, Question], config: dict[str, Any] | None) -> dict[str, Any]:
    stats = run_stats([questions[qid][1] for qid in sorted(questions)])
    scored = {qid: question for qid, (question, _) in questions.items()}
    return build_result(scored, stats, "in", "meta", config)


def sample_indices(averages: list[float]) -> list[int]:
    count = len(averages)
    scores = np.zeros((count, 1))
    values = np.array(averages, dtype=np.float64)
    return core_pfgen.question_stats(scores, scores, values, values, values).samples


def test_sample_indices_are_stable_on_ties_and_skip_repeats():
    assert sample_indices([0.3]) == [0]
    # Sorted best first: 1, 0, 2 (0 and 2 tie: file order kept); ranks pick 0, 0(.5), 1, 2(1.5), 2.
    assert sample_indices([0.5, 0.9, 0.5]) == [1, 0, 2]
    # round(0.5) == 0 and round(1.5) == 2 (Python rounds half to even).
    assert sample_indices([0.1, 0.2]) == [1, 0]
    averages = [0.1, 0.7, 0.4, 0.9, 0.2, 0.6, 0.3, 0.8, 0.5]
    assert sample_indices(averages) == [3, 1, 8, 6, 0]


def test_result_keys_samples_and_trial_scores():
    q1 = made_question("一", ["P", "R"], [[0.2, 0.4], [0.6, 0.8], [1.0, 0.0]], [0.3, 0.7, 0.5])
    q2 = made_question("二", ["R"], [[0.1], [0.3]], [0.2, 0.6])
    config = {"model": "m", "mode": "qa"}
    result = result_of({"Q02": q2, "Q01": q1}, config)
    assert list(result) == [
        "input_hash",
        "metadata_hash",
        "config",
        "num_trials",
        "score",
        "score_std",
        "length",
        "length_std",
        "scores",
        "questions",
    ]
    assert list(result["questions"]) == ["Q01", "Q02"]
    assert result["num_trials"] == 2
    trial_scores = [(0.3 + 0.2) / 2, (0.7 + 0.6) / 2]
    assert result["score"] == round(float(np.mean(trial_scores)), 4)
    assert result["score_std"] == round(float(np.std(trial_scores)), 4)
    first = result["questions"]["Q01"]
    assert first["scores"]["fluency"] == {"P": 0.6, "R": 0.4}
    assert [s["extra"] for s in first["samples"]] == [1, 2, 0]
    assert all("question" not in s for s in first["samples"])
    assert first["samples"][0]["scores"] == {"average": 0.7}
    assert list(result["scores"]["fluency"]) == ["P", "R"]  # first-seen order
    assert "config" not in result_of({"Q01": q1}, None)


def test_overall_scores_are_rounded_at_every_step():
    # Each of three questions adds round(x / 3, 5) to a running total rounded at every step.
    questions = {
        f"Q0{i}": made_question("q", ["R"], [[1 / 3]], [1 / 3 + 1e-9]) for i in range(1, 4)
    }
    result = result_of(questions, None)
    assert result["scores"]["average"] == 0.33333
    assert result["scores"]["helpfulness"] == 0.50001  # 0.16667 + 0.16667 + 0.16667
    questions = {f"Q0{i}": made_question("q", ["R"], [[1.0]], [1.0]) for i in range(1, 4)}
    assert result_of(questions, None)["scores"]["fluency"]["R"] == 0.99999


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
def test_layout_is_the_benchmarks_json_dumps(value: Any):
    expected = json.dumps(value, ensure_ascii=False, indent=2)
    assert result_json(value).decode("utf-8") == expected


def test_layout_of_small_and_large_floats():
    value = {
        "a": [5e-06, 1e-05, 0.0001, 1e16, 123.5, -0.0, 0.0, 10.00001, -2e-05, 1.5e-07, 2.5e-10],
        "日本": "語 0.00001\n",
        "b": -3e-09,
    }
    assert result_json(value).decode() == json.dumps(value, ensure_ascii=False, indent=2)


def test_atomic_write_replaces_or_leaves_the_old_file(tmp_path: Path):
    target = tmp_path / "run" / "result.json"
    write_atomically(target, b"first")
    write_atomically(target, b"second")
    assert target.read_bytes() == b"second"
    with pytest.raises(TypeError):
        write_atomically(target, "not bytes")  # type: ignore[arg-type]
    assert target.read_bytes() == b"second"
    assert [p.name for p in target.parent.iterdir()] == ["result.json"]


def test_atomic_write_gives_the_usual_file_modes(tmp_path: Path):
    # A new file gets what `open` would give it (not the temporary file's private 0o600).
    fresh = tmp_path / "new.json"
    write_atomically(fresh, b"{}")
    plain = tmp_path / "plain.json"
    plain.write_bytes(b"{}")
    assert fresh.stat().st_mode & 0o777 == plain.stat().st_mode & 0o777
    # A replaced file keeps its own mode.
    fresh.chmod(0o640)
    write_atomically(fresh, b"[]")
    assert fresh.stat().st_mode & 0o777 == 0o640
