"""Scorers through the registry, with their aggregates: the spec's cases (jdocqa, jic-vqa,
mecha-ja, cc-ocr, substring-match, ai2d, blink) and the keys llm-jp-eval-mm writes."""

from __future__ import annotations

from typing import Any

import pytest

from pfgen_fast.evalmm.metrics.base import Batch
from pfgen_fast.evalmm.metrics.scorers import get_scorer


def run(
    name: str, refs: list[Any], preds: list[str], docs: list[dict[str, Any]] | None = None
) -> tuple[list[Any], dict[str, Any]]:
    scorer = get_scorer(name)
    batch = Batch(refs, preds, docs or [{} for _ in preds])
    scores = scorer.score(batch)
    return scores, scorer.aggregate(scores, batch)


def test_exact_and_substring() -> None:
    scores, aggregate = run("exact-match", ["a", "b", " a"], ["a", "B", "a"])
    assert scores == [1, 0, 0]
    assert aggregate == {"overall_score": 1 / 3, "details": {"exact_match": 1 / 3}}
    # "one hundred one" reads "1 100 1" (no arithmetic); "seventeen" becomes "17".
    refs: list[Any] = ["100", "101", ["2", "x"], "", "seven"]
    preds = ["one hundred", "one hundred one", "Two cats", "anything", "SEVENTEEN"]
    scores, aggregate = run("substring-match", refs, preds)
    assert scores == [1, 0, 1, 1, 1]
    assert aggregate["details"] == {"substring_match": 0.8}


def test_jdocqa_factoid_case_and_types() -> None:
    scores, aggregate = run("jdocqa", ["私は猫です。"], ["私は猫です。"], [{"answer_type": 1}])
    assert scores == [1]
    assert aggregate == {
        "overall_score": 1.0,
        "details": {
            "yesno_exact": 0.0,
            "factoid_exact": 1.0,
            "numerical_exact": 0.0,
            "open-ended_bleu": 0.0,
            "overall": 1.0,
        },
    }
    refs = ["はい", "1,000", "１２", "たかしが公園で遊んでいた。"]
    preds = ["はい、そうです。", "1000", "答えは12", "たかしが公園にいたようだ。"]
    docs = [{"answer_type": t} for t in (0, 2, 2, 3)]
    scores, aggregate = run("jdocqa", refs, preds, docs)
    assert scores[:3] == [1, 0, 1]
    assert scores[3] == pytest.approx(0.23357, abs=5e-6)
    assert aggregate["details"]["numerical_exact"] == 0.5
    assert aggregate["overall_score"] == pytest.approx((2 + scores[3]) / 4)


def test_jic_by_domain() -> None:
    _, aggregate = run("jic-vqa", ["猫"], ["これは猫です"], [{"domain": "test"}])
    assert aggregate == {"overall_score": 1.0, "details": {"test": 1.0, "average": 1.0}}
    docs = [{"domain": d} for d in ("a", "a", "a", "b")]
    _, aggregate = run("jic-vqa", ["x"] * 4, ["x", "y", "y", "y"], docs)
    assert aggregate["details"] == {"a": 1 / 3, "b": 0.0, "average": 1 / 6}


def test_mecha_groups() -> None:
    docs = [
        {"answer_type": 0, "background_text": "", "question_id": "q1_rot0"},
        {"answer_type": 1, "background_text": "bg", "question_id": "q1_rot1"},
        {"answer_type": 0, "background_text": None, "question_id": "q2"},
    ]
    scores, aggregate = run("mecha-ja", ["A", "B", "C"], ["A です", "b", "C"], docs)
    assert scores == [1, 0, 1]
    details = aggregate["details"]
    assert aggregate["overall_score"] == details["overall"] == 2 / 3
    assert details["Factoid"] == 1.0 and details["Non-Factoid"] == 0.0
    assert details["with_background"] == 0.0 and details["without_background"] == 1.0
    assert list(details)[5:] == ["rot_0", "rot_1", "rot_no_rot"]  # in order of appearance
    assert details["rot_0"]["overall"] == 1.0 and details["rot_1"]["Factoid"] == 0.0
    assert details["rot_no_rot"] == {
        "overall": 1.0,
        "Factoid": 1.0,
        "Non-Factoid": 0.0,
        "with_background": 0.0,
        "without_background": 1.0,
    }


def test_cc_ocr_spec_cases() -> None:
    refs = ["あいうえおかきく", "東京"]
    preds = ["あいうえおかけこ", "東京都"]
    scores, aggregate = run("cc-ocr", refs, preds)
    assert scores == pytest.approx([0.75, 0.8], abs=1e-8)
    assert aggregate["overall_score"] == pytest.approx(0.775, abs=1e-8)
    assert aggregate["details"]["micro_f1_score"] == pytest.approx(16 / 21, abs=1e-8)
    # The macro F1 is the samples' mean F1 over n + 1e-9, not a harmonic mean of macro R, P.
    assert aggregate["details"]["macro_f1_score"] == (scores[0] + scores[1]) / (2 + 1e-9)
    assert list(aggregate["details"]) == [
        "mean_sample_f1", "macro_recall", "macro_precision", "macro_f1_score", "micro_recall",
        "micro_precision", "micro_f1_score", "metric_config",
    ]  # fmt: skip
    assert aggregate["details"]["metric_config"]["is_word_level"] is False
    scores, aggregate = run("cc-ocr", ["abc", "日本語の文字認識"], ["abcd", "日本語の文字認識"])
    assert scores == pytest.approx([6 / 7, 1.0], abs=1e-8)
    assert aggregate["overall_score"] == pytest.approx(13 / 14, abs=1e-8)
    assert aggregate["details"]["micro_f1_score"] == pytest.approx(22 / 23, abs=1e-8)
    scores, aggregate = run("cc-ocr", [""], [""])
    assert scores == [0.0] and aggregate["overall_score"] == 0.0


def test_letters() -> None:
    scores, aggregate = run("ai2d", ["B", "D", "A", "C"], [" b. ", "(D)", "Ａ", "E"])
    assert scores == [1, 0, 0, 0]
    assert aggregate == {"overall_score": 0.25, "details": {"accuracy": 0.25}}
    scores, aggregate = run("blink", ["C", "(A)", "B", "D"], ["(c).", "A", "( B )", "x"])
    assert scores == [1, 1, 1, 0]
    assert aggregate == {
        "overall_score": 0.75,
        "details": {"accuracy": 0.75, "total_samples": 4, "correct_samples": 3},
    }
    _, aggregate = run("blink", [], [])
    assert aggregate == {"overall_score": 0.0, "details": {"accuracy": 0.0}}


def test_handwriting() -> None:
    scores, aggregate = run(
        "jawildtext-handwriting-ocr", ["ＡＢ\\nc", "", "", "abcd"], ["ab\r\nC", "", "x", "zzzzzzz"]
    )
    assert scores == [1.0, 1.0, 0.0, 0.0]
    assert aggregate == {"overall_score": 0.5, "details": {"cer_similarity": 0.5}}


def test_unknown_metric() -> None:
    from pfgen_fast.common.errors import PfgenError

    with pytest.raises(PfgenError, match="unknown metric"):
        get_scorer("bleu")
