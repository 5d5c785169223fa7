"""mathvista and jawildtext-receipt-kie through the registry: named cases for each quirk of
their answer extraction, the choices where llm-jp-eval-mm crashes, and their aggregates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli_runner import run_cli
from pfgen_fast.common.errors import InputError
from pfgen_fast.evalmm.metrics.base import Batch
from pfgen_fast.evalmm.metrics.scorers import get_scorer


def run(name: str, refs: list[Any], preds: list[str]) -> tuple[list[Any], dict[str, Any]]:
    scorer = get_scorer(name)
    batch = Batch(refs, preds, [{} for _ in preds])
    scores = scorer.score(batch)
    return scores, scorer.aggregate(scores, batch)


@pytest.mark.parametrize(
    ("ref", "pred", "score"),
    [
        ("12", "The answer is 12.", 1),
        ("5", "2 + 2 = 4, and the answer is 5", 1),  # the first cue in order wins
        ("4", "2 + 2 = 4, and the answer is 5", 0),
        ("1234", "In 2024 there were 1,234 cats", 1),  # the last number, commas removed
        # Without a cue, numbers are read in groups of up to three digits: "2024" gives "202"
        # and "4", the last is taken (years are never filtered out).
        ("2024", "It was built in 2024", 0),
        ("4", "It was built in 2024", 1),
        ("2024", "It was built in: 2024", 0),
        ("2024", "The year is 2024", 1),
        ("1e3", "Answer: 1e3", 1),
        ("1000", "Answer: 1e3", 0),  # compared as strings, not numbers
        ("3", "The answer is 3.0", 0),
        ("7", "The answer is 7.", 1),  # the dot is stripped
        ("1000", "It costs $1,000", 1),
        ("50", "about 50%", 1),
        ("-5", "This gives -5", 1),
        ("12", "答えは１２", 0),  # full-width digits are found but not made ASCII
        ("１２", "答えは１２", 1),
        ("paris", " Paris. ", 1),  # no digit: the response itself, lower-cased
        ("a" * 50, "a" * 60, 1),  # ... cut to its first 50 characters
        ("", "   ", 1),
        ("", "", 1),
    ],
)
def test_mathvista_cases(ref: str, pred: str, score: int) -> None:
    assert run("mathvista", [ref], [pred])[0] == [score]


def test_mathvista_aggregate() -> None:
    scores, aggregate = run("mathvista", ["1", "2", "3"], ["1", "x", "3"])
    assert scores == [1, 0, 1]
    assert aggregate == {"overall_score": 2 / 3, "details": {"accuracy": 2 / 3}}


GOLD = {
    "store_name": "ＡＢＣストア", "store_address": None, "receipt_id": "R-1",
    "date": "2024-01-05", "time": "12:30", "total_amount": "¥1,080", "tax_amount": 80,
    "line_items": [{"item_name": "お茶", "item_price": "500", "item_quantity": 2},
                   {"item_name": "パン", "item_price": 500, "item_quantity": None}],
}  # fmt: skip
FIELDS = ["store_name", "store_address", "receipt_id", "date", "time", "total_amount",
          "tax_amount"]  # fmt: skip


def kie(gold: dict[str, Any], pred: str) -> dict[str, Any]:
    return run("jawildtext-receipt-kie", [json.dumps(gold, ensure_ascii=False)], [pred])[0][0]


def fenced(value: object) -> str:
    return f"結果です。\n```json\n{json.dumps(value, ensure_ascii=False)}\n```\n以上"


def test_receipt_exact_and_normalised_values() -> None:
    pred = dict(GOLD, store_name="abcストア", total_amount="1080", tax_amount="￥８０")
    score = kie(GOLD, fenced(pred))
    assert score == {
        "f1": 1.0,
        "precision": 1.0,
        "recall": 1.0,
        "field_accuracy": {f"field_{name}": 1.0 for name in FIELDS},
        "parse_error": False,
    }
    # A yen sign is removed after stripping: the space after it stays.
    score = kie({"total_amount": "1000"}, '{"total_amount": "¥ 1000"}')
    assert score["f1"] == 0.0 and score["field_accuracy"]["field_total_amount"] == 0.0


def test_receipt_null_values() -> None:
    """A null value gives no token, but compares as "none" in the field accuracy."""
    score = kie({"date": None, "time": "1"}, '{"date": "None", "time": "1"}')
    assert score["precision"] == 0.5 and score["recall"] == 1.0
    assert score["field_accuracy"]["field_date"] == 1.0
    score = kie({"date": None}, "{}")
    assert score["field_accuracy"]["field_date"] == 0.0
    assert (score["precision"], score["recall"], score["f1"]) == (1.0, 1.0, 1.0)
    assert score["field_accuracy"]["field_time"] == 1.0  # missing on both sides


def test_receipt_token_multisets() -> None:
    pred = {"store_name": "ABCストア", "line_items": [{"item_name": "お茶"}, {"item_name": "お茶"}]}
    score = kie(GOLD, json.dumps(pred, ensure_ascii=False))
    # gold: 6 scalar tokens (store_address is null) + 5 line item tokens; pred: 3, two match.
    assert score["precision"] == 2 / 3 and score["recall"] == 2 / 11
    assert score["f1"] == 2 * (2 / 3) * (2 / 11) / (2 / 3 + 2 / 11)
    assert kie({}, '{"date": "x"}')["recall"] == 1.0 and kie({}, '{"date": "x"}')["f1"] == 0.0
    assert kie({"date": "x"}, "{}")["recall"] == 0.0
    # Line items that are not a list, or not objects, give no tokens (the original crashes on
    # a number there and skips the rest).
    assert kie({"line_items": [{"item_name": "a"}]}, '{"line_items": 5}')["recall"] == 0.0
    assert kie({}, '{"line_items": ["a", 1, null]}')["f1"] == 1.0


@pytest.mark.parametrize(
    ("pred", "parse_error"),
    [
        ("", True),
        ("   ", True),
        ("no json here", True),
        ('```json\n{"store_name": "x"}\n```', False),
        ('```{"store_name": "x"}```', False),
        ('```json\n[{"store_name": "x"}]\n```', True),  # not an object (the original crashes)
        ("```json\nnull\n```", True),
        ('```json\n{oops}\n``` {"store_name": "x"}', True),  # only the first {...} is tried
        ('```json\n{oops\n``` {"store_name": "x"}', True),  # its braces never balance
        ('before {"store_name": "x", "line_items": [{"item_name": "y"}]} after }', False),
        ('{"store_name": "x"', True),
        ('{"store_name": "}"}', True),  # a brace inside a string ends the span
        ("[1, 2]", True),
        ('{"store_name": "x"}{"a": 1}', False),
    ],
)
def test_receipt_parsing(pred: str, parse_error: bool) -> None:
    score = kie({"store_name": "x"}, pred)
    assert score["parse_error"] is parse_error
    if parse_error:
        assert score["f1"] == 0.0 and set(score["field_accuracy"].values()) == {0.0}


def test_receipt_aggregate() -> None:
    refs = [json.dumps({"date": "1", "time": "2"})] * 3
    preds = ['{"date": "1", "time": "2"}', '{"date": "1", "time": "3"}', "oops"]
    scores, aggregate = run("jawildtext-receipt-kie", refs, preds)
    assert aggregate["overall_score"] == (1.0 + 0.5) / 3
    assert aggregate["details"] == {
        "f1": (1.0 + 0.5) / 3,
        "precision": (1.0 + 0.5) / 3,
        "recall": (1.0 + 0.5) / 3,
        "parse_error_count": 1,
        "field_store_name": 1.0,
        "field_store_address": 1.0,
        "field_receipt_id": 1.0,
        "field_date": 1.0,
        "field_time": 0.5,
        "field_total_amount": 1.0,
        "field_tax_amount": 1.0,
    }
    assert list(aggregate["details"])[:4] == ["f1", "precision", "recall", "parse_error_count"]
    _, aggregate = run("jawildtext-receipt-kie", refs[:1], ["oops"])
    assert aggregate["details"]["field_date"] == 0.0


def test_receipt_reference_must_be_a_json_object() -> None:
    check = get_scorer("jawildtext-receipt-kie").check
    assert check is not None
    field = 'x.jsonl:4: field "ref"'
    with pytest.raises(InputError) as not_json:
        check({"ref": "{oops"}, "x.jsonl:4")
    assert str(not_json.value) == (
        f"{field}: not valid JSON: Expecting property name enclosed in double quotes (column 2)"
    )
    with pytest.raises(InputError) as not_object:
        check({"ref": "[1]"}, "x.jsonl:4")
    assert str(not_object.value) == f"{field}: expected a JSON object, got a list"


def test_cli(tmp_path: Path) -> None:
    ref = json.dumps({"store_name": "店", "total_amount": "¥1,000"}, ensure_ascii=False)
    lines = [
        {"ref": ref, "pred": '```json\n{"store_name": "店", "total_amount": 1000}\n```'},
        {"ref": ref, "pred": "読めません"},
    ]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    result = run_cli("mm", "score", "--metric", "jawildtext-receipt-kie", str(source),
                     cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    scored = [json.loads(line)["score"] for line in result.stdout.splitlines()]
    assert [s["f1"] for s in scored] == [1.0, 0.0]
    assert [s["parse_error"] for s in scored] == [False, True]
    result = run_cli("mm", "score", "--metric", "jawildtext-receipt-kie", "--json",
                     str(source), cwd=tmp_path)  # fmt: skip
    assert json.loads(result.stdout)["details"]["parse_error_count"] == 1
    source.write_text(source.read_text() + json.dumps({"ref": "{", "pred": "x"}) + "\n")
    result = run_cli("mm", "score", "--metric", "jawildtext-receipt-kie", str(source),
                     cwd=tmp_path)  # fmt: skip
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("error: ") and 'in.jsonl:3: field "ref"' in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    source.write_text(json.dumps({"ref": "3", "pred": "The answer is 3."}) + "\n")
    result = run_cli("mm", "score", "--metric", "mathvista", "--json", str(source), cwd=tmp_path)
    assert json.loads(result.stdout) == {"overall_score": 1.0, "details": {"accuracy": 1.0}}
    result = run_cli("mm", "score", "--help", cwd=tmp_path)
    assert "jawildtext-receipt-kie: ref the receipt as a JSON object in a string" in result.stdout
    assert "jmmmu: ref a string, id, question_type (and options" in result.stdout


def test_evaluate_a_receipt_run(tmp_path: Path) -> None:
    """The task's default metric; the per-item dicts go into prediction.jsonl as the
    original writes them."""
    folder = tmp_path / "result" / "jawildtext-receipt-kie" / "model-a"
    folder.mkdir(parents=True)
    ref = json.dumps({"date": "2024-01-05", "total_amount": 1000})
    lines = [
        {"question_id": 0, "text": '{"date": "2024-01-05", "total_amount": "¥1,000"}',
         "answer": ref, "input_text": "q"},
        {"question_id": 1, "text": "分かりません", "answer": ref, "input_text": "q"},
    ]  # fmt: skip
    (folder / "prediction.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    result = run_cli("mm", "evaluate", str(tmp_path / "result"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    evaluation = json.loads((folder / "evaluation.jsonl").read_text())
    assert evaluation["jawildtext-receipt-kie"]["overall_score"] == 0.5
    assert evaluation["jawildtext-receipt-kie"]["details"]["parse_error_count"] == 1
    written = [json.loads(x) for x in (folder / "prediction.jsonl").read_text().splitlines()]
    assert written[0]["jawildtext-receipt-kie"]["field_accuracy"]["field_total_amount"] == 1.0
    assert written[1]["jawildtext-receipt-kie"]["parse_error"] is True
