"""The per-item metrics: the spec's unit-test numbers, agreement with the from-spec reference
(tests/evalmm/evalmm_reference.py) and with the libraries llm-jp-eval-mm calls (rouge-score,
sacrebleu) on Japanese and adversarial strings."""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path

import emoji
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))

import evalmm_reference as reference  # noqa: E402

from pfgen_fast.evalmm.metrics import ocr  # noqa: E402
from pfgen_fast.evalmm.metrics.bleu import sentence_bleu_scores  # noqa: E402
from pfgen_fast.evalmm.metrics.rouge import rouge_l_scores  # noqa: E402
from pfgen_fast.evalmm.metrics.tokens import (  # noqa: E402
    bleu_parse,
    nfkc,
    remove_emoji,
    rouge_parse,
)


def rouge_tokens(text: str) -> list[str]:
    """The ROUGE-L tokens the scorer counts (MeCab's output split as the Rust core splits it)."""
    return rouge_parse(text).split()


def bleu_tokens(text: str) -> list[str]:
    """The BLEU tokens the scorer counts."""
    return bleu_parse(text).split()


WORDS = [
    "私", "は", "猫", "です", "。", "たかし", "が", "公園", "で", "遊んで", "いた", "東京",
    "タワー", "ＴＯＫＹＯ", "Tokyo", "１２３", "123", " ", "\u3000", "、", "ー", "ーー", "❤️",
    "👨\u200d👩\u200d👧", "🇯🇵", "\ufe0f", "ｶﾀｶﾅ", "!", "？", "\n", "\t", "池", "ほとり", "湖",
]  # fmt: skip
ALPHABET = "".join(set("".join(WORDS))) + "あいうえおアイウエオ漢字日本語abcXYZ0９"
texts = st.one_of(
    st.lists(st.sampled_from(WORDS), max_size=25).map("".join),
    st.text(alphabet=ALPHABET, max_size=40),
    st.text(max_size=12),
)
SENTENCES = [
    "私は猫です。",
    "たかしが公園で遊んでいた。",
    "たかしが公園にいたようだ。",
    "池のほとりです。",
    "ここは湖の岸です。",
    "東京タワーは赤と白の電波塔で、高さは333メートルあります。",
]


def test_rouge_l_spec_numbers() -> None:
    refs = ["私は猫です。", "たかしが公園で遊んでいた。", "池のほとりです。"]
    preds = ["私は猫です。", "たかしが公園にいたようだ。", "ここは湖の岸です。"]
    scores = rouge_l_scores(refs, preds)
    assert scores[0] == 100.0
    assert scores[1] == pytest.approx(66.66666666666667, abs=1e-9)
    assert scores[2] == pytest.approx(50.0, abs=1e-12)


def test_rouge_l_quirks() -> None:
    refs = ["Tokyo Tower", "   ", "😀", "東京", "スーパーマーケット"]
    preds = ["TOKYO TOWER", "   ", "😀", "東\u3000京", "スーーーパーマーケット"]
    assert rouge_l_scores(refs, preds) == [0.0, 0.0, 0.0, 0.0, 0.0]
    assert "\ufe0f" in rouge_tokens("❤️")


def test_rouge_l_with_neologdn() -> None:
    scores = rouge_l_scores(
        ["東京", "スーパーマーケット"], ["東\u3000京", "スーーーパーマーケット"], use_neologdn=True
    )
    assert scores == [100.0, 100.0]


def test_bleu_spec_numbers() -> None:
    refs = ["たかしが公園で遊んでいた。", "池のほとりです。", "東京", SENTENCES[5]]
    preds = ["たかしが公園にいたようだ。", "ここは湖の岸です。", "東京", SENTENCES[5]]
    scores = sentence_bleu_scores(refs, preds)
    assert scores[0] == pytest.approx(0.23357, abs=5e-6)
    assert scores[1] == pytest.approx(0.14536, abs=5e-6)
    assert scores[2] == 0.0
    assert scores[3] == 1.0000000000000004


def sacrebleu_score(ref: str, pred: str) -> float:
    from sacrebleu import sentence_bleu

    result = sentence_bleu(
        pred,
        [ref],
        smooth_method="exp",
        smooth_value=0.0,
        tokenize="ja-mecab",
        use_effective_order=False,
        lowercase=False,
    )
    return result.score / 100


def rouge_score_library(ref: str, pred: str) -> float:
    """rouge-score's LCS F with the spec's tokenizer, as the original calls it."""
    from rouge_score import rouge_scorer

    class Tokenizer:
        def tokenize(self, text: str) -> list[str]:
            return reference.rouge_tokens(text)

    scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=Tokenizer())
    return scorer.score(ref, pred)["rougeL"].fmeasure * 100


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(texts, texts), min_size=1, max_size=6))
def test_rouge_l_matches_reference_and_rouge_score(pairs: list[tuple[str, str]]) -> None:
    refs, preds = [r for r, _ in pairs], [p for _, p in pairs]
    ours = rouge_l_scores(refs, preds)
    for (ref, pred), value in zip(pairs, ours, strict=True):
        assert value == reference.rouge_l(ref, pred)
        assert value == rouge_score_library(ref, pred)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(texts, texts), min_size=1, max_size=6))
