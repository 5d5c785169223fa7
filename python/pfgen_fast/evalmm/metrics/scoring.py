"""Items read from a JSON lines file (`ref`, `pred` and the document fields a metric needs),
checked field by field, then scored and aggregated."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import InputError
from pfgen_fast.common.jsonl import iter_json_lines, require, type_name
from pfgen_fast.evalmm.metrics.base import Aggregate, Batch, Judged, Options, Scorer
from pfgen_fast.evalmm.metrics.tokens import TextTooLong


@dataclass
class Items:
    lines: list[dict[str, Any]]
    wheres: list[str]

    @property
    def refs(self) -> list[Any]:
        return [line["ref"] for line in self.lines]

    @property
    def preds(self) -> list[str]:
        return [line["pred"] for line in self.lines]


def check_item(scorer: Scorer, value: dict[str, Any], where: str) -> None:
    """An InputError naming the field the metric needs and the item lacks or has wrong."""
    ref = require(value, "ref", scorer.ref_kinds, where)
    if isinstance(ref, list):
        for index, element in enumerate(ref):
            if not isinstance(element, str):
                raise InputError(
                    f'{where}: field "ref": element {index}: expected a string, '
                    f"got {type_name(element)}"
                )
    require(value, "pred", str, where)
    for name, kind in scorer.fields:
        try:
            require(value, name, kind, where)
        except InputError as error:
            raise InputError(f"{error} (metric {scorer.name} needs it)") from None
    if scorer.check is not None:
        scorer.check(value, where)


def read_items(path: Path, scorer: Scorer) -> Items:
    lines: list[dict[str, Any]] = []
    wheres: list[str] = []
    for line in iter_json_lines(path):
        check_item(scorer, line.value, line.where)
        lines.append(line.value)
        wheres.append(line.where)
    if not lines:
        raise InputError(f"{path}: no items")
    return Items(lines, wheres)


@dataclass(frozen=True)
class Scored:
    """One metric over a batch: the items' scores, their aggregate, and why a judge gave no
    verdict on some items (item index → reason; empty for a metric without a judge)."""

    scores: list[Any]
    aggregate: Aggregate
    judge_failures: dict[int, str]


def score_items(
    scorer: Scorer,
    refs: list[Any],
    preds: list[str],
    docs: list[dict[str, Any]],
    options: Options,
    wheres: list[str],
) -> Scored:
    """The items' scores and their aggregate; a text the tokenizer refuses is an InputError
    naming its item (`wheres`: where each item is, e.g. `file:line`)."""
    batch = Batch(refs, preds, docs, options)
    try:
        scored = scorer.score(batch)
    except TextTooLong as error:
        for where, ref, pred in zip(wheres, refs, preds, strict=True):
            field = "pred" if pred == error.text else "ref" if ref == error.text else None
            if field is not None:
                raise InputError(f'{where}: field "{field}": {error}') from None
        raise
    scores, failures = (
        (scored.scores, scored.failures) if isinstance(scored, Judged) else (scored, {})
    )
    return Scored(scores, scorer.aggregate(scores, batch), failures)


def record_judge_failures(
    metric: str, failures: dict[int, str], lines: Sequence[dict[str, Any]]
) -> int:
    """Puts the reason of each item `metric`'s judge could not score into its line
    (`judge_errors`: metric → reason); how many there were."""
    for item, reason in failures.items():
        lines[item].setdefault("judge_errors", {})[metric] = reason
    return len(failures)
