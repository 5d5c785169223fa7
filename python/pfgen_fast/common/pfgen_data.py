"""The pfgen-bench data as every room reads it (pfgen's commands, the judge's runs): where it
is found without `--data`, and its `Qxx.json` question files, loaded and checked."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import DataError
from pfgen_fast.common.files import cache_dir
from pfgen_fast.common.jsonl import read_json

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
        raise DataError(f"{path}: expected a JSON object")
    fields: dict[str, str] = {}
    for name in ("question_id", "question", "category", "note"):
        value = raw.get(name, "" if name in ("category", "note") else None)
        if not isinstance(value, str):
            raise DataError(f"{path}: field '{name}' must be a string")
        fields[name] = value
    keywords = raw.get("keywords", [])
    if not isinstance(keywords, list):
        raise DataError(f"{path}: field 'keywords' must be a list")
    for index, rule in enumerate(keywords):
        check_rule(rule, f"{path}: keywords[{index}]", top_level=True)
    answers: dict[str, list[str]] = {}
    raw_answers = raw.get("answers")
    if raw_answers is None and not require_answers:
        raw_answers = {}
    if not isinstance(raw_answers, dict):
        raise DataError(f"{path}: field 'answers' must be an object of source -> list of answers")
    for source, refs in raw_answers.items():
        # By their types, at C speed (JSON strings are exactly str): thousands per question.
        if not isinstance(refs, list) or not set(map(type, refs)) <= {str}:
            raise DataError(f"{path}: answers.{source} must be a list of strings")
        if not refs:
            raise DataError(f"{path}: answers.{source} is empty")
        answers[source] = refs
    if require_answers and not answers:
        raise DataError(f"{path}: field 'answers' has no reference answers")
    return Question(keywords=keywords, answers=answers, path=path, **fields)


def check_rule(rule: Any, where: str, top_level: bool = False) -> None:
    """A keyword rule is {"t": pattern} or {"and"/"or": [rules]}, with optional name/importance."""
    if not isinstance(rule, dict):
        raise DataError(f"{where}: a keyword rule must be an object")
    kinds = [k for k in RULE_KINDS if k in rule]
    if len(kinds) != 1:
        raise DataError(f"{where}: a keyword rule needs exactly one of 't', 'and', 'or'")
    unknown = set(rule) - {*RULE_KINDS, "name", "importance"}
    if unknown:
        raise DataError(f"{where}: unknown field '{sorted(unknown)[0]}' in keyword rule")
    if "name" in rule and not isinstance(rule["name"], str):
        raise DataError(f"{where}.name: must be a string")
    if "importance" in rule:
        importance = rule["importance"]
        if not top_level:
            raise DataError(f"{where}.importance: only top-level rules have an importance")
        if isinstance(importance, bool) or not isinstance(importance, (int, float)):
            raise DataError(f"{where}.importance: must be a number")
    kind = kinds[0]
    if kind == "t":
        pattern = rule["t"]
        if not isinstance(pattern, str):
            raise DataError(f"{where}.t: must be a string")
        try:
            re.compile(pattern)
        except re.error as error:
            raise DataError(f"{where}.t: invalid regular expression {pattern!r}: {error}") from None
        return
    children = rule[kind]
    if not isinstance(children, list) or not children:
        raise DataError(f"{where}.{kind}: must be a non-empty list of rules")
    for index, child in enumerate(children):
        check_rule(child, f"{where}.{kind}[{index}]")


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
