"""The pairs to judge, read from JSON lines: `id`, `question`, `reference` (optional),
`answer_a`, `answer_b`, `labels` (optional human verdicts, each A, B or C), and optionally
`model_a`, `model_b` (the names a ranking uses) and `task` (a group the measures are also
given for). Every problem names the file, line and field."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pfgen_fast.common.errors import InputError
from pfgen_fast.common.jsonl import iter_json_lines, require
from pfgen_fast.judge.verdicts import LETTERS


@dataclass(frozen=True)
class PairItem:
    id: str | int
    question: str
    reference: str | None
    answer_a: str
    answer_b: str
    labels: tuple[str, ...] | None = None
    model_a: str | None = None
    model_b: str | None = None
    task: str | None = None


def optional_string(obj: dict[str, object], name: str, where: str) -> str | None:
    if obj.get(name) is None:
        return None
    return require(obj, name, str, where)


def answer(obj: dict[str, object], name: str, where: str) -> str:
    text = require(obj, name, str, where)
    if not text.strip():
        raise InputError(f'{where}: field "{name}": empty answer')
    return text


def read_labels(obj: dict[str, object], where: str) -> tuple[str, ...] | None:
    if obj.get("labels") is None:
        return None
    labels = require(obj, "labels", list, where)
    if not labels:
        raise InputError(f'{where}: field "labels": empty list')
    for label in labels:
        if label not in LETTERS:
            raise InputError(f'{where}: field "labels": {label!r} is not "A", "B" or "C"')
    return tuple(labels)


def read_item(obj: dict[str, object], where: str) -> PairItem:
    return PairItem(
        id=require(obj, "id", (str, int), where),
        question=require(obj, "question", str, where),
        reference=optional_string(obj, "reference", where),
        answer_a=answer(obj, "answer_a", where),
        answer_b=answer(obj, "answer_b", where),
        labels=read_labels(obj, where),
        model_a=optional_string(obj, "model_a", where),
        model_b=optional_string(obj, "model_b", where),
        task=optional_string(obj, "task", where),
    )


def load_items(path: Path) -> list[PairItem]:
    """The items of a JSON lines file; ids are unique, and every item with labels has as many
    as the first (annotator j gives each item's j-th label)."""
    items: list[PairItem] = []
    first_line: dict[str | int, int] = {}
    annotators: tuple[int, int] | None = None  # (labels per item, line of the first such item)
    for line in iter_json_lines(path):
        item = read_item(line.value, line.where)
        if item.id in first_line:
            raise InputError(
                f'{line.where}: field "id": duplicate id {item.id!r} '
                f"(first at line {first_line[item.id]})"
            )
        first_line[item.id] = line.line
        if item.labels is not None:
            if annotators is None:
                annotators = (len(item.labels), line.line)
            elif len(item.labels) != annotators[0]:
                raise InputError(
                    f'{line.where}: field "labels": {len(item.labels)} labels, but line '
                    f"{annotators[1]} has {annotators[0]} (one per annotator)"
                )
        items.append(item)
    if not items:
        raise InputError(f"{path}: no items")
    return items
