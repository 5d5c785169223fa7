"""Evaluating trials files: result.json and a score cache beside each (scoring-spec.md §7).

The work is question-major: the answers of a chunk of runs to one question are scored in one
batch, while that question's tables are hot in the CPU caches. The core reads a chunk's files
(hashed, decompressed, cut into lines, grouped by question, the files in parallel:
`TrialsChunk`), scores each question over the chunk and keeps the scores and records, so that
no Python object is made per answer; Python checks the runs, parses the sampled lines only, and
writes. A run whose result.json is current but for the input hash is not decompressed when its
file's hash, taken as the core reads it, is that result's. A run the core is not sure about (a
line it does not take, marked and unmarked lines together, a question not in the data, ...) is
read by Python's own reader (`trials.read_trials`), which words its error or takes its odd
lines. Reading, table building and scoring run as tasks on one thread pool, with the GIL
released; two chunks are in flight at once, so that the writing of one (Python, holding the
GIL) overlaps the reading and scoring of the next, and memory stays bounded by the chunks in
flight.

A run whose lines all carry the runners' `generated` mark (pfgen-bench after its PR #94) is read
by the core like any other: only its generated answers are scored (the core counts those given
up per question, for the checks), and its result.json has the later evaluator's layout
(`results.build_result`); docs/pfgen-upstream.md.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from pfgen_fast._core import pfgen as core_pfgen
from pfgen_fast.common.errors import InputError, PfgenError
from pfgen_fast.pfgen.data import BENCHMARK_QUESTIONS
from pfgen_fast.pfgen.outputs import read_config
from pfgen_fast.pfgen.results import (
    CACHE_PATH,
    ScoredQuestion,
    ValidTrials,
    build_result,
    cache_json,
    cached_legacy_sum,
    run_stats,
    scored_question,
    stored_result,
    valid_trials,
    write_result,
)
from pfgen_fast.pfgen.scorer import QuestionScorer, ReferenceData, ScoreArrays, release_free_memory
from pfgen_fast.pfgen.trials import given_up, read_trials, records_by_question

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
    valid_trials: ValidTrials | None = None  # where answers were given up on
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    num_answers: int = 0


@dataclass
class ChunkRun:
    """A run read by the core (`TrialsChunk`) and checked: its scores are kept in the chunk."""

    path: Path
    input_hash: str
    config: dict[str, Any] | None
    chunk: core_pfgen.TrialsChunk
    index: int  # in the chunk
    counts: dict[str, int]  # answers by question id, of the questions with answers
    warnings: list[str]
    marked: bool  # its lines carry `generated`; `counts` are of the generated answers

    @property
    def question_ids(self) -> list[str]:
        """The questions with answers, in result.json's order."""
        return sorted(self.counts)


