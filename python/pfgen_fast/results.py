"""result.json of a run (scoring spec §7), from the scored answers of each question."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

from pfgen_fast.scorer import ScoreArrays

SAMPLE_RANKS = (0.0, 0.25, 0.5, 0.75, 1.0)


@dataclass(frozen=True)
class ScoredQuestion:
    """The answers of one question in file order, their scores, and the full records of the
    sampled answers (index in file order -> per-answer record, in `sample_indices` order)."""

    question: str
    answers: list[dict[str, Any]]
    scores: ScoreArrays
    sample_records: dict[int, dict[str, Any]]


def mean(values: np.ndarray) -> float:
    """`np.mean` of a 1-D float array, bit for bit (the same sum), without its overhead."""
    return float(np.add.reduce(values) / len(values))


def mean_std(values: Any, digits: int) -> tuple[float, float]:
    """(mean, population standard deviation), each rounded with Python's round: numpy's mean
    and std step by step (the same sums, bit for bit), without their per-call overhead, which
    is most of the time of a result with 50 questions of a few answers."""
    array = np.asarray(values, dtype=np.float64)
    average = mean(array)
    deviations = array - average
    std = math.sqrt(mean(deviations * deviations))
    return round(average, digits), round(std, digits)


def sample_indices(averages: np.ndarray) -> list[int]:
    """File-order indices of the answers shown as samples: ranks 0, .25, .5, .75, 1 of the
    answers sorted by average, best first (stable), without repeats."""
    order = np.argsort(-averages, kind="stable").tolist()
    picked: list[int] = []
    for rank in SAMPLE_RANKS:
        index = order[round(rank * (len(order) - 1))]
        if index not in picked:
            picked.append(index)
    return picked


def column_means(values: np.ndarray) -> list[float]:
    """`np.mean` of each column, bit for bit: each column is made contiguous first, so that
    numpy sums it pairwise as it does a single column."""
    return np.ascontiguousarray(values.T).mean(axis=1).tolist()


def question_summary(scored: ScoredQuestion) -> dict[str, Any]:
    arrays = scored.scores
    score, score_std = mean_std(arrays.average, 4)
    length, length_std = mean_std(arrays.lengths, 1)
    samples = []
    for index, record in scored.sample_records.items():
        sample = {k: v for k, v in scored.answers[index].items() if k not in ("question", "scores")}
        sample["scores"] = record
        samples.append(sample)
    fluency = column_means(arrays.fluency)
    truthfulness = column_means(arrays.truthfulness)
    return {
        "question": scored.question,
        "score": score,
        "score_std": score_std,
        "length": length,
        "length_std": length_std,
        "scores": {
            "fluency": {k: round(v, 5) for k, v in zip(arrays.sources, fluency, strict=True)},
            "truthfulness": {
                k: round(v, 5) for k, v in zip(arrays.sources, truthfulness, strict=True)
            },
            "helpfulness": round(mean(arrays.helpfulness), 5),
            "average": round(mean(arrays.average), 5),
        },
        "samples": samples,
    }


def build_result(
    scored: dict[str, ScoredQuestion],
    input_hash: str,
    metadata_hash: str,
    config: dict[str, Any] | None,
) -> dict[str, Any]:
    """The result.json object; `scored` is keyed by question id."""
    question_ids = sorted(scored)
    questions = {qid: question_summary(scored[qid]) for qid in question_ids}
    num_trials = min(len(scored[qid].answers) for qid in question_ids)
    # Row t: the t-th answer's average of every question; its mean is trial t's score.
    by_trial = np.stack([scored[qid].scores.average[:num_trials] for qid in question_ids], axis=1)
    score, score_std = mean_std(by_trial.mean(axis=1), 4)
    length, length_std = mean_std(
        np.concatenate([scored[qid].scores.lengths for qid in question_ids]), 1
    )
    # Accumulated question by question, rounding at every step, as the benchmark does.
    overall: dict[str, Any] = {"fluency": {}, "truthfulness": {}, "helpfulness": 0, "average": 0}
    count = len(question_ids)
    for qid in question_ids:
        summary = questions[qid]["scores"]
        for measure in ("fluency", "truthfulness"):
            for source, value in summary[measure].items():
                overall[measure][source] = round(overall[measure].get(source, 0) + value / count, 5)
        for measure in ("helpfulness", "average"):
            overall[measure] = round(overall[measure] + summary[measure] / count, 5)
    result: dict[str, Any] = {"input_hash": input_hash, "metadata_hash": metadata_hash}
    if config is not None:
        result["config"] = config
    result.update(
        num_trials=num_trials,
        score=score,
        score_std=score_std,
        length=length,
        length_std=length_std,
        scores=overall,
        questions=questions,
    )
    return result


# orjson spells two kinds of floats otherwise than Python's repr: 0.00001 (Python: 1e-05) and
# one-digit negative exponents (1.5e-7, Python: 1.5e-07). In the indented layout a number ends
# its line but for a comma, which no text inside a JSON string does (its line breaks are
# escaped); a decimal also starts after a space, a line break or a minus sign. The patterns
# start with literals, which the regular expression engine searches for quickly.
SMALL_DECIMAL = re.compile(rb"0\.0000(?<![^ \n-]0\.0000)[0-9]*(?=,?(?:\n|\Z))")
SHORT_EXPONENT = re.compile(rb"e-([1-9])(?=,?(?:\n|\Z))")


def result_json(result: dict[str, Any]) -> bytes:
    """The benchmark's layout, `json.dumps(result, ensure_ascii=False, indent=2)`, written by
    orjson (ten times faster), with the floats it spells differently respelled as Python does
    (the same value: orjson's text reads back as the same float)."""
    text = orjson.dumps(result, option=orjson.OPT_INDENT_2)
    text = SMALL_DECIMAL.sub(lambda number: repr(float(number[0])).encode(), text)
    return SHORT_EXPONENT.sub(rb"e-0\1", text)
