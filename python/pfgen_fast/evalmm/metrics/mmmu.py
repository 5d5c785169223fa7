"""The mmmu and jmmmu scorers: per item 1 when the parsed answer is right, aggregated per
subject, per domain (instance-weighted) and overall, rounded to 5 places as the original."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pfgen_fast.common.errors import InputError
from pfgen_fast.evalmm.metrics.choice_parsing import (
    ENGLISH_INDICATORS,
    OpenAnswerParser,
    open_answer_correct,
    parse_choice,
    parse_options,
)

MULTIPLE_CHOICE = "multiple-choice"
SUBJECT = re.compile(r"^[^_]+_(.+)_\d+$")
# The subjects of each domain (MMMU's grouping; JMMMU's five domains as llm-jp-eval-mm has them).
BUSINESS = ["Accounting", "Economics", "Finance", "Manage", "Marketing"]
HEALTH = [
    "Basic_Medical_Science", "Clinical_Medicine", "Diagnostics_and_Laboratory_Medicine",
    "Pharmacy", "Public_Health",
]  # fmt: skip
TECH = [
    "Agriculture", "Architecture_and_Engineering", "Computer_Science", "Electronics",
    "Energy_and_Power", "Materials", "Mechanical_Engineering",
]  # fmt: skip
MMMU_DOMAINS = {
    "Art and Design": ["Art", "Art_Theory", "Design", "Music"],
    "Business": BUSINESS,
    "Science": ["Biology", "Chemistry", "Geography", "Math", "Physics"],
    "Health and Medicine": HEALTH,
    "Humanities and Social Science": ["History", "Literature", "Sociology", "Psychology"],
    "Tech and Engineering": TECH,
}
JMMMU_DOMAINS = {
    "Art and Psychology": ["Design", "Music", "Psychology"],
    "Business": BUSINESS,
    "Science": ["Biology", "Chemistry", "Math", "Physics"],
    "Health and Medicine": HEALTH,
    "Tech and Engineering": TECH,
}
# llm-jp-eval-mm's JMMMU list lacks a comma between these two entries.
FUSED_INDICATOR = "解答は、回答は"
SPLIT_INDICATOR = ["解答は、", "回答は"]


def check_item(doc: dict[str, Any], where: str) -> None:
    if doc["question_type"] == MULTIPLE_CHOICE:
        if "options" not in doc:
            raise InputError(f'{where}: field "options": missing (multiple-choice item)')
        parse_options(doc, where)
    if not SUBJECT.match(doc["id"]):
        raise InputError(f'{where}: field "id": expected <split>_<Subject>_<number>')


def fixed_indicators(indicators: Sequence[str]) -> list[str]:
    fixed: list[str] = []
    for indicator in indicators:
        fixed.extend(SPLIT_INDICATOR if indicator == FUSED_INDICATOR else [indicator])
    return fixed


def score_items(
    refs: Sequence[str],
    preds: Sequence[str],
    docs: Sequence[dict[str, Any]],
    parser: OpenAnswerParser,
) -> list[int]:
    scores = []
    for ref, pred, doc in zip(refs, preds, docs, strict=True):
        if doc["question_type"] == MULTIPLE_CHOICE:
            options = parse_options(doc, "item")
            scores.append(int(parse_choice(pred, options) == ref))
        else:
            scores.append(int(open_answer_correct(ref, parser.candidates(pred))))
    return scores


def english_parser() -> OpenAnswerParser:
    return OpenAnswerParser(ENGLISH_INDICATORS, japanese=False, fresh=True)


def japanese_parser(indicators: Sequence[str], fix_quirks: bool) -> OpenAnswerParser:
    if fix_quirks:
        return OpenAnswerParser(fixed_indicators(indicators), japanese=True, fresh=True)
    return OpenAnswerParser(indicators, japanese=True, fresh=False)


def instance_accuracy(subjects: Sequence[tuple[int, float]]) -> float:
    """Sum of accuracy x count over (count, accuracy) pairs, divided by the total count, in the
    original's float operations; the integer 0 (as it writes it) when there are none."""
    weighted, count = 0.0, 0
    for number, accuracy in subjects:
        weighted += accuracy * number
        count += number
    return weighted / count if count else 0


def aggregate(
    scores: Sequence[int], docs: Sequence[dict[str, Any]], domains: dict[str, list[str]]
) -> dict[str, Any]:
    """Per domain `Overall-<domain>` then its subjects, in the domain lists' order, then
    `Overall` over every subject; subjects outside the domains count in `Overall` only."""
    by_subject: dict[str, list[int]] = {}
    for score, doc in zip(scores, docs, strict=True):
        found = SUBJECT.match(doc["id"])
        by_subject.setdefault(found.group(1) if found else doc["id"], []).append(score)
    subjects = {name: (len(v), sum(v) / len(v)) for name, v in by_subject.items()}
    details: dict[str, Any] = {}
    for domain, members in domains.items():
        present = [name for name in members if name in subjects]
        details[f"Overall-{domain}"] = round(instance_accuracy([subjects[n] for n in present]), 5)
        for name in present:
            details[name] = round(subjects[name][1], 5)
    overall = instance_accuracy(list(subjects.values()))
    details["Overall"] = round(overall, 5)
    return {"overall_score": overall, "details": details}
