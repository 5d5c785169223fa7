"""Golden test: every sample stored in every published `result.json` (`questions.*.samples`)
gets its stored `scores` back from the core, within the tolerance of scoring-spec.md §9."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pfgen_bench import each_published_run, published_runs
from pfgen_fast import QuestionScorer, ReferenceData, build_scorers
from reference_scorer import record_differences


@pytest.fixture(scope="session")
def core_scorers(data_dir: Path) -> dict[str, QuestionScorer]:
    """All 50 questions' tables, built once for the session."""
    return build_scorers(ReferenceData.load(data_dir).questions.values())


def test_every_published_run_is_checked() -> None:
    assert len(published_runs()) >= 60


@pytest.mark.parametrize("run", each_published_run(), ids=lambda run: "/".join(run.parts[-3:-1]))
def test_core_reproduces_published_samples(
    run: Path, core_scorers: dict[str, QuestionScorer]
) -> None:
    result = json.loads((run / "result.json").read_text(encoding="utf-8"))
    failures = []
    for question_id, question_result in result["questions"].items():
        samples = question_result["samples"]
        records = core_scorers[question_id].score([sample["answer"] for sample in samples])
        for index, (record, sample) in enumerate(zip(records, samples, strict=True)):
            problems = record_differences(record, sample["scores"])
            if problems:
                failures.append(f"{question_id} sample {index}: {'; '.join(problems)}")
    assert len(result["questions"]) == 50
    assert not failures, "\n".join(failures[:20])