def test_bleu_matches_reference_and_sacrebleu(pairs: list[tuple[str, str]]) -> None:
    refs, preds = [r for r, _ in pairs], [p for _, p in pairs]
    ours = sentence_bleu_scores(refs, preds)
    for (ref, pred), value in zip(pairs, ours, strict=True):
        assert value == reference.sentence_bleu(ref, pred)
        assert value == sacrebleu_score(ref, pred)


@settings(max_examples=100, deadline=None)
@given(texts)
def test_tokens_equal_the_libraries(text: str) -> None:
    from sacrebleu.tokenizers.tokenizer_ja_mecab import TokenizerJaMecab

    assert bleu_tokens(text) == TokenizerJaMecab()(text.rstrip()).split()
    assert rouge_tokens(text) == reference.rouge_tokens(text)


def test_long_texts() -> None:
    long_ref = "".join(SENTENCES) * 40
    long_pred = "".join(reversed(SENTENCES)) * 40
    assert rouge_l_scores([long_ref], [long_pred]) == [reference.rouge_l(long_ref, long_pred)]
    assert sentence_bleu_scores([long_ref], [long_pred]) == [sacrebleu_score(long_ref, long_pred)]


def test_each_distinct_text_tokenised_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from pfgen_fast.evalmm.metrics import rouge

    seen: list[str] = []

    def counting(text: str, use_neologdn: bool = False) -> str:
        seen.append(text)
        return rouge_parse(text, use_neologdn)

    monkeypatch.setattr(rouge, "rouge_parse", counting)
    rouge.rouge_l_scores(["a", "b", "a"], ["b", "a", "c"])
    assert sorted(seen) == ["a", "b", "c"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(texts, texts), min_size=1, max_size=6))
def test_character_scores_match_reference(pairs: list[tuple[str, str]]) -> None:
    refs, preds = [r for r, _ in pairs], [p for _, p in pairs]
    counts = ocr.overlap_counts(refs, preds)
    handwriting = ocr.handwriting_scores(refs, preds)
    for i, (ref, pred) in enumerate(pairs):
        assert ocr.f1_of_counts(*counts[i])[2] == reference.cc_ocr_f1(ref, pred)
        assert handwriting[i] == reference.handwriting(ref, pred)


def test_cc_ocr_cases() -> None:
    exact = ocr.overlap_counts(["東京タワー塔"], ["東京タワー塔"])
    assert ocr.f1_of_counts(*exact[0])[2] == pytest.approx(0.99999999933, abs=5e-12)
    assert ocr.f1_of_counts(*exact[0])[2] < 1.0
    assert ocr.overlap_counts(["Ｔｏｋｙｏ"], ["Tokyo"]) == [(0, 5, 5)]
    assert ocr.overlap_counts(["a ### b\n*** c"], ["ABC"]) == [(3, 3, 3)]


SPACES = "".join(chr(c) for c in range(0x3001) if chr(c).isspace()) + "\u200b\u180e\ufeff\x1b"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=SPACES + "ab漢", max_size=20), max_size=5))
def test_core_splits_tokens_as_python(texts: list[str]) -> None:
    from pfgen_fast._core import evalmm as core_evalmm

    ids, offsets = core_evalmm.token_ids(texts)
    vocabulary: dict[str, int] = {}
    expected, ends = [], [0]
    for text in texts:
        expected += [vocabulary.setdefault(token, len(vocabulary)) for token in text.split()]
        ends.append(len(expected))
    assert ids.tolist() == expected and offsets.tolist() == ends


def test_forked_workers_give_the_same_scores(monkeypatch: pytest.MonkeyPatch) -> None:
    from pfgen_fast.evalmm.metrics import tokens as tokenize

    refs = [f"{s}その{i}番目" for i, s in enumerate(SENTENCES * 5)]
    preds = [f"{s}、{i}回目です" for i, s in enumerate(reversed(SENTENCES * 5))]
    serial_rouge, serial_bleu = rouge_l_scores(refs, preds), sentence_bleu_scores(refs, preds)
    monkeypatch.setattr(tokenize, "TEXTS_PER_WORKER", 4)
    assert rouge_l_scores(refs, preds) == serial_rouge
    assert sentence_bleu_scores(refs, preds) == serial_bleu
    assert serial_rouge == [reference.rouge_l(r, p) for r, p in zip(refs, preds, strict=True)]


# Width forms beside what they compose with or decompose into: kana and voiced marks, Hangul
# jamo, combining accents; and emoji with joiners, selectors and the deleted ranges.
NORMALISATION_ALPHABET = st.one_of(
    st.characters(min_codepoint=0xFF00, max_codepoint=0xFFEF),
    st.sampled_from(list("かハは가\u1100\u1161\u11a8\u3099\u309a\u0301\u0308eA ①½ﬁ㌀")),
    st.sampled_from(list("❤\ufe0f\u200d👨🇯\u2702\u27b0\u27b1©#")),
    st.characters(),
)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=NORMALISATION_ALPHABET, max_size=30))
def test_normalisation_steps_equal_the_plain_ones(text: str) -> None:
    assert nfkc(text) == unicodedata.normalize("NFKC", text)
    plain = "".join(c for c in text if not emoji.is_emoji(c))
    plain = re.sub(reference._RANGES, "", plain)
    assert remove_emoji(text) == plain
