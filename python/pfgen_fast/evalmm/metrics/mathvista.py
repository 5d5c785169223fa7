"""The mathvista scorer as llm-jp-eval-mm's runner calls it: without metadata, so every item is
a free-form text answer. The answer is taken from the response (a number after a cue phrase,
else the last number, else the first 50 characters), normalised and compared as a string."""

from __future__ import annotations

import re

NUMBER = r"(-?\d+\.?\d*(?:[eE][+-]?\d+)?)"
# Tried in this order; the first match's number is the answer.
CUES = [
    re.compile(r"[Tt]he answer is\s*:?\s*" + NUMBER),
    re.compile(r"[Aa]nswer:\s*" + NUMBER),
    re.compile(r"=\s*" + NUMBER),
    re.compile(r"(?:is|equals|equal to)\s*" + NUMBER),
]
# Matches wherever the response has a digit; the original's later search for numbers outside
# the years 1900-2100 is only reached without digits, where it finds nothing.
GROUPED_NUMBER = re.compile(r"-?\d{1,3}(?:,\d{3})*(?:\.\d+)?")
FALLBACK_LENGTH = 50


def extract_answer(response: str) -> str:
    response = response.strip()
    for cue in CUES:
        found = cue.search(response)
        if found:
            return found.group(1)
    numbers = GROUPED_NUMBER.findall(response)
    if numbers:
        return numbers[-1].replace(",", "")
    return response[:FALLBACK_LENGTH]


def normalize_answer(answer: str) -> str:
    answer = " ".join(answer.split()).lower()
    for removed in (",", "$", "%"):
        answer = answer.replace(removed, "")
    return answer.strip(".")


def mathvista_match(ref: str, pred: str) -> int:
    return int(normalize_answer(extract_answer(pred)) == normalize_answer(ref))
