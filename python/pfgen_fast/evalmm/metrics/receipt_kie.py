"""jawildtext-receipt-kie: the receipt fields a model extracts (a JSON object in its response)
against the reference object (a JSON string), as llm-jp-eval-mm scores them: a multiset of
`field:value` tokens (precision, recall, F1) and exact accuracy per scalar field."""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from typing import Any

from pfgen_fast.common.errors import InputError
from pfgen_fast.common.jsonl import json_problem, require_object

# The receipt's fields, in the order of the gold object (tasks/items.py builds it) and of the
# per-field accuracies.
SCALAR_FIELDS = (
    "store_name",
    "store_address",
    "receipt_id",
    "date",
    "time",
    "total_amount",
    "tax_amount",
)
LINE_ITEM_FIELDS = ("item_name", "item_price", "item_quantity")
# A fenced block (```, optionally "json"); its content is tried before a bare {...}.
FENCED = re.compile(r"```(?:json)?\s*\n?(.*?)\n?```", re.DOTALL)
CURRENCY_AND_COMMAS = re.compile(r"[¥￥,]")
SPACES = re.compile(r"\s+")


def first_braced(text: str) -> str | None:
    """From the first `{` to the `}` that brings the brace depth back to 0 (braces inside JSON
    strings count too); None when it never does."""
    start = text.find("{")
    if start < 0:
        return None
    depth = 0
    for index in range(start, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return text[start : index + 1]
    return None


def parse_prediction(text: str) -> dict[str, Any] | None:
    """The receipt object of a response; None (a parse error) when neither the first fenced
    block nor the first balanced braces parse, or when what parses is not an object."""
    fenced = FENCED.search(text)
    if fenced:
        try:
            value = json.loads(fenced.group(1).strip())
        except json.JSONDecodeError:
            pass
        else:
            return value if isinstance(value, dict) else None
    braced = first_braced(text)
    if braced is None:
        return None
    try:
        value = json.loads(braced)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def parse_reference(text: str, where: str) -> dict[str, Any]:
    """The receipt `ref` holds, read by `json` as the original reads it."""
    field = f'{where}: field "ref"'
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{field}: {json_problem(error)}") from None
    return require_object(value, field)


def check_reference(doc: dict[str, Any], where: str) -> None:
    parse_reference(doc["ref"], where)


def normalize_value(value: Any) -> str:
    """NFKC, lower-cased, stripped, then yen signs and commas removed and whitespace runs made
    one space (so a space left by a removed sign stays)."""
    if value is None:
        return ""
    text = unicodedata.normalize("NFKC", str(value)).lower().strip()
    return SPACES.sub(" ", CURRENCY_AND_COMMAS.sub("", text))


def line_items(receipt: dict[str, Any]) -> list[dict[str, Any]]:
    """The object items of `line_items`; anything else there gives none."""
    items = receipt.get("line_items")
    if not isinstance(items, list):
        return []
    return [item for item in items if isinstance(item, dict)]


def tokens(receipt: dict[str, Any]) -> Counter[str]:
    found = []
    for name in SCALAR_FIELDS:
        value = receipt.get(name)
        if value is not None and (normalized := normalize_value(value)):
            found.append(f"{name}:{normalized}")
    for item in line_items(receipt):
        for name in LINE_ITEM_FIELDS:
            value = item.get(name)
            if value is not None and (normalized := normalize_value(value)):
                found.append(f"line_items.{name}:{normalized}")
    return Counter(found)


def precision_recall_f1(gold: Counter[str], pred: Counter[str]) -> tuple[float, float, float]:
    if not gold and not pred:
        return 1.0, 1.0, 1.0
    if not pred:
        return 0.0, 0.0, 0.0
    if not gold:
        return 0.0, 1.0, 0.0
    correct = sum((gold & pred).values())
    precision = correct / sum(pred.values())
    recall = correct / sum(gold.values())
    if precision + recall == 0:
        return 0.0, 0.0, 0.0
    return precision, recall, 2 * precision * recall / (precision + recall)


def field_accuracy(gold: dict[str, Any], pred: dict[str, Any]) -> dict[str, float]:
    """1.0 per scalar field whose normalised texts are equal; a missing field reads "", a null
    one "None" (so it equals neither a missing field nor an empty string)."""
    return {
        f"field_{name}": float(
            normalize_value(str(gold.get(name, ""))) == normalize_value(str(pred.get(name, "")))
        )
        for name in SCALAR_FIELDS
    }


def score_item(ref: str, pred_text: str) -> dict[str, Any]:
    gold = parse_reference(ref, "item")
    pred = parse_prediction(pred_text)
    if pred is None:
        return {
            "f1": 0.0,
            "precision": 0.0,
            "recall": 0.0,
            "field_accuracy": {f"field_{name}": 0.0 for name in SCALAR_FIELDS},
            "parse_error": True,
        }
    precision, recall, f1 = precision_recall_f1(tokens(gold), tokens(pred))
    return {
        "f1": f1,
        "precision": precision,
        "recall": recall,
        "field_accuracy": field_accuracy(gold, pred),
        "parse_error": False,
    }


def aggregate(scores: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Mean F1 as overall score; mean precision and recall, the parse errors, and each field's
    accuracy over the items that parsed."""
    if not scores:
        return {"overall_score": 0.0, "details": {"f1": 0.0}}
    count = len(scores)
    mean_f1 = sum(s["f1"] for s in scores) / count
    parsed = [s for s in scores if not s["parse_error"]]
    details: dict[str, Any] = {
        "f1": mean_f1,
        "precision": sum(s["precision"] for s in scores) / count,
        "recall": sum(s["recall"] for s in scores) / count,
        "parse_error_count": count - len(parsed),
    }
    for name in SCALAR_FIELDS:
        key = f"field_{name}"
        values = [s["field_accuracy"][key] for s in parsed]
        details[key] = sum(values) / len(values) if values else 0.0
    return {"overall_score": mean_f1, "details": details}
