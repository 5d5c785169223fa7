"""The benchmark's question files (`data/Qxx.json`): where they are found without `--data`,
how they are read and checked (re-exported by `pfgen.outputs` for the other rooms), their
metadata hash, and the published data (`data fetch|verify`) checked against the manifest the
project ships (`reference_data/pfgen-bench-data.json`: SHA-1 digests only, no data)."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import DataError
from pfgen_fast.common.files import cache_dir
from pfgen_fast.common.jsonl import not_an_object, read_json, wrong_type
from pfgen_fast.common.published_data import PublishedData

RULE_KINDS = ("t", "and", "or")
# The benchmark's questions, Q01-Q50: a data directory with fewer holds only some of them.
BENCHMARK_QUESTIONS = 50
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


def metadata_hash(data_dir: str | Path) -> str:
    """SHA-1 of the concatenated SHA-1 hex digests of the Qxx.json files, in sorted path order."""
    digests = "".join(hashlib.sha1(p.read_bytes()).hexdigest() for p in question_files(data_dir))
    return hashlib.sha1(digests.encode()).hexdigest()


def unpublished_files(data_dir: Path, manifest: dict[str, Any]) -> list[str]:
    """Question files the published data does not have, or else a metadata hash that is not
    the published one."""
    present = {p.name for p in data_dir.iterdir() if QUESTION_FILE.fullmatch(p.name)}
    problems = [
        f"{data_dir / name}: not a file of the published data"
        for name in sorted(present - set(manifest["files"]))
    ]
    if not problems and metadata_hash(data_dir) != manifest["metadata_hash"]:
        problems.append(f"{data_dir}: metadata hash differs from {manifest['metadata_hash']}")
    return problems


PUBLISHED = PublishedData(
    name="pfgen-bench",
    manifest="pfgen-bench-data.json",
    cached="data",
    find_default=default_data_dir,
    hint="give DIR (the data/ directory of a pfgen-bench checkout), set PFGEN_DATA_DIR, or run "
    "`python -m pfgen_fast data fetch` first",
    algorithm="sha1",
    folder="data",
    more_problems=unpublished_files,
)
