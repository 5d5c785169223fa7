"""What the pfgen-bench room reads and writes, and how other rooms read it: the benchmark's
question files (`data/Qxx.json`, where they are found without `--data`), a run folder (its
trials file, the `config.json` `generate` writes, the `result.json` and `cache/scores.json`
`eval` writes), result.json read and checked (`load_result`, the checks the leaderboard and the
pages apply), and the run's figures as every output shows them (`RunFigures`: the README
leaderboard, `report`'s exports, `eval`'s summary and the site)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import DataError, InputError
from pfgen_fast.common.files import cache_dir
from pfgen_fast.common.jsonl import not_an_object, read_json, wrong_type
from pfgen_fast.pfgen.exactness import py_sum
from pfgen_fast.pfgen.results import ResultChecker, RunResult, load_result, load_results

__all__ = [
    "CACHE_PATH",
    "CONFIG_NAME",
    "DATA_DEFAULT",
    "QUESTION_FILE",
    "RESULT_NAME",
    "TOTAL_PLACES",
    "FIGURE_CAPTION",
    "FIGURE_COLUMNS",
    "FIGURE_LABELS",
    "TRIALS_NAMES",
    "Question",
    "ResultChecker",
    "RunFigures",
    "RunResult",
    "cached_legacy_sum",
    "criterion_total",
    "default_data_dir",
    "load_question",
    "load_questions",
    "load_result",
    "load_results",
    "question_files",
    "read_config",
    "resolve_data_dir",
    "result_path",
    "run_figures",
    "trials_file",
]

# --- the question files -------------------------------------------------------------------

RULE_KINDS = ("t", "and", "or")
QUESTION_FILE = re.compile(r"Q\d{2}\.json")

# How the data directory is found without --data (default_data_dir), for the help.
DATA_DEFAULT = "$PFGEN_DATA_DIR, else ./data when it holds Qxx.json, else `data fetch`'s copy"


def default_data_dir() -> Path | None:
    """`$PFGEN_DATA_DIR`, else `./data` when it holds Qxx.json files, else the fetched cache."""
    env = os.environ.get("PFGEN_DATA_DIR")
    if env:
        return Path(env)
    if any(Path("data").glob("Q[0-9][0-9].json")):
        return Path("data")
    cached = cache_dir() / "data"
    if any(cached.glob("Q[0-9][0-9].json")):
        return cached
    return None


def resolve_data_dir(data_dir: str | Path | None) -> Path:
    """The directory given, or the default one; a clear error saying how to get the data."""
    if data_dir is not None:
        return Path(data_dir)
    found = default_data_dir()
    if found is None:
        raise DataError(
            "no benchmark data found: pass --data DIR (the data/ directory of a pfgen-bench "
            "checkout), set PFGEN_DATA_DIR, or run `python -m pfgen_fast data fetch`"
        )
    return found


def question_files(data_dir: str | Path) -> list[Path]:
    """The `Qxx.json` files of a directory, sorted by name; an error if there are none."""
    directory = Path(data_dir)
    if not directory.is_dir():
        raise DataError(f"{directory}: not a directory")
    files = sorted(p for p in directory.iterdir() if QUESTION_FILE.fullmatch(p.name))
    if not files:
        raise DataError(f"{directory}: no Qxx.json question files")
    return files


@dataclass(frozen=True)
class Question:
    """One `Qxx.json`: metadata, keyword rules and reference answers by source, in file order."""

    question_id: str
    question: str
    category: str
    note: str
    keywords: list[dict[str, Any]]
    answers: dict[str, list[str]]
    path: Path


def load_question(path: str | Path, require_answers: bool = True) -> Question:
    """Parse and check one question file; errors name the file and the field."""
    path = Path(path)
    raw = read_json(path, DataError)
    if not isinstance(raw, dict):
        raise DataError(f"{path}: {not_an_object(raw)}")
    fields: dict[str, str] = {}
    for name in ("question_id", "question", "category", "note"):
        value = raw.get(name, "" if name in ("category", "note") else None)
        if not isinstance(value, str):
            raise DataError(f"{path}: {wrong_type(name, 'a string', value)}")
        fields[name] = value
    keywords = raw.get("keywords", [])
    if not isinstance(keywords, list):
        raise DataError(f"{path}: {wrong_type('keywords', 'a list', keywords)}")
    for index, rule in enumerate(keywords):
        check_rule(rule, path, f"keywords[{index}]", top_level=True)
    answers: dict[str, list[str]] = {}
    raw_answers = raw.get("answers")
    if raw_answers is None and not require_answers:
        raw_answers = {}
    if not isinstance(raw_answers, dict):
        raise DataError(f"{path}: {wrong_type('answers', 'an object', raw_answers)}")
    for source, refs in raw_answers.items():
        # By their types, at C speed (JSON strings are exactly str): thousands per question.
        if not isinstance(refs, list) or not set(map(type, refs)) <= {str}:
            raise DataError(f'{path}: field "answers.{source}": expected a list of strings')
        if not refs:
            raise DataError(f'{path}: field "answers.{source}": empty')
        answers[source] = refs
    if require_answers and not answers:
        raise DataError(f'{path}: field "answers": no reference answers')
    return Question(keywords=keywords, answers=answers, path=path, **fields)


def check_rule(rule: Any, path: Path, where: str, top_level: bool = False) -> None:
    """A keyword rule is {"t": pattern} or {"and"/"or": [rules]}, with optional name/importance;
    `where` is its place in the file (`keywords[0].and[1]`)."""
    if not isinstance(rule, dict):
        raise DataError(f"{path}: {wrong_type(where, 'an object', rule)}")
    kinds = [k for k in RULE_KINDS if k in rule]
    if len(kinds) != 1:
        raise DataError(f'{path}: field "{where}": expected exactly one of "t", "and", "or"')
    unknown = set(rule) - {*RULE_KINDS, "name", "importance"}
    if unknown:
        raise DataError(f'{path}: field "{where}.{sorted(unknown)[0]}": not a field of a rule')
    if "name" in rule and not isinstance(rule["name"], str):
        raise DataError(f"{path}: {wrong_type(f'{where}.name', 'a string', rule['name'])}")
    if "importance" in rule:
        importance = rule["importance"]
        if not top_level:
            raise DataError(f'{path}: field "{where}.importance": only top-level rules have one')
        if isinstance(importance, bool) or not isinstance(importance, (int, float)):
            raise DataError(f"{path}: {wrong_type(f'{where}.importance', 'a number', importance)}")
    kind = kinds[0]
    if kind == "t":
        pattern = rule["t"]
        if not isinstance(pattern, str):
            raise DataError(f"{path}: {wrong_type(f'{where}.t', 'a string', pattern)}")
        try:
            re.compile(pattern)
        except re.error as error:
            raise DataError(
                f'{path}: field "{where}.t": not a regular expression: {pattern!r}: {error}'
            ) from None
        return
    children = rule[kind]
    if not isinstance(children, list) or not children:
        raise DataError(f'{path}: field "{where}.{kind}": expected a non-empty list of rules')
    for index, child in enumerate(children):
        check_rule(child, path, f"{where}.{kind}[{index}]")


def load_questions(
    data_dir: str | Path, question_ids: set[str] | None = None, require_answers: bool = True
) -> dict[str, Question]:
    """Question files of a directory by question_id, in id order (optionally only some ids)."""
    questions: dict[str, Question] = {}
    for path in question_files(data_dir):
        if question_ids is not None and path.stem not in question_ids:
            continue
        question = load_question(path, require_answers=require_answers)
        if question.question_id in questions:
            raise DataError(f"{path}: duplicate question_id {question.question_id!r}")
        questions[question.question_id] = question
    return dict(sorted(questions.items()))


# --- a run folder -------------------------------------------------------------------------

TRIALS_NAMES = ("trials.jsonl.xz", "trials.jsonl")
CONFIG_NAME = "config.json"
RESULT_NAME = "result.json"


def trials_file(run_dir: Path) -> Path | None:
    """The run's trials file, the compressed one first; None when it has neither."""
    return next((run_dir / n for n in TRIALS_NAMES if (run_dir / n).is_file()), None)


