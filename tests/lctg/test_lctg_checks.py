"""The four constraint checks against the from-spec reference (hypothesis), and each quirk of
the spec's list that concerns one generation as a case of its own."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lctg_reference import spec_char_count, spec_format, spec_keyword, spec_prohibited

from pfgen_fast.lctg.checks import INVALID, check, delete_blank
from pfgen_fast.lctg.data import PromptRow

# Characters that matter: the four blanks, blanks the benchmark keeps (\r, NBSP, thin space,
# zero-width space), case pairs, full-width letters, an emoji with a modifier, a combining mark.
ALPHABET = list(" \u3000\n\t\r\u00a0\u2009\u200bAaBbｍｉｎｉmini要約広告文。、") + [
    "👍",
    "\U0001f3fb",
    "\u3099",
]
texts = st.one_of(
    st.text(alphabet=ALPHABET, max_size=40),
    st.just(INVALID),
    st.just(""),
)
words = st.text(alphabet=ALPHABET, min_size=1, max_size=3)


def row(low: int = 0, high: int = 10**6, keyword: str = "kw", ng: str = "ng") -> PromptRow:
    return PromptRow(1, "base", {}, (low, high), keyword, ng)


@settings(max_examples=400, deadline=None)
@given(raw=texts, cleaned=texts)
def test_format_matches_the_spec(raw: str, cleaned: str) -> None:
    assert check("format", raw, cleaned, row()) is spec_format(raw, cleaned)


@settings(max_examples=300, deadline=None)
@given(cleaned=texts, low=st.integers(0, 30), span=st.integers(0, 20))
def test_char_count_matches_the_spec(cleaned: str, low: int, span: int) -> None:
    prompt = row(low, low + span)
    assert check("char_count", "x", cleaned, prompt) is spec_char_count(cleaned, low, low + span)


@settings(max_examples=300, deadline=None)
@given(cleaned=texts, word=words)
def test_keyword_and_prohibited_word_match_the_spec(cleaned: str, word: str) -> None:
    prompt = row(keyword=word, ng=word)
    assert check("keyword", "x", cleaned, prompt) is spec_keyword(cleaned, word)
    assert check("prohibited_word", "x", cleaned, prompt) is spec_prohibited(cleaned, word)


def test_only_four_blanks_are_removed() -> None:
    assert delete_blank(" a\u3000b\nc\td\re\u00a0f") == "abcd\re\u00a0f"


def test_format_window_is_ten_characters_for_ad_text_too() -> None:
    # Quirk 1: the first 5 characters agree, the 6th-10th do not: a 5-character window (the
    # paper's, for ad text) would pass it.
    raw = "広告文です。以下のタイトル本文"
    cleaned = "広告文です。タイトル本文"
    assert check("format", raw, cleaned, row()) is False
    assert check("format", "abcdefghijKLMNOP", "abcdefghijKLMNOP", row()) is True


def test_format_is_none_up_to_ten_characters() -> None:
    # Quirk 2: None (a failure) for a cleaned text of 10 characters or fewer, blanks removed.
    assert check("format", "0123456789", "0123456789", row()) is None
    assert check("format", "0123456789", "01234 56789\n", row()) is None
    assert check("format", "", "", row()) is None
    assert check("format", "0123456789A", "0123456789A", row()) is True


def test_format_short_raw_against_long_cleaned_fails() -> None:
    assert check("format", "short", "a much longer cleaned text", row()) is False


def test_format_compares_raw_with_cleaned_after_blank_removal() -> None:
    assert check("format", "abc def ghij klm", "abcdefghij\tklm", row()) is True
    assert check("format", "abcdefghij\rklm", "abcdefghijklm", row()) is False


@pytest.mark.parametrize(
    ("cleaned", "length"),
    [
        ("a b\u3000c\nd\te", 9),  # quirk 3: blanks count
        ("👍🏻", 2),  # emoji with a skin-tone modifier: two code points
        ("か\u3099", 2),  # NFD が
        ("😀", 1),
    ],
)
def test_char_count_counts_code_points_with_blanks(cleaned: str, length: int) -> None:
    assert check("char_count", "x", cleaned, row(length, length)) is True
    assert check("char_count", "x", cleaned, row(length + 1, length + 5)) is False


def test_keyword_is_case_and_width_sensitive() -> None:
    # Quirk 4: no case folding, no NFKC; a keyword split by a blank does not count.
    assert check("keyword", "x", "Excelで集計", row(keyword="excel")) is False
    assert check("keyword", "x", "miniサイズ", row(keyword="ｍｉｎｉ")) is False
    assert check("keyword", "x", "ex cel", row(keyword="excel")) is False
    assert check("keyword", "x", "excelで", row(keyword="excel")) is True
    # Short Latin words match inside longer ones.
    assert check("prohibited_word", "x", "the menu", row(ng="men")) is False


def test_invalid_error_fails_all_four() -> None:
    # Quirk 5: the remover's refusal fails every constraint, the prohibited word included.
    prompt = row(0, 100, keyword="Invalid", ng="zzz")
    for constraint in ("format", "char_count", "keyword", "prohibited_word"):
        assert check(constraint, INVALID, INVALID, prompt) is False


def test_empty_output_passes_only_the_prohibited_word() -> None:
    # Quirk 6.
    prompt = row(1, 100)
    assert check("format", "", "", prompt) is None
    assert check("char_count", "", "", prompt) is False
    assert check("keyword", "", "", prompt) is False
    assert check("prohibited_word", "", "", prompt) is True
