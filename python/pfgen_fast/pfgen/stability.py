"""Source stability (the paper's Fig. 4-6): every run scored against one reference source at a
time, and the Pearson r of each pair of sources.

Only the questions that have all three sources P, S and T take part (37 of the 50: Q01, Q10
and Q30 have only R, a few others only some of P, S, T): every source is then judged on the
same questions, and no question's shared score hides the differences. A run's score is the
benchmark's (mean over trials of the mean over questions) over those questions.
"""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.markup import escape

from pfgen_fast.common.cpus import usable_cpus
from pfgen_fast.common.errors import InputError, PfgenError
from pfgen_fast.pfgen.data import Question
from pfgen_fast.pfgen.exactness import mean
from pfgen_fast.pfgen.outputs import TRIALS_NAMES, read_config, trials_file
from pfgen_fast.pfgen.scorer import QuestionScorer, ReferenceData, build_scorers
from pfgen_fast.pfgen.trials import (
    given_up,
    read_raw,
    read_trials,
    records_by_question,
)

STABILITY_SOURCES = ("P", "S", "T")


@dataclass(frozen=True)
class RunAnswers:
    """The answers of a run by question id (file order), and what the run was."""

    path: Path
    mode: str
    answers: dict[str, list[str]]


@dataclass(frozen=True)
class SourceScores:
    """Each run's score against each single source (runs in order, one array per source)."""

    runs: list[RunAnswers]
    scores: dict[str, np.ndarray]

    def pearson(self) -> dict[tuple[str, str], float | None]:
        return pearson_by_pair(self.scores)


def pearson_by_pair(scores: dict[str, np.ndarray]) -> dict[tuple[str, str], float | None]:
    """Pearson's r of the runs' scores for each pair of sources; None where the scores against
    either source do not vary, as r is then undefined (`no_correlation` says why)."""
    return {
        (a, b): None
        if constant(scores[a]) or constant(scores[b])
        # the scores vary: corrcoef divides by no zero
        else float(np.corrcoef(scores[a], scores[b])[0, 1])
        for a, b in itertools.combinations(scores, 2)
    }


def constant(values: np.ndarray) -> bool:
    return bool(np.all(values == values[0]))


def no_correlation(a: str, b: str, scores: dict[str, np.ndarray]) -> str:
    """Why the pair has no r: which source's scores do not vary, and their one value."""
    source = a if constant(scores[a]) else b
    values = scores[source]
    return (
        f"{a} vs {b}: no Pearson r: the {len(values)} runs' scores against {source} are all "
        f"{float(values[0]):.5f} (a correlation needs scores that vary)"
    )


def print_pearson(scores: dict[str, np.ndarray], basis: str, console: Console) -> bool:
    """Each pair's r on standard output (`P vs S: r = 0.99924 (basis)`), or why it has none as
    an error on `console`; False when some pair has none."""
    pearson = pearson_by_pair(scores)
    for (a, b), r in pearson.items():
        if r is not None:
            print(f"{a} vs {b}: r = {r:.5f} ({basis})")
    for (a, b), r in pearson.items():
        if r is None:
            console.print(f"[red]error:[/] {escape(no_correlation(a, b, scores))}")
    return None not in pearson.values()


def read_run(path: Path, references: ReferenceData) -> RunAnswers:
    """The trials beside a result.json (or a trials file itself), grouped by question."""
    trials_path = path if path.name in TRIALS_NAMES else trials_file(path.parent)
    if trials_path is None:
        raise InputError(f"{path.parent}: no trials.jsonl.xz or trials.jsonl beside {path.name}")
    trials = read_trials(trials_path, read_raw(trials_path))
    # Answers the runner gave up on are left out, as `eval` leaves them out.
    answers = {
        question_id: [record["answer"] for record in records if not given_up(record)]
        for question_id, records in records_by_question(trials, references).items()
    }
    missing = sorted(q for q in references.questions if not answers.get(q))
    if missing:
        raise InputError(f"{trials_path}: no answers to {', '.join(missing)}")
    # The mode only tells completion runs from chat runs in the figures: an unreadable
    # config.json leaves it empty.
    try:
        config = read_config(trials_path.parent) or {}
    except PfgenError:
        config = {}
    return RunAnswers(trials_path, str(config.get("mode", "")), answers)