@dataclass
class ParsedRun:
    """A run the core left to Python (`TrialsChunk.careful`), read and checked, waiting for
    its scores."""

    path: Path
    input_hash: str
    config: dict[str, Any] | None
    answers: dict[str, list[dict[str, Any]]]  # by question id, file order
    warnings: list[str]
    marked: bool  # its lines carry `generated`; `answers` holds the generated ones only
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
        # Data with only some of the benchmark's questions (a reference set of `build-refs`):
        # each run is scored on those, its answers to the others left out.
        self.partial_data = len(references.questions) < BENCHMARK_QUESTIONS
        self._tables: dict[str, Future[QuestionScorer]] = {}
        self._tables_lock = threading.Lock()
        # Set when the run is interrupted: the chunks write no further result.
        self._stopped = threading.Event()
        # The core numbers the questions in this order.
        self._question_ids = list(references.questions)
        self._numbers = {question_id: n for n, question_id in enumerate(self._question_ids)}
        self._question_texts = [q.question for q in references.questions.values()]

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

    def _start_building_tables(self, pool: ThreadPoolExecutor) -> list[str]:
        """Builds on the pool the tables nobody has started to build; returns their questions."""
        with self._tables_lock:
            unbuilt = [q for q in self.references.questions if q not in self._tables]
            for question_id in unbuilt:
                self._tables[question_id] = Future()
        for question_id in unbuilt:
            pool.submit(self._build_into, question_id)
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
        stored = list(pool.map(self._stored_result, paths))
        reading = pool.submit(self._read_chunk, paths, stored)
        # Tables are built while the core reads the runs (nearly every run has every question),
        # unless every run may still be current.
        building: list[str] = []
        if any(result is None for result in stored):
            building = self._start_building_tables(pool)
        chunk = reading.result()
        pending: list[tuple[int, Path]] = []
        for index, (path, result) in enumerate(zip(paths, stored, strict=True)):
            errno = chunk.read_error(index)
            if errno is not None:
                error = f"{path}: cannot read: {os.strerror(errno)}"
                finish(RunOutcome(path, "failed", error=error))
            elif chunk.is_current(index):
                assert result is not None
                summary, valid = summary_of(result), valid_trials(result)
                finish(RunOutcome(path, "skipped", summary, valid_trials=valid))
            else:
                pending.append((index, path))
        if not pending:
            return
        if not building:
            building = self._start_building_tables(pool)
        fast, careful = self._check_runs(chunk, pending, finish)
        del pending
        question_ids = {q for run in fast for q in run.counts}
        question_ids.update(q for run in careful for q in run.answers)
        scoring = []
        for question_id in sorted(question_ids):
            scorer = self._tables[question_id].result()
            scoring.append(
                pool.submit(self._score_question, scorer, question_id, chunk, fast, careful)
            )
        for future in scoring:
            future.result()
        if building:
            # The scratch memory of table building goes back to the OS; the chunks' own memory
            # is kept for the next chunks to reuse.
            release_free_memory()
        # Written here, not on the pool: writing holds the GIL, and the pool's workers go on
        # with the other chunk's reading and scoring meanwhile.
        written: list[ChunkRun | ParsedRun] = [*fast, *careful]
        written.sort(key=lambda run: paths.index(run.path))
        for run in written:
            if self._stopped.is_set():
                return
            try:
                finish(self._write(run))
            except PfgenError as error:
                finish(RunOutcome(run.path, "failed", error=str(error)))

    def _check_runs(
        self,
        chunk: core_pfgen.TrialsChunk,
        pending: list[tuple[int, Path]],
        finish: Callable[[RunOutcome], None],
    ) -> tuple[list[ChunkRun], list[ParsedRun]]:
        """The runs the core read, checked, and those it left to Python, read by Python and
        checked; the outcome of each run that cannot be scored is reported."""
        fast: list[ChunkRun] = []
        careful: list[ParsedRun] = []
        for index, path in pending:
            input_hash = chunk.input_hash(index)
            assert input_hash is not None
            raw = chunk.careful_bytes(index)
            if raw is None:
                checked: ChunkRun | ParsedRun | RunOutcome = self._check_chunk_run(
                    chunk, index, path, input_hash
                )
            else:
                checked = self._parse(path, raw, input_hash)
            if isinstance(checked, RunOutcome):
                finish(checked)
            elif isinstance(checked, ChunkRun):
                fast.append(checked)
            else:
                careful.append(checked)
        return fast, careful

    def _read_chunk(
        self, paths: list[Path], stored: list[dict[str, Any] | None]
    ) -> core_pfgen.TrialsChunk:
        """The core's reading of the runs (hashed; unless current, decompressed and grouped by
        question), the GIL released."""
        current_hashes = [None if result is None else result["input_hash"] for result in stored]
        return core_pfgen.TrialsChunk(
            paths,
            [path.name.endswith(".xz") for path in paths],
            current_hashes,
            self._question_texts,
        )

    def _check_chunk_run(
        self, chunk: core_pfgen.TrialsChunk, index: int, path: Path, input_hash: str
    ) -> ChunkRun | RunOutcome:
        counts = dict(zip(self._question_ids, chunk.counts(index).tolist(), strict=True))
        answers = {q: count for q, count in counts.items() if count}
        marked = chunk.is_marked(index)
        try:
            if marked:
                given_up = zip(self._question_ids, chunk.given_up(index).tolist(), strict=True)
                lines = {q: counts[q] + gone for q, gone in given_up if counts[q] + gone}
                warnings = self._check_marked_counts(path, lines, {q: counts[q] for q in lines})
            else:
                warnings = self._check_counts(path, answers)
            config = read_config(path.parent)
        except PfgenError as error:
            return RunOutcome(path, "failed", error=str(error))
        return ChunkRun(path, input_hash, config, chunk, index, answers, warnings, marked)

    def _parse(self, path: Path, raw: bytes, input_hash: str) -> ParsedRun | RunOutcome:
        """The run's answers by question, checked, or why it cannot be scored."""
        try:
            return self._parse_checked(path, raw, input_hash)
        except PfgenError as error:
            return RunOutcome(path, "failed", error=str(error))

    def _parse_checked(self, path: Path, raw: bytes, input_hash: str) -> ParsedRun:
        trials = read_trials(path, raw)
        answers = records_by_question(trials, self.references, leave_out_others=self.partial_data)
        if trials.marked:
            answers, warnings = self._generated_answers(path, answers)
        else:
            warnings = self._check_counts(path, {q: len(a) for q, a in answers.items()})
        config = read_config(path.parent)
        return ParsedRun(path, input_hash, config, answers, warnings, trials.marked)

    def _generated_answers(
        self, path: Path, answers: dict[str, list[dict[str, Any]]]
    ) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
        """A marked run's generated answers by question (of the questions with any), and the
        warnings about it (`_check_marked_counts`)."""
        generated = {q: [a for a in records if not given_up(a)] for q, records in answers.items()}
        warnings = self._check_marked_counts(
            path,
            {q: len(records) for q, records in answers.items()},
            {q: len(records) for q, records in generated.items()},
        )
        return {q: records for q, records in generated.items() if records}, warnings

    def _check_marked_counts(
        self, path: Path, lines: dict[str, int], generated: dict[str, int]
    ) -> list[str]:
        """The warnings about a marked run from its numbers of lines and of generated answers
        by question (of the questions with lines). A question without any generated answer is
        left out like a question without answers: an InputError unless partial runs are
        allowed; a run without any is an InputError."""
        missing = sorted(set(self.references.questions) - set(lines))
        empty = sorted(q for q, count in generated.items() if not count)
        problems = []
        if missing:
            problems.append(f"{len(missing)} question(s) have no answers: {', '.join(missing)}")
        if empty:
            problems.append(
                f"{len(empty)} question(s) have no generated answer (the runner gave up every "
                f"one): {', '.join(empty)}"
            )
        kept = [count for count in generated.values() if count]
        if not kept:
            raise InputError(f"{path}: no generated answer (the runner gave up every one)")
        warnings = []
        if problems:
            message = f"{path}: {'; '.join(problems)}"
            if not self.allow_partial:
                raise InputError(message + " (use --allow-partial to score the others)")
            warnings.append(message)
        dropped = sum(lines.values()) - sum(generated.values())
        if dropped:
            counts = sorted(set(kept))
            valid = f"{counts[0]} to {counts[-1]}" if len(counts) > 1 else str(counts[0])
            warnings.append(
                f"{path}: {dropped} answer(s) the runner gave up on are not scored; "
                f"{valid} valid trials per question (num_trials is the largest)"
            )
        return warnings

    def _check_counts(self, path: Path, counts: dict[str, int]) -> list[str]:
        """The warnings about a run's numbers of answers by question; an InputError when
        questions have none, unless partial runs are allowed, or when all have none."""
        if not counts:  # possible when the data holds only some of the questions
            raise InputError(f"{path}: no answers to the questions of the data")
        warnings: list[str] = []
        missing = sorted(set(self.references.questions) - set(counts))
        if missing:
            message = f"{path}: {len(missing)} question(s) have no answers: {', '.join(missing)}"
            if not self.allow_partial:
                raise InputError(message + " (use --allow-partial to score the others)")
            warnings.append(message)
        numbers = set(counts.values())
        if len(numbers) > 1:
            warnings.append(
                f"{path}: questions have different numbers of answers "
                f"({min(numbers)} to {max(numbers)}); num_trials is the smallest"
            )
        return warnings

    def _stored_result(self, path: Path) -> dict[str, Any] | None:
        """The run's result.json when it is current but for the input hash (same data and
        options), else None; the core compares the input hash."""
        if self.force:
            return None
        stored = stored_result(path.parent)
        current = (
            isinstance(stored, dict)
            and isinstance(stored.get("input_hash"), str)
            and stored.get("metadata_hash") == self.references.metadata_hash
            and stored.get("sources") == self.sources
            and cached_legacy_sum(path.parent / CACHE_PATH) in (None, self.legacy_sum)
        )
        return stored if current else None

    def _score_question(
        self,
        scorer: QuestionScorer,
        question_id: str,
        chunk: core_pfgen.TrialsChunk,
        fast: list[ChunkRun],
        careful: list[ParsedRun],
    ) -> None:
        """Scores the answers of every run to one question: those the core read in a single
        batch (the scores kept in the chunk), those read by Python in another."""
        runs = [run.index for run in fast if question_id in run.counts]
        if runs:
            number = self._numbers[question_id]
            scorer.score_chunk(chunk, number, runs, self.legacy_sum)
        holders = [run for run in careful if question_id in run.answers]
        if not holders:
            return
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

    def _write(self, run: ChunkRun | ParsedRun) -> RunOutcome:
        """Writes the run's score cache, then its result.json (which marks it done)."""
        if isinstance(run, ChunkRun):
            scored, stats, cache_questions = self._scored_chunk_run(run)
        else:
            scored, stats, cache_questions = self._scored_parsed_run(run)
        metadata_hash = self.references.metadata_hash
        result = build_result(
            scored, stats, run.input_hash, metadata_hash, run.config, self.sources, run.marked
        )
        cache = cache_json(run.input_hash, metadata_hash, cache_questions, self.legacy_sum)
        write_result(run.path.parent, result, cache)
        num_answers = sum(question.num_answers for question in scored.values())
        return RunOutcome(
            run.path,
            "scored",
            summary_of(result),
            valid_trials(result),
            warnings=run.warnings,
            num_answers=num_answers,
        )

    def _scored_chunk_run(
        self, run: ChunkRun
    ) -> tuple[dict[str, ScoredQuestion], core_pfgen.RunStats, bytes]:
        """A run read by the core: its numbers and its sampled lines and records (the only
        answers parsed in Python) by question, its top-level numbers, and its score cache's
        questions part, from the chunk."""
        chunk, index, legacy_sum = run.chunk, run.index, self.legacy_sum
        scored: dict[str, ScoredQuestion] = {}
        numbers = [self._numbers[question_id] for question_id in run.question_ids]
        for question_id, number in zip(run.question_ids, numbers, strict=True):
            numbers_of = chunk.question_stats(index, number, legacy_sum)
            lines = chunk.lines(index, number, numbers_of.samples)
            records = chunk.records(index, number, numbers_of.samples)
            samples = [
                (orjson.loads(line), orjson.loads(record))
                for line, record in zip(lines, records, strict=True)
            ]
            question = self.references.questions[question_id].question
            sources = self._tables[question_id].result().sources
            count = run.counts[question_id]
            scored[question_id] = ScoredQuestion(question, sources, count, numbers_of, samples)
        keys = [(n, orjson.dumps(q)) for q, n in zip(run.question_ids, numbers, strict=True)]
        run_numbers = chunk.run_stats(index, numbers, legacy_sum)
        return scored, run_numbers, chunk.cache_questions(index, keys)

    def _scored_parsed_run(
        self, run: ParsedRun
    ) -> tuple[dict[str, ScoredQuestion], core_pfgen.RunStats, bytes]:
        """A run read by Python: the same, from its answers and scores."""
        scored: dict[str, ScoredQuestion] = {}
        parts = []
        for question_id, answers in sorted(run.answers.items()):
            arrays = run.scores[question_id]
            records = arrays.records_json or []
            question = self.references.questions[question_id].question
            scored[question_id] = scored_question(
                question, arrays, answers, records, self.legacy_sum
            )
            parts.append(orjson.dumps(question_id) + b":[" + b",".join(records) + b"]")
        stats = run_stats([run.scores[q] for q in sorted(run.answers)], self.legacy_sum)
        return scored, stats, b",".join(parts)


def summary_of(result: dict[str, Any]) -> dict[str, Any]:
    """A result.json without its per-question part (most of it, and not shown): what an
    evaluation keeps of each run to its end, so that its memory does not grow with the runs."""
    return {key: value for key, value in result.items() if key != "questions"}