def read_config(run_dir: Path) -> dict[str, Any] | None:
    """The run's config.json, when it exists (copied into result.json as is)."""
    path = run_dir / CONFIG_NAME
    if not path.is_file():
        return None
    config = read_json(path)
    if not isinstance(config, dict):
        raise InputError(f"{path}: expected a JSON object")
    return config


def result_path(run_dir: Path) -> Path:
    return run_dir / RESULT_NAME


# The per-question score caches of a run (`eval`): every answer with its per-answer record,
# after a header with both hashes and the `sum()` the records were made with.
CACHE_PATH = Path("cache") / "scores.json"


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


# --- a run's figures ----------------------------------------------------------------------

# Totals are sums of values with 5 decimals: rounded to 5 places they lose only the float
# noise of the addition (tables, exports, `eval --json`, the site).
TOTAL_PLACES = 5


def criterion_total(by_source: Mapping[str, float], legacy_sum: bool = False) -> float:
    """Fluency or Truthfulness over all sources: the values added in result.json's key order
    with the benchmark's `sum()` (see `pfgen_fast.pfgen.exactness`), as its leaderboard does."""
    return py_sum(list(by_source.values()), legacy_sum)


# A run's figures as the tables of `eval` and `leaderboard` show them: piped, these columns; on
# a terminal, the short labels the caption explains.
FIGURE_COLUMNS = ["score", "score_std", "length", "fluency", "truthfulness", "helpfulness"]
FIGURE_LABELS = ["score", "sd", "len", "F", "T", "H"]
FIGURE_CAPTION = (
    "sd: standard deviation of the score over trials; len: mean answer length; "
    "F, T, H: Fluency, Truthfulness, Helpfulness"
)


@dataclass(frozen=True)
class RunFigures:
    """A run's figures as the leaderboard shows them: `fluency` and `truthfulness` are the
    unrounded totals (`criterion_total`); `rounded_*` are them to TOTAL_PLACES places."""

    score: float
    score_std: float
    length: float
    length_std: float
    num_trials: int
    fluency: float
    truthfulness: float
    helpfulness: float
    average: float

    @property
    def rounded_fluency(self) -> float:
        return round(self.fluency, TOTAL_PLACES)

    @property
    def rounded_truthfulness(self) -> float:
        return round(self.truthfulness, TOTAL_PLACES)


def run_figures(result: Mapping[str, Any], legacy_sum: bool = False) -> RunFigures:
    """The figures of a result.json checked by `load_result` (or written by `eval`)."""
    scores = result["scores"]
    return RunFigures(
        score=result["score"],
        score_std=result["score_std"],
        length=result["length"],
        length_std=result["length_std"],
        num_trials=result["num_trials"],
        fluency=criterion_total(scores["fluency"], legacy_sum),
        truthfulness=criterion_total(scores["truthfulness"], legacy_sum),
        helpfulness=scores["helpfulness"],
        average=scores["average"],
    )