def stability_questions(
    questions: dict[str, Question], sources: tuple[str, ...] = STABILITY_SOURCES
) -> list[Question]:
    """The questions having all of `sources`, in id order; an InputError if there are none."""
    chosen = [q for q in questions.values() if set(sources) <= set(q.answers)]
    if not chosen:
        raise InputError(f"no question of the data has all of the sources {', '.join(sources)}")
    return sorted(chosen, key=lambda question: question.question_id)


def single_source_scorers(
    references: ReferenceData, sources: tuple[str, ...]
) -> dict[str, dict[str, QuestionScorer]]:
    """Per source, a scorer against that source alone for each question having all sources."""
    questions = stability_questions(references.questions, sources)
    return {source: build_scorers(questions, [source]) for source in sources}


def result_source_scores(
    path: Path, data: dict[str, Any], question_ids: list[str], legacy_sum: bool = False
) -> dict[str, float]:
    """A run's score against each single source, from its result.json alone: per question, an
    answer's per-source values are its single-source fluency and truthfulness divided by the
    question's K sources (scoring-spec.md §6), so the question's single-source mean is
    (K·fluency[s] + K·truthfulness[s] + helpfulness) / 3 of its means; the run's score is the
    mean over the questions. The same as scoring every answer against that source
    (`run_scores`) up to result.json's rounding (5 decimals) when every question has the same
    number of answers. An InputError names a question or source the result lacks."""
    questions = data["questions"]
    scores = {}
    for source in STABILITY_SOURCES:
        values = []
        for question_id in question_ids:
            if question_id not in questions:
                raise InputError(f"{path}: no question {question_id} (source stability needs it)")
            means = questions[question_id]["scores"]
            fluency, truthfulness = means["fluency"], means["truthfulness"]
            if source not in fluency or source not in truthfulness:
                raise InputError(
                    f"{path}: {question_id} was not scored against source {source} "
                    "(source stability needs P, S and T)"
                )
            k = len(fluency)
            values.append(
                (k * fluency[source] + k * truthfulness[source] + means["helpfulness"]) / 3
            )
        scores[source] = mean(values, legacy_sum)
    return scores


def run_scores(
    runs: list[RunAnswers], scorers: dict[str, QuestionScorer], legacy_sum: bool = False
) -> np.ndarray:
    """The benchmark's run score (mean over trials of the mean over questions, with its
    `sum()`) of each run, each question's answers of all runs scored in one batch."""
    question_ids = sorted(scorers)

    def averages(question_id: str) -> np.ndarray:
        texts = [text for run in runs for text in run.answers[question_id]]
        return scorers[question_id].score_arrays(texts, legacy_sum=legacy_sum).average

    with ThreadPoolExecutor(max_workers=usable_cpus()) as pool:
        by_question = dict(zip(question_ids, pool.map(averages, question_ids), strict=True))
    scores = np.empty(len(runs))
    offsets = dict.fromkeys(question_ids, 0)
    for index, run in enumerate(runs):
        num_trials = min(len(run.answers[q]) for q in question_ids)
        table = np.empty((num_trials, len(question_ids)))
        for column, question_id in enumerate(question_ids):
            start = offsets[question_id]
            table[:, column] = by_question[question_id][start : start + num_trials]
            offsets[question_id] = start + len(run.answers[question_id])
        scores[index] = mean([mean(row, legacy_sum) for row in table.tolist()], legacy_sum)
    return scores


def source_scores(
    paths: list[Path], references: ReferenceData, console: Console, legacy_sum: bool = False
) -> SourceScores:
    """Reads every run (reporting those that cannot be read) and scores it per source."""
    runs = []
    for path in paths:
        try:
            runs.append(read_run(path, references))
        except PfgenError as error:
            console.print(f"[yellow]skipped:[/] {escape(str(error))}")
    if len(runs) < 2:
        raise InputError("source stability needs at least two runs with trials files")
    scorers = single_source_scorers(references, STABILITY_SOURCES)
    return SourceScores(
        runs, {s: run_scores(runs, scorers[s], legacy_sum) for s in STABILITY_SOURCES}
    )
