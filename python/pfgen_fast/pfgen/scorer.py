"""Scoring answers against a question's reference answers (scoring-spec.md §2-§6).

The n-gram tables, Fluency, Truthfulness, literal keyword search and rounding run in the Rust
core (`pfgen_fast._core.pfgen`); keyword rules that are real regular expressions are matched here
with Python's `re`, the reference semantics, and handed to the core as match ends.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pfgen_fast._core import common as core_common
from pfgen_fast._core import pfgen as core_pfgen
from pfgen_fast._core.pfgen import KeywordRule
from pfgen_fast.common.cpus import usable_cpus
from pfgen_fast.common.errors import DataError, InputError
from pfgen_fast.pfgen.data import Question, load_questions, metadata_hash
from pfgen_fast.pfgen.table_cache import load_tables, save_tables, table_file

# A pattern without these characters matches exactly its own text under `re`.
REGEX_SPECIAL = re.compile(r"[.^$*+?{}\[\]\\|()]")


@dataclass(frozen=True)
class ScoreArrays:
    """Scores of a batch, rounded as in the per-answer record; columns of the 2-D arrays follow
    `QuestionScorer.sources`; `lengths`: the answers' lengths in characters (as floats, the
    benchmark's length statistics). `records_json`: the per-answer records as JSON text, if
    asked."""

    sources: list[str]
    fluency: np.ndarray
    truthfulness: np.ndarray
    helpfulness: np.ndarray
    average: np.ndarray
    lengths: np.ndarray
    records_json: list[bytes] | None = None


class ReferenceData:
    """All question files of a data directory, with the metadata hash of the benchmark."""

    def __init__(self, questions: dict[str, Question], metadata_hash: str) -> None:
        self.questions = questions
        self.metadata_hash = metadata_hash
        self._by_text = {q.question: q for q in questions.values()}

    @classmethod
    def load(cls, data_dir: str | Path) -> ReferenceData:
        return cls(load_questions(data_dir), metadata_hash(data_dir))

    def by_text(self, question_text: str) -> Question:
        """The question whose text is `question_text` (KeyError if none)."""
        return self._by_text[question_text]


def _convert_rule(rule: dict[str, Any], regexes: list[re.Pattern[str]]) -> KeywordRule:
    """A keyword rule as the core's; regex leaves are appended to `regexes`."""
    name = rule.get("name")
    if "t" in rule:
        pattern = rule["t"]
        leaf_name = name if name is not None else pattern
        if REGEX_SPECIAL.search(pattern) is None:
            return KeywordRule.literal(leaf_name, pattern)
        regexes.append(re.compile(pattern))
        return KeywordRule.external(leaf_name, len(regexes) - 1)
    if "and" in rule:
        return KeywordRule.all_of([_convert_rule(child, regexes) for child in rule["and"]], name)
    return KeywordRule.any_of([_convert_rule(child, regexes) for child in rule["or"]], name)


