"""Evaluating trials files: result.json and a score cache beside each (spec §7).

The work is question-major: the answers of a chunk of runs to one question are scored in one
batch, while that question's tables are hot in the CPU caches. Runs are read, question tables
built, questions scored and results written as tasks on one thread pool (the core releases the
GIL). Two chunks are in flight at once, so that the writing of one (Python, holding the GIL)
overlaps the scoring of the next (Rust, without it), and memory stays bounded by the chunks in
flight.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from pfgen_fast.common.errors import InputError, PfgenError
from pfgen_fast.common.files import write_atomically
from pfgen_fast.common.runs import RESULT_NAME, read_config
from pfgen_fast.pfgen.results import (
    ScoredQuestion,
    build_result,
    result_json,
    sample_indices,
)
from pfgen_fast.pfgen.scorer import QuestionScorer, ReferenceData, ScoreArrays, release_free_memory
from pfgen_fast.pfgen.trials import read_raw, read_trials, records_by_question

# The per-question score caches of a run: every answer with its per-answer record.
CACHE_PATH = Path("cache") / "scores.json"
# Runs scored together (at most), and chunks of runs in flight at once: their parsed answers
# are most of an evaluation's memory beside the tables.
RUNS_PER_CHUNK = 20
CHUNKS_IN_FLIGHT = 2


@dataclass
class RunOutcome:
    """What happened to one trials file."""

    path: Path
    status: str  # "scored", "skipped" (result current) or "failed"
    result: dict[str, Any] | None = None  # its result.json without "questions": `summary_of`
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    num_answers: int = 0


@dataclass
class ParsedRun:
    """A run read and checked, waiting for its scores."""

    path: Path
    input_hash: str
    config: dict[str, Any] | None
    answers: dict[str, list[dict[str, Any]]]  # by question id, file order
    warnings: list[str]
    scores: dict[str, ScoreArrays] = field(default_factory=dict)


class Evaluator:
    """Scores trials files against one data directory; tables are built once and shared."""

    def __init__(
        self,
        references: ReferenceData,
        sources: Sequence[str] | None = None,
        allow_partial: bool = False,
        force: bool = False,
        legacy_sum: bool = False,
    ) -> None:
        self.references = references
        self.sources = list(sources) if sources else None
        self.allow_partial = allow_partial
        self.force = force
        self.legacy_sum = legacy_sum
        self._tables: dict[str, Future[QuestionScorer]] = {}
        self._tables_lock = threading.Lock()
        # Set when the run is interrupted: the chunks write no further result.
        self._stopped = threading.Event()

    def sources_of(self, available: dict[str, list[str]]) -> list[str] | None:
        """With --sources, those of a question's sources that it has; a question with none of
        them (Q01, Q10, Q30 have only R) keeps all its own."""
        if self.sources is None:
            return None
        chosen = [source for source in self.sources if source in available]
        return chosen or None

    def _build(self, question_id: str) -> QuestionScorer:
        question = self.references.questions[question_id]
        return QuestionScorer(question, self.sources_of(question.answers), cache_tables=True)

    def run(
        self, paths: list[Path], jobs: int, on_done: Callable[[RunOutcome], None]
    ) -> list[RunOutcome]:
        """Evaluates every path; outcomes in the order of `paths`."""
        outcomes: dict[Path, RunOutcome] = {}
        finish_lock = threading.Lock()

        def finish(outcome: RunOutcome) -> None:
            with finish_lock:
                outcomes[outcome.path] = outcome
                on_done(outcome)

        # Chunks of equal size: a small last chunk would score its questions in tiny batches.
        num_chunks = math.ceil(len(paths) / RUNS_PER_CHUNK)
        size = math.ceil(len(paths) / num_chunks) if paths else 1
        chunks = [paths[start : start + size] for start in range(0, len(paths), size)]
        # The chunk drivers only submit tasks and wait for them; the pool's workers never wait.
        with (
            ThreadPoolExecutor(max_workers=max(1, jobs)) as pool,
            ThreadPoolExecutor(max_workers=CHUNKS_IN_FLIGHT) as drivers,
        ):
            driving = [drivers.submit(self._run_chunk, pool, chunk, finish) for chunk in chunks]
            try:
                for future in driving:
                    future.result()
            except BaseException:
                # Interrupted (SIGINT, SIGTERM): tasks not started are dropped, tables not built
                # fail their waiters, and the pools wait only for the tasks running.
                self._stop(pool, drivers)
                raise
        return [outcomes[path] for path in paths]

    def _stop(self, pool: ThreadPoolExecutor, drivers: ThreadPoolExecutor) -> None:
        self._stopped.set()
        drivers.shutdown(wait=False, cancel_futures=True)
        pool.shutdown(wait=False, cancel_futures=True)
        with self._tables_lock:
            for table in self._tables.values():
                table.cancel()  # a table not built yet: its waiters stop waiting

    def _claim_unbuilt_tables(self) -> list[str]:
        """The questions whose tables nobody has started to build; the caller builds them."""
        with self._tables_lock:
            unbuilt = [q for q in self.references.questions if q not in self._tables]
            for question_id in unbuilt:
                self._tables[question_id] = Future()
            return unbuilt

    def _build_into(self, question_id: str) -> None:
        table = self._tables[question_id]
        try:
            table.set_result(self._build(question_id))
        except BaseException as error:
            table.set_exception(error)

    def _run_chunk(
        self, pool: ThreadPoolExecutor, paths: list[Path], finish: Callable[[RunOutcome], None]
    ) -> None:
        pending: list[tuple[Path, bytes, str]] = []
        for path, read in zip(paths, pool.map(self._read_raw, paths), strict=True):
            if isinstance(read, RunOutcome):
                finish(read)
            else:
                pending.append((path, *read))
        if not pending:
            return
        # Tables are built while runs are parsed (nearly every run has every question); the
        # two kinds of task alternate so that both cores have work of each kind.
        unbuilt = self._claim_unbuilt_tables()
        parsing = []
        for index in range(max(len(unbuilt), len(pending))):
            if index < len(unbuilt):
                pool.submit(self._build_into, unbuilt[index])
            if index < len(pending):
                parsing.append(pool.submit(self._parse, *pending[index]))
        runs: list[ParsedRun] = []
        for future in parsing:
            parsed = future.result()
            if isinstance(parsed, RunOutcome):
                finish(parsed)
            else:
                runs.append(parsed)
        scoring = []
        for question_id in sorted({q for run in runs for q in run.answers}):
            scorer = self._tables[question_id].result()
            scoring.append(pool.submit(self._score_question, scorer, question_id, runs))
        for future in scoring:
            future.result()
        release_free_memory()
        # Written here, not on the pool: writing holds the GIL, and the pool's workers go on
        # with the other chunk's parsing and scoring meanwhile.
        for run in runs:
            if self._stopped.is_set():
                return
            try:
                finish(self._write(run))
            except PfgenError as error:
                finish(RunOutcome(run.path, "failed", error=str(error)))

    def _read_raw(self, path: Path) -> tuple[bytes, str] | RunOutcome:
        """The file's bytes and input hash, or the outcome when it is current or unreadable."""
        try:
            raw = read_raw(path)
        except InputError as error:
            return RunOutcome(path, "failed", error=str(error))
        input_hash = hashlib.sha1(raw).hexdigest()
        stored = self._current_result(path, input_hash)
        if stored is not None:
            return RunOutcome(path, "skipped", result=stored)
        return raw, input_hash

    def _parse(self, path: Path, raw: bytes, input_hash: str) -> ParsedRun | RunOutcome:
        """The run's answers by question, checked, or why it cannot be scored."""
        try:
            return self._parse_checked(path, raw, input_hash)
        except PfgenError as error:
            return RunOutcome(path, "failed", error=str(error))

    def _parse_checked(self, path: Path, raw: bytes, input_hash: str) -> ParsedRun:
        answers = records_by_question(read_trials(path, raw), self.references)
        warnings: list[str] = []
        missing = sorted(set(self.references.questions) - set(answers))
        if missing:
            message = f"{path}: {len(missing)} question(s) have no answers: {', '.join(missing)}"
            if not self.allow_partial:
                raise InputError(message + " (use --allow-partial to score the others)")
            warnings.append(message)
        counts = {len(question_answers) for question_answers in answers.values()}
        if len(counts) > 1:
            warnings.append(
                f"{path}: questions have different numbers of answers "
                f"({min(counts)} to {max(counts)}); num_trials is the smallest"
            )
        config = read_config(path.parent)
        return ParsedRun(path, input_hash, config, answers, warnings)

    def _current_result(self, path: Path, input_hash: str) -> dict[str, Any] | None:
        """The run's result.json when it is current (same input, data and options), else
        None."""
        result_path = path.parent / RESULT_NAME
        if self.force or not result_path.is_file():
            return None
        try:
            stored = json.loads(result_path.read_bytes())
        except (OSError, ValueError, RecursionError):
            return None
        current = (
            isinstance(stored, dict)
            and stored.get("input_hash") == input_hash
            and stored.get("metadata_hash") == self.references.metadata_hash
            and stored.get("sources") == self.sources
            and cached_legacy_sum(path.parent / CACHE_PATH) in (None, self.legacy_sum)
        )
        if not current:
            return None
        return summary_of(stored)

    def _score_question(
        self, scorer: QuestionScorer, question_id: str, runs: list[ParsedRun]
    ) -> None:
        """Scores the answers of every run to one question in a single batch."""
        holders = [run for run in runs if question_id in run.answers]
        texts = [a["answer"] for run in holders for a in run.answers[question_id]]
        arrays = scorer.score_arrays(texts, True, self.legacy_sum)
        records = arrays.records_json or []
        start = 0
        for run in holders:
            end = start + len(run.answers[question_id])
            run.scores[question_id] = ScoreArrays(
                arrays.sources,
                arrays.fluency[start:end],
                arrays.truthfulness[start:end],
                arrays.helpfulness[start:end],
                arrays.average[start:end],
                arrays.lengths[start:end],
                records[start:end],
            )
            start = end

    def _write(self, run: ParsedRun) -> RunOutcome:
        """Writes the run's score cache, then its result.json (which marks it done)."""
        scored: dict[str, ScoredQuestion] = {}
        for question_id, answers in sorted(run.answers.items()):
            arrays = run.scores[question_id]
            records = arrays.records_json or []
            samples = {i: orjson.loads(records[i]) for i in sample_indices(arrays.average)}
            question = self.references.questions[question_id].question
            scored[question_id] = ScoredQuestion(question, answers, arrays, samples)
        metadata_hash = self.references.metadata_hash
        result = build_result(
            scored, run.input_hash, metadata_hash, run.config, self.legacy_sum, self.sources
        )
        cache = cache_json(run.input_hash, metadata_hash, scored, self.legacy_sum)
        write_atomically(run.path.parent / CACHE_PATH, cache)
        write_atomically(run.path.parent / RESULT_NAME, result_json(result))
        num_answers = sum(len(answers) for answers in run.answers.values())
        return RunOutcome(
            run.path, "scored", summary_of(result), warnings=run.warnings, num_answers=num_answers
        )


