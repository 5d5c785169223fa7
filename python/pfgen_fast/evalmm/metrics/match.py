"""The string-matching scorers: exact, substring with number words, jdocqa's normalised
containment, jic-vqa / mecha-ja containment, and the letter answers of ai2d and blink."""

from __future__ import annotations

import re
import unicodedata

# Number words and their digits, in the order the original replaces them.
NUMBER_WORDS = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
    "thirteen": "13", "fourteen": "14", "fifteen": "15", "sixteen": "16", "seventeen": "17",
    "eighteen": "18", "nineteen": "19", "twenty": "20", "thirty": "30", "forty": "40",
    "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90",
    "hundred": "100", "thousand": "1000", "million": "1000000", "billion": "1000000000",
}  # fmt: skip
NUMBER_PATTERNS = [(re.compile(rf"\b{word}\b"), digits) for word, digits in NUMBER_WORDS.items()]
AI2D_LETTERS = frozenset("ABCD")


def exact_match(ref: str, pred: str) -> int:
    return int(ref == pred)


def normalize_numbers(text: str) -> str:
    """Lower-cased, each number word replaced by its digits (no arithmetic)."""
    text = text.lower()
    for pattern, digits in NUMBER_PATTERNS:
        text = pattern.sub(digits, text)
    return text


def substring_match(ref: str | list[str], pred: str) -> int:
    prediction = normalize_numbers(pred.lower())
    if isinstance(ref, list):
        return int(any(normalize_numbers(one) in prediction for one in ref))
    return int(normalize_numbers(ref) in prediction)


def jdocqa_normalize(text: str) -> str:
    for removed in ("です", "。", "、", " "):
        text = text.replace(removed, "")
    return unicodedata.normalize("NFKC", text.strip())


def jdocqa_contains(ref: str, pred: str) -> int:
    return int(jdocqa_normalize(ref) in jdocqa_normalize(pred))


def contains(ref: str, pred: str) -> int:
    """jic-vqa and mecha-ja: the reference appears in the prediction as it is."""
    return int(ref in pred)


def letter(text: str) -> str:
    return text.strip().rstrip(".").upper()


def ai2d_match(ref: str, pred: str) -> int:
    answer = letter(pred)
    return int(answer in AI2D_LETTERS and answer == letter(ref))


def blink_letter(text: str) -> str:
    text = text.strip().rstrip(".")
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    return text.strip().upper()


def blink_match(ref: str, pred: str) -> int:
    answer = blink_letter(pred)
    return int(answer in AI2D_LETTERS and answer == blink_letter(ref))
