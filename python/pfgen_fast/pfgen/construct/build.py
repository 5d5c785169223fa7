"""Building reference answer sets from generated candidates (the shared docs' construction.md).

Each (question, source) pair is one reference set, built from its own candidates alone:

1. style: the ordered style rules (regular expressions, run by polars) rewrite every candidate;
   candidates left empty are dropped.
2. ng_rules: candidates matching any NG pattern of their question are dropped.
3. rare_ngrams: candidates holding a character n-gram (n = 5) that fewer than `min_count` (2)
   candidates of the set contain are dropped. The Rust core counts exactly, spilling to disk.
4. length: the `pool_size` (30,000) survivors closest to `target_length` (100) characters are
   kept (ties: input order).
5. representative: `final_size` (1,000) answers chosen by representativeness, see
   `select_representative`.

Steps 1-3 stream over the candidate files in blocks, so memory does not grow with their size.
JSON lines are checked strictly in the Rust core (`check_candidate_lines`: each unusable
line is reported with its number), then parsed by polars; the texts go from polars' Arrow
buffers to the n-gram counter without becoming Python strings.
"""

from __future__ import annotations

import json
import math
import resource
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from pfgen_fast._core import pfgen as core_pfgen
from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.files import temporary_folder, write_atomically
from pfgen_fast.pfgen.construct.candidates import GroupKey, Problems, candidate_batches
from pfgen_fast.pfgen.construct.rules import StyleRules, contains
from pfgen_fast.pfgen.data import Question
from pfgen_fast.pfgen.scorer import QuestionScorer

STEPS = ("read", "style", "ng_rules", "rare_ngrams", "length", "representative")
# The spill folder of a build: PREFIX<pid>-<random>, in --spill-dir or the system's temporary
# folder (a later build removes those of killed builds).
SPILL_PREFIX = "pfgen-build-refs-"


@dataclass(frozen=True)
class BuildSettings:
    """The steps' parameters; None or False switches a step off."""

    style_rules: StyleRules | None
    ng_rules: dict[str, list[str]] = field(default_factory=dict)
    ngram_n: int = 5
    min_count: int | None = 2
    target_length: int = 100
    pool_size: int | None = 30_000
    final_size: int = 1_000
    representativeness: bool = True
    typical_fraction: float = 0.5
    # n-gram tables and candidate texts held in memory, over all sets, before spilling.
    memory_budget: int = 1024 << 20
    spill_dir: Path | None = None