def summary_of(result: dict[str, Any]) -> dict[str, Any]:
    """A result.json without its per-question part (most of it, and not shown): what an
    evaluation keeps of each run to its end, so that its memory does not grow with the runs."""
    return {key: value for key, value in result.items() if key != "questions"}


def cache_json(
    input_hash: str,
    metadata_hash: str,
    scored: dict[str, ScoredQuestion],
    legacy_sum: bool = False,
) -> bytes:
    """cache/scores.json: both hashes, the `sum()` the records were made with, and per question
    the records of its answers in file order (the records come from the core as JSON text:
    they are joined, not re-encoded)."""
    header = orjson.dumps(
        {"input_hash": input_hash, "metadata_hash": metadata_hash, "legacy_sum": legacy_sum}
    )
    questions = b",".join(
        orjson.dumps(question_id) + b":[" + b",".join(question.scores.records_json or []) + b"]"
        for question_id, question in scored.items()
    )
    return header[:-1] + b',"questions":{' + questions + b"}}"


def cached_legacy_sum(path: Path) -> bool | None:
    """The `legacy_sum` of a score cache (in its header, written first; a cache that does not
    say predates the choice and used the default), or None without a readable cache (a
    published result.json alone: either mode may have made it)."""
    try:
        with path.open("rb") as cache:
            head = cache.read(256)
    except OSError:
        return None
    return b'"legacy_sum":true' in head
