"""The Python API around the core: errors and shapes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pfgen_fast import DataError, InputError, QuestionScorer, ReferenceData, build_scorers


@pytest.fixture(scope="module")
def references(data_dir: Path) -> ReferenceData:
    return ReferenceData.load(data_dir)


def test_metadata_hash_of_the_published_data(references: ReferenceData):
    assert references.metadata_hash == "13581cc9df3fb849ec9293bcec2b03de1a48ecc2"
    assert list(references.questions) == [f"Q{i:02d}" for i in range(1, 51)]


def test_lone_surrogate_is_an_input_error(references: ReferenceData):
    scorer = QuestionScorer(references.questions["Q02"])
    with pytest.raises(InputError, match="answer 1 is not valid Unicode"):
        scorer.score(["正しい", "a\ud800b"])


def test_unknown_source_names_the_file(references: ReferenceData):
    with pytest.raises(DataError, match=r"Q01\.json: answers has no source 'P'"):
        QuestionScorer(references.questions["Q01"], sources=["P"])


def test_arrays_follow_the_chosen_sources(references: ReferenceData):
    question = references.questions["Q04"]
    both = QuestionScorer(question, sources=["T", "S"])
    arrays = both.score_arrays(["算数と数学の違い", ""])
    assert arrays.sources == ["T", "S"]
    assert arrays.fluency.shape == (2, 2) and arrays.average.shape == (2,)
    assert np.all(arrays.fluency[1] == 0.0)
    assert arrays.lengths.tolist() == [8.0, 0.0]  # in characters
    record = both.score(["算数と数学の違い"])[0]
    assert list(record["fluency"]) == ["T", "S"]
    assert record["fluency"]["T"] == arrays.fluency[0, 0]


def test_build_scorers_builds_every_question(references: ReferenceData):
    questions = [references.questions[q] for q in ("Q01", "Q02", "Q03")]
    scorers = build_scorers(questions)
    assert list(scorers) == ["Q01", "Q02", "Q03"]
    assert all(scorer.table_bytes > 0 for scorer in scorers.values())
    assert scorers["Q01"].baselines.keys() == {"R"}


@pytest.mark.parametrize("question_id", ["Q01", "Q04", "Q21"])
def test_json_records_are_the_records_json_dumps_writes(
    references: ReferenceData, question_id: str
):
    # Over 512 answers: the records are written on every thread.
    question = references.questions[question_id]
    answers = [a[: 7 * i % 230] for i, a in enumerate(next(iter(question.answers.values())))]
    answers = (answers + ["", "。", '\x00\n"\\', "𠮷" * 3])[:700]
    scorer = QuestionScorer(question)
    expected = [json.dumps(r, ensure_ascii=False).encode() for r in scorer.score(answers)]
    assert scorer.score_json(answers) == expected


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity is Linux's")
def test_worker_threads_follow_the_cpus_the_process_may_run_on() -> None:
    # Pinned to one CPU (as by `taskset`), a process starts one worker, not one per CPU of
    # the machine: more would only take turns on that CPU.
    code = (
        "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
        "from pfgen_fast.common.cpus import usable_cpus; print(usable_cpus())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "1"