def peak_memory_bytes() -> int:
    """The process's peak resident memory so far (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


@dataclass
class StepStats:
    """One step of one reference set: counts in and out, lengths of what came out, time."""

    count_in: int = 0
    count_out: int = 0
    length_sum: float = 0.0
    length_squares: float = 0.0
    seconds: float = 0.0
    peak_bytes: int = 0

    def record(self, count_in: int, lengths: np.ndarray, seconds: float) -> None:
        lengths = lengths.astype(np.float64)
        self.count_in += count_in
        self.count_out += len(lengths)
        self.length_sum += float(lengths.sum())
        self.length_squares += float((lengths * lengths).sum())
        self.seconds += seconds
        self.peak_bytes = peak_memory_bytes()

    def row(self) -> dict[str, Any]:
        mean = self.length_sum / self.count_out if self.count_out else None
        sd = (
            math.sqrt(max(self.length_squares / self.count_out - mean * mean, 0.0))
            if mean is not None
            else None
        )
        return {
            "in": self.count_in,
            "out": self.count_out,
            "length_mean": None if mean is None else round(mean, 2),
            "length_sd": None if sd is None else round(sd, 2),
            "seconds": round(self.seconds, 3),
            "peak_memory_mb": round(self.peak_bytes / 2**20, 1),
        }


class ReferenceSetBuild:
    """The state of one (question, source) reference set while candidates stream in."""

    def __init__(self, question: Question, source: str, spill_dir: Path, settings: BuildSettings):
        self.question = question
        self.source = source
        self.settings = settings
        self.steps: dict[str, StepStats] = {}
        self.ng_pattern = "|".join(
            f"(?:{p})" for p in settings.ng_rules.get(question.question_id, [])
        )
        spill_dir.mkdir()
        # With the filter off, the counter still keeps the texts; min_count 1 marks nothing.
        self.counter = core_pfgen.RareNgramCounter(
            settings.ngram_n, settings.min_count or 1, spill_dir, settings.memory_budget
        )
        self.ngram_stats: dict[str, int] = {}

    def step(self, name: str) -> StepStats:
        return self.steps.setdefault(name, StepStats())

    def add(self, texts: pl.Series, read_seconds: float) -> None:
        """Steps 1 and 2 on a batch, then hands the survivors to the n-gram counter."""
        self.step("read").record(len(texts), texts.str.len_chars().to_numpy(), read_seconds)
        if self.settings.style_rules is not None:
            start = time.perf_counter()
            count_in = len(texts)
            texts = self.settings.style_rules.apply(texts)
            lengths = texts.str.len_chars()
            texts, lengths = texts.filter(lengths > 0), lengths.filter(lengths > 0)
            self.step("style").record(count_in, lengths.to_numpy(), time.perf_counter() - start)
        if self.ng_pattern:
            start = time.perf_counter()
            count_in = len(texts)
            keep = ~contains(texts, self.ng_pattern)
            texts = texts.filter(keep)
            self.step("ng_rules").record(
                count_in, texts.str.len_chars().to_numpy(), time.perf_counter() - start
            )
        start = time.perf_counter()
        self.counter.add(texts)
        self.step("rare_ngrams").seconds += time.perf_counter() - start

    def finish(self) -> list[str]:
        """Steps 3-5: the final answers, most representative first."""
        settings = self.settings
        start = time.perf_counter()
        counted = self.counter.finish()
        rare, lengths, self.ngram_stats = counted.rare, counted.lengths, counted.stats
        survivors = np.flatnonzero(~rare)
        rare_step = self.step("rare_ngrams")
        if settings.min_count is None:
            self.steps.pop("rare_ngrams")
        else:
            rare_step.record(len(rare), lengths[survivors], time.perf_counter() - start)
        start = time.perf_counter()
        pool = survivors
        if settings.pool_size is not None:
            pool = closest_to_length(survivors, lengths, settings.target_length, settings.pool_size)
            self.step("length").record(len(survivors), lengths[pool], time.perf_counter() - start)
        start = time.perf_counter()
        texts = self.counter.texts(pool.tolist())
        if settings.representativeness:
            scores = representativeness(self.question.question_id, texts)
            chosen = select_representative(
                texts, scores, settings.final_size, settings.typical_fraction
            )
        else:
            chosen = evenly_spaced(unique_in_order(texts), settings.final_size)
        self.step("representative").record(
            len(texts), np.array([len(t) for t in chosen]), time.perf_counter() - start
        )
        return chosen


def closest_to_length(
    indices: np.ndarray, lengths: np.ndarray, target: int, size: int
) -> np.ndarray:
    """The `size` candidates (of `indices`, ascending) whose length is closest to `target`,
    ties in input order; returned in input order."""
    distance = np.abs(lengths[indices].astype(np.int64) - target)
    order = np.argsort(distance, kind="stable")[:size]
    return np.sort(indices[order])


def representativeness(question_id: str, texts: list[str]) -> np.ndarray:
    """Fluency (scoring-spec.md §3) of every text against n-gram tables built from all the texts:
    how much of its wording, weighted by how many others share it, the pool agrees with.
    The text itself is in the tables; its own contribution (one per distinct n-gram, at most
    ~1,000) is negligible against sums over tens of thousands of texts, and the same for all."""
    if not texts:
        return np.zeros(0)
    pool = Question(
        question_id=question_id,
        question="",
        category="",
        note="",
        keywords=[],
        answers={"pool": texts},
        path=Path(f"<{question_id} candidate pool>"),
    )
    return QuestionScorer(pool).score_arrays(texts).fluency[:, 0]


def unique_in_order(texts: list[str]) -> list[str]:
    return list(dict.fromkeys(texts))


def evenly_spaced(items: list[str], size: int) -> list[str]:
    """`size` items at evenly spaced positions (all of them when there are not more)."""
    if len(items) <= size:
        return items
    return [items[(i * len(items)) // size] for i in range(size)]


def select_representative(
    texts: list[str], scores: np.ndarray, size: int, typical_fraction: float
) -> list[str]:
    """Typical and diverse: rank distinct texts by representativeness, keep the most
    representative `typical_fraction` of them (at least `size`), then take `size` at evenly
    spaced ranks, so the set spans typical wordings instead of repeating the single most
    common one."""
    order = np.argsort(-scores, kind="stable")
    ranked = unique_in_order([texts[i] for i in order])
    typical = ranked[: max(size, math.ceil(len(ranked) * typical_fraction))]
    return evenly_spaced(typical, size)


@dataclass
class BuildOutcome:
    """Per question, the answers of each source; one report row per set and step; one
    summary per set (answers kept, whether short of `final_size`, n-gram counts); bad input."""

    answers: dict[str, dict[str, list[str]]]
    steps: list[dict[str, Any]]
    sets: list[dict[str, Any]]
    problems: Problems


def build_reference_sets(
    questions: dict[str, Question],
    candidate_files: list[Path],
    default_source: str,
    settings: BuildSettings,
) -> BuildOutcome:
    """Runs every step over the candidate files; `questions` are the metadata, by id."""
    by_text = {q.question: q for q in questions.values()}
    problems = Problems()
    builds: dict[GroupKey, ReferenceSetBuild] = {}
    with temporary_folder(SPILL_PREFIX, settings.spill_dir) as spill:
        try:
            for path in candidate_files:
                batches = candidate_batches(path, default_source, by_text, problems)
                while True:
                    start = time.perf_counter()
                    batch = next(batches, None)
                    if batch is None:
                        break
                    read_seconds = time.perf_counter() - start
                    lines = sum(len(texts) for texts in batch.values())
                    for key, texts in batch.items():
                        build = builds.get(key)
                        if build is None:
                            directory = Path(spill) / f"set-{len(builds)}"
                            build = ReferenceSetBuild(
                                questions[key[0]], key[1], directory, settings
                            )
                            builds[key] = build
                        build.add(texts, read_seconds * len(texts) / lines)
                    keep_buffers_within(builds.values(), settings.memory_budget)
            answers: dict[str, dict[str, list[str]]] = {}
            steps: list[dict[str, Any]] = []
            sets: list[dict[str, Any]] = []
            for key in sorted(builds, key=lambda k: k[0]):
                build = builds[key]
                chosen = build.finish()
                if chosen:  # a source without answers is left out of the file
                    answers.setdefault(key[0], {})[key[1]] = chosen
                names: dict[str, Any] = {"question_id": key[0], "source": key[1]}
                short = len(chosen) < settings.final_size
                sets.append(names | {"answers": len(chosen), "short": short} | build.ngram_stats)
                for name in STEPS:
                    if name in build.steps:
                        steps.append(names | {"step": name} | build.steps[name].row())
        except OSError as error:
            raise PfgenError(f"spill directory {spill}: {error}") from None
    return BuildOutcome(answers, steps, sets, problems)


def keep_buffers_within(builds: Any, budget: int) -> None:
    """Spills the fullest counters' buffers until all of them together use at most half the
    budget (each counter also spills on its own at the full budget)."""
    counters = sorted((b.counter for b in builds), key=lambda c: -c.buffered_bytes)
    total = sum(c.buffered_bytes for c in counters)
    if total <= budget:
        return
    for counter in counters:
        if total <= budget // 2:
            break
        total -= counter.buffered_bytes
        counter.spill()


def question_json(question: Question, answers: dict[str, list[str]]) -> bytes:
    """A Qxx.json in the published layout (`json.dumps(..., ensure_ascii=False, indent=2)`)."""
    document = {
        "question_id": question.question_id,
        "question": question.question,
        "category": question.category,
        "note": question.note,
        "keywords": question.keywords,
        "answers": answers,
    }
    return json.dumps(document, ensure_ascii=False, indent=2).encode("utf-8")


def write_question_files(
    out_dir: Path, questions: dict[str, Question], answers: dict[str, dict[str, list[str]]]
) -> list[Path]:
    """Writes every question's file atomically (a temporary file renamed into place)."""
    written = []
    for question_id, by_source in answers.items():
        path = out_dir / f"{question_id}.json"
        write_atomically(path, question_json(questions[question_id], by_source))
        written.append(path)
    return written


def check_writable(out_dir: Path) -> None:
    """Fails early, before any work, when the output directory cannot take files."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out_dir):
            pass
    except OSError as error:
        raise PfgenError(f"{out_dir}: cannot write: {error.strerror or error}") from None
