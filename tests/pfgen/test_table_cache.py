"""The table cache (`pfgen.table_cache`): tables read back score alike, damaged or missing
files are built again, and the cache can be off or unwritable without harm."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pfgen_fast import QuestionScorer, ReferenceData
from pfgen_fast.common.errors import DataError
from pfgen_fast.pfgen import table_cache
from pfgen_fast.pfgen.data import Question
from pfgen_fast.pfgen.table_cache import core_build, table_file


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PFGEN_FAST_CACHE", str(tmp_path))
    return tmp_path


@pytest.fixture(scope="module")
def questions(data_dir: Path) -> dict[str, Question]:
    return ReferenceData.load(data_dir).questions


@pytest.fixture(scope="module")
def built(questions: dict[str, Question]) -> dict[str, QuestionScorer]:
    """Scorers built without the cache: Q01 has one source, Q04 three."""
    return {q: QuestionScorer(questions[q]) for q in ("Q01", "Q04")}


def same_scores(a: QuestionScorer, b: QuestionScorer, answers: list[str]) -> bool:
    first, second = a.score_arrays(answers), b.score_arrays(answers)
    return all(
        np.array_equal(getattr(first, name), getattr(second, name))
        for name in ("fluency", "truthfulness", "helpfulness", "average")
    )


def sample_answers(question: Question) -> list[str]:
    """Reference answers and edited ones, cut at various lengths."""
    references = [answer for answers in question.answers.values() for answer in answers[:30]]
    return references + [answer[::-1][:150] + "。" for answer in references] + ["", "あ"]


@pytest.mark.parametrize("question_id", ["Q01", "Q04"])
def test_tables_read_back_score_alike(
    cache: Path, questions: dict[str, Question], built: dict[str, QuestionScorer], question_id
):
    question = questions[question_id]
    first = QuestionScorer(question, cache_tables=True)
    path = table_file(question, list(question.answers))
    assert path is not None and path.is_file() and path.is_relative_to(cache / "tables")
    written = path.stat().st_ino
    second = QuestionScorer(question, cache_tables=True)
    assert path.stat().st_ino == written  # read, not written again
    answers = sample_answers(question)
    assert same_scores(first, built[question_id], answers)
    assert same_scores(second, built[question_id], answers)
    assert second.baselines == built[question_id].baselines
    assert second.table_bytes == built[question_id].table_bytes


@settings(max_examples=60, deadline=None)
@given(
    answers=st.lists(
        st.text(alphabet="算数の合計はつるかめ、。「」😀a^$", max_size=220), max_size=20
    )
)
def test_read_tables_score_random_answers_alike(
    questions: dict[str, Question], built: dict[str, QuestionScorer], answers: list[str]
):
    question = questions["Q04"]
    assert same_scores(QuestionScorer(question, cache_tables=True), built["Q04"], answers)


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "garbage"])
def test_a_damaged_file_is_built_again(
    cache: Path, questions: dict[str, Question], built: dict[str, QuestionScorer], damage: str
):
    question = questions["Q01"]
    QuestionScorer(question, cache_tables=True)
    path = table_file(question, list(question.answers))
    assert path is not None
    data = path.read_bytes()
    damaged = {
        "truncate": data[: len(data) // 2],
        "flip": data[: len(data) // 2]
        + bytes([data[len(data) // 2] ^ 1])
        + data[len(data) // 2 + 1 :],
        "empty": b"",
        "garbage": b"not a table file" * 100,
    }[damage]
    path.write_bytes(damaged)
    scorer = QuestionScorer(question, cache_tables=True)
    assert same_scores(scorer, built["Q01"], sample_answers(question))
    assert path.read_bytes() == data  # replaced by the tables built again


def test_other_sources_or_answers_have_their_own_file(cache: Path, questions: dict[str, Question]):
    question = questions["Q04"]
    edited = dataclasses.replace(
        question, answers={**question.answers, "S": [*question.answers["S"][:-1], "別の答え"]}
    )
    paths = {
        table_file(question, list(question.answers)),
        table_file(question, list(question.answers)[:1]),
        table_file(question, list(question.answers)[::-1]),
        table_file(edited, list(edited.answers)),
    }
    assert len(paths) == 4


def dated(path: Path, days_ago: float) -> None:
    when = time.time() - days_ago * 86400
    os.utime(path, (when, when))


def test_the_least_recently_used_tables_leave_a_full_cache(
    cache: Path, questions: dict[str, Question], monkeypatch: pytest.MonkeyPatch
):
    ids = ["Q01", "Q02", "Q03", "Q04"]
    files = {q: table_file(questions[q], list(questions[q].answers)) for q in ids}
    for q in ids:
        QuestionScorer(questions[q], cache_tables=True)
    sizes = {q: path.stat().st_size for q, path in files.items()}
    files["Q04"].unlink()
    # Another build's file, used long ago; Q02 written before Q03; Q01 read just now.
    stale = cache / "tables" / "0123456789abcdef" / "old.tables"
    stale.parent.mkdir()
    stale.write_bytes(b"x" * 1000)
    dated(stale, 30)
    # What writers killed long ago left, and the temporary file of one writing now.
    killed = files["Q01"].with_name("killed.tables.1.2.tmp")
    killed.write_bytes(b"x")
    dated(killed, 1)
    writing = files["Q01"].with_name("writing.tables.3.4.tmp")
    writing.write_bytes(b"x")
    for q, days in (("Q01", 3), ("Q02", 2), ("Q03", 1)):
        dated(files[q], days)
    QuestionScorer(questions["Q01"], cache_tables=True)
    # Room for Q01, Q03 and Q04: writing Q04 drops the stale file and Q02, then the empty
    # folder of the other build.
    monkeypatch.setattr(
        table_cache, "CACHE_LIMIT_BYTES", sizes["Q01"] + sizes["Q03"] + sizes["Q04"]
    )
    QuestionScorer(questions["Q04"], cache_tables=True)
    assert sorted(p.name for p in (cache / "tables").iterdir()) == [core_build()]
    assert {q for q, path in files.items() if path.exists()} == {"Q01", "Q03", "Q04"}
    assert writing.exists() and not killed.exists()


def test_cache_off_or_unwritable(
    tmp_path: Path, questions: dict[str, Question], built, monkeypatch: pytest.MonkeyPatch
):
    question = questions["Q01"]
    monkeypatch.setenv("PFGEN_FAST_CACHE", str(tmp_path / "off"))
    monkeypatch.setenv("PFGEN_FAST_TABLE_CACHE", "0")
    assert table_file(question, list(question.answers)) is None
    assert same_scores(QuestionScorer(question, cache_tables=True), built["Q01"], ["算数"])
    assert not (tmp_path / "off").exists()
    monkeypatch.delenv("PFGEN_FAST_TABLE_CACHE")
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    monkeypatch.setenv("PFGEN_FAST_CACHE", str(not_a_folder))
    assert same_scores(QuestionScorer(question, cache_tables=True), built["Q01"], ["算数"])
    assert os.listdir(tmp_path) == ["file"]


def test_text_the_core_refuses_is_reported_not_cached(cache: Path, questions: dict[str, Question]):
    broken = dataclasses.replace(questions["Q01"], answers={"R": ["a\ud800b", "c"]})
    assert table_file(broken, ["R"]) is None
    with pytest.raises(DataError, match="not valid Unicode text"):
        QuestionScorer(broken, cache_tables=True)
