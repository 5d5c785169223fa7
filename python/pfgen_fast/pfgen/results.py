"""A run's result.json (scoring-spec.md §7): written from the scored answers of each question, and
read back and checked for the pages, the leaderboard and the figures; with it the run's score
cache `cache/scores.json` (`input_hash`, `metadata_hash`, `legacy_sum`, then `questions`: per
question the records of its answers), written first and read back for its `legacy_sum`."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from pfgen_fast._core import pfgen as core_pfgen
from pfgen_fast.common.errors import InputError
from pfgen_fast.common.files import read_bytes, write_atomically
from pfgen_fast.common.jsonl import missing_field, not_an_object, parse_json, wrong_type

if TYPE_CHECKING:
    from pfgen_fast.pfgen.scorer import ScoreArrays


@dataclass(frozen=True)
class ScoredQuestion:
    """One question of a run: its text, sources, number of answers, result.json numbers (the
    core's `question_stats`, from the answers' scores), and its sampled answers in sample
    order, each as (the answer's object as read, its per-answer record)."""

    question: str
    sources: list[str]
    num_answers: int
    stats: core_pfgen.QuestionStats
    samples: list[tuple[dict[str, Any], dict[str, Any]]]


def scored_question(
    question: str,
    scores: ScoreArrays,
    answers: list[dict[str, Any]],
    records: list[dict[str, Any]] | list[bytes],
    legacy_sum: bool = False,
) -> ScoredQuestion:
    """A question from its answers' scores, objects and records (JSON text or parsed), in
    file order."""
    stats = core_pfgen.question_stats(
        scores.fluency,
        scores.truthfulness,
        scores.helpfulness,
        scores.average,
        scores.lengths,
        legacy_sum,
    )
    samples = [
        (answers[i], orjson.loads(record) if isinstance(record := records[i], bytes) else record)
        for i in stats.samples
    ]
    return ScoredQuestion(question, scores.sources, len(answers), stats, samples)


def run_stats(scores: list[ScoreArrays], legacy_sum: bool = False) -> core_pfgen.RunStats:
    """A run's top-level numbers from its questions' scores, in result.json's order."""
    return core_pfgen.run_stats(
        [arrays.average for arrays in scores], [arrays.lengths for arrays in scores], legacy_sum
    )


def question_summary(scored: ScoredQuestion, marked: bool = False) -> dict[str, Any]:
    """A question's part of result.json; of a run with `generated` marks (`marked`), with its
    number of generated answers, `num_valid_trials`."""
    stats = scored.stats
    samples = []
    for answer, record in scored.samples:
        sample = {k: v for k, v in answer.items() if k not in ("question", "scores")}
        sample["scores"] = record
        samples.append(sample)
    summary = {
        "question": scored.question,
        "score": stats.score,
        "score_std": stats.score_std,
        "length": stats.length,
        "length_std": stats.length_std,
        "scores": {
            "fluency": dict(zip(scored.sources, stats.fluency, strict=True)),
            "truthfulness": dict(zip(scored.sources, stats.truthfulness, strict=True)),
            "helpfulness": stats.helpfulness,
            "average": stats.average,
        },
    }
    if marked:
        summary["num_valid_trials"] = scored.num_answers
    summary["samples"] = samples
    return summary


def build_result(
    scored: dict[str, ScoredQuestion],
    stats: core_pfgen.RunStats,
    input_hash: str,
    metadata_hash: str,
    config: dict[str, Any] | None,
    sources: list[str] | None = None,
    marked: bool = False,
) -> dict[str, Any]:
    """The result.json object; `scored` is keyed by question id, `stats` are the run's
    top-level numbers over its questions in id order. `sources`: the reference sources chosen
    (`eval --sources`), recorded when given. `marked`: the run's lines carry `generated` and
    `scored` holds its generated answers: as pfgen-bench's evaluator after its PR #94,
    num_trials is the largest number of a question's answers (the pinned one: the smallest,
    as `stats`) and each question has its `num_valid_trials`; `stats` are unchanged (its
    per-trial scores pair the questions' answers in file order and stop at the shortest list,
    as that evaluator's `zip`)."""
    question_ids = sorted(scored)
    questions = {qid: question_summary(scored[qid], marked) for qid in question_ids}
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
    if sources is not None:
        result["sources"] = sources
    if config is not None:
        result["config"] = config
    num_trials = max(q.num_answers for q in scored.values()) if marked else stats.num_trials
    result.update(
        num_trials=num_trials,
        score=stats.score,
        score_std=stats.score_std,
        length=stats.length,
        length_std=stats.length_std,
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
    orjson, with the floats it spells differently respelled as Python does
    (the same value: orjson's text reads back as the same float)."""
    text = orjson.dumps(result, option=orjson.OPT_INDENT_2)
    text = SMALL_DECIMAL.sub(lambda number: repr(float(number[0])).encode(), text)
    return SHORT_EXPONENT.sub(rb"e-0\1", text)


# --- a run folder's result files ----------------------------------------------------------

RESULT_NAME = "result.json"
# The per-question score caches of a run (`eval`): every answer with its per-answer record,
# after a header with both hashes and the `sum()` the records were made with.
CACHE_PATH = Path("cache") / "scores.json"


def result_path(run_dir: Path) -> Path:
    return run_dir / RESULT_NAME


def write_result(run_dir: Path, result: dict[str, Any], cache: bytes) -> None:
    """The run's score cache (`cache_json`), then its result.json (`result_json`), which marks
    the run done."""
    write_atomically(run_dir / CACHE_PATH, cache)
    write_atomically(result_path(run_dir), result_json(result))


def stored_result(run_dir: Path) -> Any:
    """The run's result.json as parsed, unchecked; None when it is missing or not JSON."""
    path = result_path(run_dir)
    if not path.is_file():
        return None
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, ValueError):  # orjson's errors, deep nesting too, are ValueErrors
        return None


def cache_json(
    input_hash: str, metadata_hash: str, questions: bytes, legacy_sum: bool = False
) -> bytes:
    """cache/scores.json: both hashes, the `sum()` the records were made with, and per question
    the records of its answers in file order. `questions` is that part's JSON text without its
    braces, `"Q01":[record,...],...` (the records come from the core as JSON text: they are
    joined, not re-encoded)."""
    header = orjson.dumps(
        {"input_hash": input_hash, "metadata_hash": metadata_hash, "legacy_sum": legacy_sum}
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


@dataclass(frozen=True)
class ValidTrials:
    """Trials with a generated answer, out of the trials run."""

    valid: int
    trials: int

    def __str__(self) -> str:
        return f"{self.valid}/{self.trials}"


def valid_trials(data: dict[str, Any], question_id: str | None = None) -> ValidTrials | None:
    """The valid trials out of the trials (shown `98/100`) where a run whose answers carry
    `generated` marks has fewer valid trials than trials: of the question, or the fewest of
    any question; None otherwise (and for every run without marks). `data`: a result.json."""
    num_trials = data.get("num_trials")
    questions = data.get("questions") or {}
    chosen = [questions.get(question_id)] if question_id else list(questions.values())
    counts = [q.get("num_valid_trials") for q in chosen if isinstance(q, dict)]
    valid = [count for count in counts if isinstance(count, int)]
    if not isinstance(num_trials, int) or not valid or min(valid) >= num_trials:
        return None
    return ValidTrials(min(valid), num_trials)


@dataclass(frozen=True)
class RunResult:
    """A result.json, checked for the fields the pages and the leaderboard use."""

    path: Path
    sha1: str
    data: dict[str, Any]

    @property
    def config(self) -> dict[str, Any]:
        return self.data.get("config") or {}

    @property
    def model(self) -> str:
        """The model named in the config, else the run's directory."""
        model = self.config.get("model")
        return model if isinstance(model, str) else str(self.path.parent)

    @property
    def mode(self) -> str:
        mode = self.config.get("mode")
        return mode if isinstance(mode, str) else ""

    def valid_trials(self, question_id: str | None = None) -> ValidTrials | None:
        return valid_trials(self.data, question_id)


def load_result(path: Path) -> RunResult:
    """Reads and checks one result.json; errors name the file and the field."""
    raw = read_bytes(path)
    data = parse_json(raw, str(path))
    ResultChecker(path).check(data, with_samples=False)
    return RunResult(path, hashlib.sha1(raw).hexdigest(), data)


def load_results(paths: Sequence[Path]) -> tuple[list[RunResult], list[str]]:
    """The result.json files that can be read and checked, and why each other one cannot."""
    runs: list[RunResult] = []
    errors: list[str] = []
    for path in paths:
        try:
            runs.append(load_result(path))
        except InputError as error:
            errors.append(str(error))
    return runs, errors


# What a field of each kind is expected to be.
KIND_NAMES = {
    float: "a number",
    int: "an integer",
    str: "a string",
    dict: "an object",
    list: "a list",
}


class ResultChecker:
    """Checks the fields of a result.json that reports read; errors name the field's path."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, problem: str) -> InputError:
        return InputError(f"{self.path}: {problem}")

    def get(self, container: dict[str, Any], key: str, kind: type, where: str) -> Any:
        # The field's name is only spelled out for an error (this runs for every field).
        if key not in container:
            raise self.fail(missing_field(f"{where}.{key}" if where else key))
        value = container[key]
        if kind is float:
            valid = isinstance(value, (int, float)) and not isinstance(value, bool)
        elif kind is int:
            valid = isinstance(value, int) and not isinstance(value, bool)
        else:
            valid = isinstance(value, kind)
        if not valid:
            name = f"{where}.{key}" if where else key
            raise self.fail(wrong_type(name, KIND_NAMES[kind], value))
        return value

    def check(self, data: Any, with_samples: bool = True) -> None:
        if not isinstance(data, dict):
            raise self.fail(not_an_object(data))
        if data.get("config") is not None:
            self.get(data, "config", dict, "")
        self.get(data, "num_trials", int, "")
        for name in ("score", "score_std", "length", "length_std"):
            self.get(data, name, float, "")
        self.scores(self.get(data, "scores", dict, ""), "scores")
        questions = self.get(data, "questions", dict, "")
        for qid in questions:
            question = self.get(questions, qid, dict, "questions")
            self.question(question, f"questions.{qid}", with_samples)

    def question(self, question: dict[str, Any], where: str, with_samples: bool) -> None:
        self.get(question, "question", str, where)
        for name in ("score", "score_std", "length", "length_std"):
            self.get(question, name, float, where)
        self.scores(self.get(question, "scores", dict, where), f"{where}.scores")
        if "num_valid_trials" in question:
            self.get(question, "num_valid_trials", int, where)
        samples = self.get(question, "samples", list, where)
        if not with_samples:
            return
        for index, sample in enumerate(samples):
            sample_where = f"{where}.samples[{index}]"
            if not isinstance(sample, dict):
                raise self.fail(wrong_type(sample_where, "an object", sample))
            self.get(sample, "answer", str, sample_where)
            scores = self.get(sample, "scores", dict, sample_where)
            self.scores(scores, f"{sample_where}.scores")
            results = self.get(scores, "helpfulness_results", list, f"{sample_where}.scores")
            for item in results:
                if not (
                    isinstance(item, list)
                    and len(item) == 2
                    and isinstance(item[0], str)
                    and isinstance(item[1], (int, float))
                ):
                    name = f"{sample_where}.scores.helpfulness_results"
                    raise self.fail(f'field "{name}": expected [name, factor] pairs')

    def scores(self, scores: dict[str, Any], where: str) -> None:
        for measure in ("fluency", "truthfulness"):
            by_source = self.get(scores, measure, dict, where)
            measure_where = f"{where}.{measure}"
            for source in by_source:
                self.get(by_source, source, float, measure_where)
        for measure in ("helpfulness", "average"):
            self.get(scores, measure, float, where)
