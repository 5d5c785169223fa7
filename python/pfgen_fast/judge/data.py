"""The judge's data: pfgen-bench runs as judge input. The answers of a run's trials file
question by question (in file order: the t-th answer to a question is trial t), the questions
and their model answers (`note`) from the benchmark's `Qxx.json` (read by the pfgen room's
`outputs`), and the run's overall score (`result.json`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pfgen_fast.common.errors import InputError
from pfgen_fast.common.jsonl import iter_json_lines, read_json_object, require
from pfgen_fast.judge.items import PairItem
from pfgen_fast.pfgen.outputs import Question, result_path, trials_file
from pfgen_fast.pfgen.outputs import load_questions as load_pfgen_questions


@dataclass(frozen=True)
class Run:
    name: str  # the run's directory as given
    directory: Path
    answers: dict[str, list[str]]  # question text -> answers in trial order


def load_questions(data_dir: Path) -> list[Question]:
    """The questions of the data directory's `Qxx.json` files, in id order (their reference
    answers not needed)."""
    return list(load_pfgen_questions(data_dir, require_answers=False).values())


def load_run(directory: Path, questions: list[Question]) -> Run:
    known = {question.question for question in questions}
    answers: dict[str, list[str]] = {}
    path = trials_file(directory)
    if path is None:
        raise InputError(f"{directory}: no trials.jsonl.xz or trials.jsonl")
    for line in iter_json_lines(path):
        question = require(line.value, "question", str, line.where)
        if question not in known:
            raise InputError(f'{line.where}: field "question": not a question of the data')
        answers.setdefault(question, []).append(require(line.value, "answer", str, line.where))
    return Run(str(directory), directory, answers)


def run_pairs(
    run_a: Run, run_b: Run, questions: list[Question], trials: int | None
) -> list[PairItem]:
    """Run A's and run B's answers to the same question in the same trial, question by question
    (id `Qxx/t`, t from 1), for the trials both runs have (at most `trials`)."""
    items = []
    for question in questions:
        a = run_a.answers.get(question.question, [])
        b = run_b.answers.get(question.question, [])
        count = min(len(a), len(b)) if trials is None else min(len(a), len(b), trials)
        for t in range(count):
            items.append(
                PairItem(
                    id=f"{question.question_id}/{t + 1}",
                    question=question.question,
                    reference=question.note,
                    answer_a=a[t],
                    answer_b=b[t],
                    model_a=run_a.name,
                    model_b=run_b.name,
                    task=question.category,
                )
            )
    if not items:
        raise InputError(f"{run_a.directory}, {run_b.directory}: no question answered by both")
    return items


def run_score(directory: Path) -> float:
    """The overall score in the run's result.json."""
    path = result_path(directory)
    value = read_json_object(path)
    return float(require(value, "score", (int, float), str(path)))
