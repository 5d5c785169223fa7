"""Answers parsed out of free text for MMMU and JMMMU (llm-jp-eval-mm's port of MMMU's
evaluation): the letter of a multiple-choice answer, the candidate strings and numbers of an
open answer, and whether they match the reference.

JMMMU's answer indicators are llm-jp-eval-mm's own list (read at run time, see
`indicators.py`). The original passes that module-level list to the open-answer parser, which
appends "＝" and "=" to it for every item: `OpenAnswerParser` keeps that state for a run, so
results depend on the order items are scored, as they do there; `fixed=True` gives every item a
fresh list instead.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from typing import Any

from pfgen_fast.common.errors import InputError

EDGE_PUNCTUATION = [",", ".", "!", "?", ";", ":", "'", "、", "。", "！", "？", "；", "："]
LONE_PUNCTUATION = frozenset(EDGE_PUNCTUATION)
JAPANESE_CHAR = "[\u3040-\u30ff\u4e00-\u9fff]"
ENGLISH_INDICATORS = (
    "could be ", "so ", "is ", "thus ", "therefore ", "final ", "answer ", "result ",
)  # fmt: skip
EQUALS = ("＝", "=")
SENTENCE_SPLIT = re.compile(r"[。！？.]\s*|\n")
COMMA_NUMBER = re.compile(r"-?\b\d{1,3}(?:,\d{3})+\b")
SCIENTIFIC_NUMBER = re.compile(r"-?\d+(?:\.\d+)?[eE][+-]?\d+")
SIMPLE_NUMBER = re.compile(r"-?(?:\d+\.\d+|\.\d+|\d+\b)(?![eE][+-]?\d+)(?![,\d])")
SIMPLE_NUMBER_NO_BOUNDARY = re.compile(r"-?(?:\d+\.\d+|\.\d+|\d+)(?![eE][+-]?\d+)(?![,\d])")
COUNTED_NUMBER = re.compile(r"(\d+)(?:つ|個|度|円|人|年|匹|台|%)")


def parse_options(doc: dict[str, Any], where: str) -> list[str]:
    """The `options` field: a Python list literal of strings, as the datasets store it."""
    try:
        options = ast.literal_eval(doc["options"]) if isinstance(doc["options"], str) else None
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        options = None
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        raise InputError(f'{where}: field "options": expected a list of strings written as text')
    return options


def choice_letters(count: int) -> list[str]:
    return [chr(ord("A") + i) for i in range(count)]


def parse_choice(response: str, options: Sequence[str]) -> str | None:
    """The option letter the response gives: `(X)`, else `X `, else X between two Japanese
    characters, else `X.`, else (long responses) an option's text; the right-most when
    several; None when none."""
    for mark in EDGE_PUNCTUATION:
        response = response.strip(mark)
    response = f" {response} "
    letters = choice_letters(len(options))
    rules: list[Callable[[str], str]] = [
        lambda x: re.escape(f"({x})"),
        lambda x: re.escape(f"{x} "),
        lambda x: f"(?<={JAPANESE_CHAR}){re.escape(x)}(?={JAPANESE_CHAR})",
        lambda x: re.escape(f"{x}."),
    ]
    for rule in rules:
        found = {x: [m.start() for m in re.finditer(rule(x), response)] for x in letters}
        found = {x: starts for x, starts in found.items() if starts}
        if found:
            return max(found, key=lambda x: found[x][-1])
    if len(response.split()) > 5:
        lowered = response.lower()
        positions = {x: lowered.rfind(o.lower()) for x, o in zip(letters, options, strict=True)}
        positions = {x: p for x, p in positions.items() if p >= 0}
        if positions:
            return max(positions, key=lambda x: positions[x])
    return None


def is_number(text: str) -> bool:
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True


def normalize_candidate(text: str) -> list[str | float]:
    """Numbers as floats rounded to 2 places; text lower-cased, one character padded with a
    space on either side."""
    text = text.strip()
    if is_number(text):
        return [round(float(text.replace(",", "")), 2)]
    text = text.lower()
    if len(text) == 1:
        return [" " + text, text + " "]
    return [text]


def extract_numbers(text: str, japanese: bool) -> list[str]:
    numbers = COMMA_NUMBER.findall(text) + SCIENTIFIC_NUMBER.findall(text)
    if japanese:
        numbers += SIMPLE_NUMBER_NO_BOUNDARY.findall(text) + COUNTED_NUMBER.findall(text)
    else:
        numbers += SIMPLE_NUMBER.findall(text)
    return numbers


class OpenAnswerParser:
    """Candidate answers of open responses. `indicators` is the list the original starts from;
    unless `fresh`, it keeps growing from item to item as the original's module-level list
    does."""

    def __init__(self, indicators: Sequence[str], japanese: bool, fresh: bool) -> None:
        self.start = list(indicators)
        self.japanese = japanese
        self.fresh = fresh
        self.shared = list(indicators)

    def key_responses(self, response: str) -> list[str]:
        response = response.strip().strip("。")
        parts = SENTENCE_SPLIT.split(response)
        indicators = list(self.start) if self.fresh else self.shared
        keys = []
        for index, part in enumerate(parts):
            if index == len(parts) - 1:
                indicators.extend(EQUALS)
            shortest: str | None = None
            for indicator in indicators:
                if indicator in part:
                    tail = part.split(indicator)[-1].strip()
                    if not shortest or len(tail) < len(shortest):
                        shortest = tail
            if shortest and shortest.strip() not in LONE_PUNCTUATION:
                keys.append(shortest)
        return keys or [response]

    def candidates(self, response: str) -> list[str | float]:
        keys = self.key_responses(response)
        found: list[str] = list(keys)
        for key in keys:
            found.extend(extract_numbers(key, self.japanese))
        normalized: list[str | float] = []
        for text in found:
            normalized.extend(normalize_candidate(text))
        return list(dict.fromkeys(normalized))


def open_answer_correct(answer: str, candidates: Sequence[str | float]) -> bool:
    golds = normalize_candidate(answer)
    for candidate in candidates:
        if isinstance(candidate, str):
            if any(isinstance(gold, str) and gold in candidate for gold in golds):
                return True
        elif candidate in golds:
            return True
    return False
