"""The four constraint checks, as the benchmark's `eval_ctg.py` applies them to one generation:
the raw text and the remover's cleaned text in, True / False (and None for a short format
case, which counts as a failure) out."""

from __future__ import annotations

from pfgen_fast.lctg.data import PromptRow

# What the remover's text is replaced by when the remover's server refused the request (HTTP
# 400): it fails all four constraints and is still judged.
INVALID = "Invalid Error"
# The only characters the benchmark removes before comparing, in its order.
BLANKS = (" ", "\u3000", "\n", "\t")
# Characters compared at each end of the text by the format check, for every task.
FORMAT_WINDOW = 10


def delete_blank(text: str) -> str:
    for blank in BLANKS:
        text = text.replace(blank, "")
    return text


def format_kept(raw: str, cleaned: str) -> bool | None:
    """Whether the remover changed neither end: the first and last 10 characters, blanks
    removed, agree. None (a failure) when the cleaned text is 10 characters or fewer."""
    if cleaned == INVALID:
        return False
    raw_text, cleaned_text = delete_blank(raw), delete_blank(cleaned)
    if len(cleaned_text) > FORMAT_WINDOW:
        return (
            raw_text[:FORMAT_WINDOW] == cleaned_text[:FORMAT_WINDOW]
            and raw_text[-FORMAT_WINDOW:] == cleaned_text[-FORMAT_WINDOW:]
        )
    return None


def char_count_kept(cleaned: str, low: int, high: int) -> bool:
    """Code points of the cleaned text, blanks included, within [low, high]."""
    return cleaned != INVALID and low <= len(cleaned) <= high


def keyword_kept(cleaned: str, keyword: str) -> bool:
    return cleaned != INVALID and keyword in cleaned


def prohibited_word_kept(cleaned: str, word: str) -> bool:
    return cleaned != INVALID and word not in cleaned


def check(constraint: str, raw: str, cleaned: str, row: PromptRow) -> bool | None:
    """The check of `constraint` on one generation made for that constraint's prompt."""
    if constraint == "format":
        return format_kept(raw, cleaned)
    if constraint == "char_count":
        return char_count_kept(cleaned, *row.char_range)
    if constraint == "keyword":
        return keyword_kept(cleaned, row.keyword)
    if constraint == "prohibited_word":
        return prohibited_word_kept(cleaned, row.prohibited_word)
    raise ValueError(f"unknown constraint {constraint!r}")
