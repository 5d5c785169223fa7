"""The aggregates of the non-judge scorers: `{"overall_score": ..., "details": {...}}` with the
keys llm-jp-eval-mm writes. Means are sums divided by counts, in item order."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

JDOCQA_TYPES = {0: "yesno", 1: "factoid", 2: "numerical", 3: "open-ended"}
ROTATION = re.compile(r"(.*)_rot(\d+)$")


def mean(values: Sequence[float]) -> float:
    """The arithmetic mean; 0.0 for no values."""
    return sum(values) / len(values) if values else 0.0


def simple(key: str, scores: Sequence[float]) -> dict[str, Any]:
    value = mean(scores)
    return {"overall_score": value, "details": {key: value}}


def with_counts(scores: Sequence[int]) -> dict[str, Any]:
    """blink: the accuracy with the number of items and of right ones (only the accuracy when
    there are none)."""
    if not scores:
        return simple("accuracy", scores)
    value = mean(scores)
    details = {"accuracy": value, "total_samples": len(scores), "correct_samples": sum(scores)}
    return {"overall_score": value, "details": details}


def jdocqa(scores: Sequence[float], docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    by_type: dict[int, list[float]] = {kind: [] for kind in JDOCQA_TYPES}
    for score, doc in zip(scores, docs, strict=True):
        by_type[doc["answer_type"]].append(score)
    details: dict[str, Any] = {}
    for kind, name in JDOCQA_TYPES.items():
        suffix = "bleu" if kind == 3 else "exact"
        details[f"{name}_{suffix}"] = mean(by_type[kind])
    details["overall"] = mean(scores)
    return {"overall_score": details["overall"], "details": details}


def by_domain(scores: Sequence[float], docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """jic-vqa: mean per domain, in the order the domains first appear, and their unweighted
    mean as `average`. Items without a domain (null: llm-jp-eval-mm's preparation script gives
    none to a question naming none of its four) are a group of their own, `"null"`, as the
    original's None key is written in JSON."""
    domains: dict[str, list[float]] = {}
    for score, doc in zip(scores, docs, strict=True):
        domain = "null" if doc["domain"] is None else doc["domain"]
        domains.setdefault(domain, []).append(score)
    details: dict[str, Any] = {name: mean(values) for name, values in domains.items()}
    details["average"] = mean(list(details.values()))
    return {"overall_score": details["average"], "details": details}


def rotation_group(question_id: str) -> str:
    found = ROTATION.match(question_id)
    return f"rot_{found.group(2)}" if found else "rot_no_rot"


def mecha_group(pairs: Sequence[tuple[float, dict[str, Any]]]) -> dict[str, float]:
    def part(keep: Any) -> float:
        return mean([score for score, doc in pairs if keep(doc)])

    return {
        "overall": mean([score for score, _ in pairs]),
        "Factoid": part(lambda doc: doc["answer_type"] == 0),
        "Non-Factoid": part(lambda doc: doc["answer_type"] != 0),
        "with_background": part(lambda doc: bool(doc["background_text"])),
        "without_background": part(lambda doc: not doc["background_text"]),
    }


def mecha_ja(scores: Sequence[float], docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Overall, by answer type and by background, then the same five per rotation group
    (`rot_<i>` or `rot_no_rot`, in the order the groups first appear) as a nested object."""
    pairs = list(zip(scores, docs, strict=True))
    details: dict[str, Any] = mecha_group(pairs)
    groups: dict[str, list[tuple[float, dict[str, Any]]]] = {}
    for score, doc in pairs:
        groups.setdefault(rotation_group(doc["question_id"]), []).append((score, doc))
    for group, members in groups.items():
        details[group] = mecha_group(members)
    return {"overall_score": details["overall"], "details": details}