class QuestionScorer:
    """Scores answers to one question against its reference answers (all sources, or some)."""

    def __init__(
        self, question: Question, sources: Sequence[str] | None = None, cache_tables: bool = False
    ) -> None:
        """`cache_tables`: read the tables from the table cache when they are there, else keep
        them there once built (see `pfgen_fast.pfgen.table_cache`)."""
        self.question = question
        chosen = list(question.answers) if sources is None else list(sources)
        for key in chosen:
            if key not in question.answers:
                raise DataError(f"{question.path}: answers has no source {key!r}")
        if not chosen:
            raise DataError(f"{question.path}: no reference source to score against")
        self.sources = chosen
        self.num_references = sum(len(question.answers[key]) for key in chosen)
        self._regexes: list[re.Pattern[str]] = []
        try:
            rules = [
                (_convert_rule(rule, self._regexes), 1.0 - rule.get("importance", 1.0))
                for rule in question.keywords
            ]
        except ValueError as error:  # a keyword the core cannot take, e.g. a lone surrogate
            raise DataError(f"{question.path}: keywords: {error}") from None
        path = table_file(question, chosen) if cache_tables else None
        cached = None if path is None else load_tables(path, chosen, rules, len(self._regexes))
        if cached is not None:
            self._core = cached
            return
        try:
            self._core = core_pfgen.QuestionScorer(
                [(key, question.answers[key]) for key in chosen], rules, len(self._regexes)
            )
        except ValueError as error:
            raise DataError(f"{question.path}: {error}") from None
        if path is not None:
            save_tables(self._core, path)

    def _regex_match_ends(self, answers: Sequence[str]) -> np.ndarray | None:
        if not self._regexes:
            return None
        ends = np.full((len(answers), len(self._regexes)), core_pfgen.NOT_FOUND, dtype=np.uint32)
        for row, answer in enumerate(answers):
            head = answer[: core_pfgen.HELPFULNESS_CUT]
            for column, regex in enumerate(self._regexes):
                match = regex.search(head)
                if match is not None:
                    ends[row, column] = match.end()
        return ends

    def _score(
        self, answers: list[str], with_results: bool, with_json: bool, legacy_sum: bool
    ) -> core_pfgen.Scores:
        try:
            return self._core.score(
                answers, self._regex_match_ends(answers), with_results, with_json, legacy_sum
            )
        except ValueError as error:  # text the core cannot take, e.g. a lone surrogate
            raise InputError(str(error)) from None

    def score_arrays(
        self, answers: Sequence[str], with_json: bool = False, legacy_sum: bool = False
    ) -> ScoreArrays:
        """Scores as numpy arrays, without building a record per answer; with `with_json`,
        also each record as JSON text (`json.dumps(record, ensure_ascii=False)` layout).
        `legacy_sum`: the average's sums as on Python <= 3.11 (`pfgen_fast.pfgen.exactness`)."""
        scores = self._score(list(answers), False, with_json, legacy_sum)
        return ScoreArrays(
            self.sources,
            scores.fluency,
            scores.truthfulness,
            scores.helpfulness,
            scores.average,
            scores.lengths,
            scores.records_json,
        )

    def score(self, answers: Sequence[str], legacy_sum: bool = False) -> list[dict[str, Any]]:
        """The per-answer records of the benchmark (scoring-spec.md §6), key order included."""
        scores = self._score(list(answers), True, False, legacy_sum)
        assert scores.helpfulness_results is not None
        sources = self.sources
        return [
            {
                "fluency": dict(zip(sources, fluency_row, strict=True)),
                "fluency_discount": 1.0,
                "truthfulness": dict(zip(sources, truthfulness_row, strict=True)),
                "helpfulness": help_value,
                "helpfulness_results": [[name, factor] for name, factor in help_results],
                "average": average_value,
            }
            for fluency_row, truthfulness_row, help_value, average_value, help_results in zip(
                scores.fluency.tolist(),
                scores.truthfulness.tolist(),
                scores.helpfulness.tolist(),
                scores.average.tolist(),
                scores.helpfulness_results,
                strict=True,
            )
        ]

    def score_json(self, answers: Sequence[str], legacy_sum: bool = False) -> list[bytes]:
        """The per-answer records as JSON text (no dict is built per answer)."""
        records = self.score_arrays(answers, True, legacy_sum).records_json
        assert records is not None
        return records

    def score_lines(
        self, lines: core_pfgen.AnswerLines, question: int, legacy_sum: bool = False
    ) -> None:
        """Scores the answers of the lines of `lines.questions[question]` (no object per
        answer); `lines.write` writes them back with their records."""
        external = self._regex_match_ends(lines.answers(question)) if self._regexes else None
        self._core.score_lines(lines, question, external, legacy_sum)

    def score_chunk(
        self,
        chunk: core_pfgen.TrialsChunk,
        question: int,
        runs: Sequence[int],
        legacy_sum: bool = False,
    ) -> None:
        """Scores the answers of `runs` of `chunk` to its question number `question` in one
        batch (no object per answer but the regex rules' texts); the chunk keeps the scores."""
        external = self._regex_match_ends(chunk.answers(question, runs)) if self._regexes else None
        self._core.score_chunk(chunk, question, runs, external, legacy_sum)

    @property
    def baselines(self) -> dict[str, float]:
        """Mean raw fluency of each source's own reference answers (scoring-spec.md §2)."""
        return dict(zip(self.sources, self._core.baselines, strict=True))

    @property
    def table_bytes(self) -> int:
        """Memory held by the n-gram tables."""
        return self._core.memory_bytes


def release_free_memory() -> None:
    """Returns the scratch memory of table building to the OS (call after building many)."""
    core_common.release_free_memory()


def build_scorers(
    questions: Iterable[Question],
    sources: Sequence[str] | None = None,
    threads: int | None = None,
) -> dict[str, QuestionScorer]:
    """Scorers for many questions, built in parallel (the core releases the GIL), their
    tables kept in the table cache."""
    questions = list(questions)
    workers = threads or usable_cpus()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        scorers = list(pool.map(lambda q: QuestionScorer(q, sources, cache_tables=True), questions))
    release_free_memory()
    return {q.question_id: scorer for q, scorer in zip(questions, scorers, strict=True)}
