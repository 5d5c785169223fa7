"""The rules of the construction's first two steps: style normalisation (ordered regular
expression replacements and literal maps, run by polars) and NG patterns per question."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from pfgen_fast.common.errors import DataError
from pfgen_fast.common.jsonl import read_json, type_name, wrong_type

DEFAULT_STYLE_RULES = Path(__file__).resolve().parents[2] / "reference_data" / "style_rules.json"


@dataclass(frozen=True)
class StyleRule:
    """A regular-expression replacement (`pattern` -> `replacement`, "" deletes), or literal
    replacements done at once (`mapping`)."""

    name: str
    pattern: str = ""
    replacement: str = ""
    mapping: dict[str, str] | None = None

    def apply(self, texts: pl.Series) -> pl.Series:
        if self.mapping is not None:
            return texts.str.replace_many(self.mapping)
        return texts.str.replace_all(self.pattern, self.replacement)


def contains(texts: pl.Series, pattern: str) -> pl.Series:
    """Whether each text matches `pattern`; as a lazy query, which polars runs on all threads
    (`Series.str.contains` runs on one)."""
    query = pl.LazyFrame({"text": texts}).select(pl.col("text").str.contains(pattern))
    return query.collect().to_series()


class StyleRules:
    """An ordered list of style rules. A text that no rule's pattern matches is left unchanged
    by every rule (by induction over the list), so one search for any pattern picks the few
    texts the rules must run on."""

    def __init__(self, rules: list[StyleRule]) -> None:
        self.rules = rules
        triggers = [
            "|".join(pl.escape_regex(key) for key in rule.mapping)
            if rule.mapping is not None
            else rule.pattern
            for rule in rules
        ]
        self.trigger = "|".join(f"(?:{t})" for t in triggers if t)

    def apply(self, texts: pl.Series) -> pl.Series:
        if not self.trigger:
            return texts
        touched = np.flatnonzero(contains(texts, self.trigger).to_numpy())
        if len(touched) == 0:
            return texts
        changed = texts.gather(touched)
        for rule in self.rules:
            changed = rule.apply(changed)
        return texts.clone().scatter(touched, changed)


def check_pattern(pattern: Any, path: Path, field: str) -> str:
    """A regular expression polars accepts (Rust `regex` syntax), else a DataError naming the
    file and the field."""
    where = f'{path}: field "{field}"'
    if not isinstance(pattern, str) or not pattern:
        raise DataError(f"{where}: expected a regular expression, got {type_name(pattern)}")
    try:
        pl.Series([""]).str.contains(pattern)
    except pl.exceptions.PolarsError as error:
        message = str(error).strip().splitlines()
        detail = message[-1].strip() if message else "invalid"
        for line in message:
            if line.strip().startswith("error:"):
                detail = line.strip()
        raise DataError(f"{where}: not a regular expression: {pattern!r}: {detail}") from None
    return pattern


def load_style_rules(path: Path) -> StyleRules:
    """The ordered rules of a style file: {"rules": [{"name", "pattern", "replace" | "delete"}
    or {"name", "map": {text: replacement}}, ...]}."""
    raw = read_json(path, DataError)
    rules = raw.get("rules") if isinstance(raw, dict) else None
    if not isinstance(rules, list):
        raise DataError(f'{path}: field "rules": expected a list')
    loaded = []
    for index, rule in enumerate(rules):
        where = f"rules[{index}]"
        if not isinstance(rule, dict):
            raise DataError(f"{path}: {wrong_type(where, 'an object', rule)}")
        name = rule.get("name", f"rule {index}")
        if "map" in rule:
            mapping = rule["map"]
            if not isinstance(mapping, dict) or not all(
                isinstance(k, str) and k and isinstance(v, str) for k, v in mapping.items()
            ):
                raise DataError(
                    f'{path}: field "{where}.map": expected non-empty strings to strings'
                )
            loaded.append(StyleRule(name, mapping=mapping))
            continue
        pattern = check_pattern(rule.get("pattern"), path, f"{where}.pattern")
        if rule.get("delete") is True:
            loaded.append(StyleRule(name, pattern))
            continue
        replacement = rule.get("replace")
        if not isinstance(replacement, str):
            raise DataError(
                f'{path}: field "{where}": expected "replace" (a string), "delete": true or "map"'
            )
        loaded.append(StyleRule(name, pattern, replacement))
    return StyleRules(loaded)


def load_ng_rules(path: Path, question_ids: set[str]) -> dict[str, list[str]]:
    """NG patterns by question id: {"rules": {"Q01": [pattern, ...], ...}}."""
    raw = read_json(path, DataError)
    rules = raw.get("rules") if isinstance(raw, dict) else None
    if not isinstance(rules, dict):
        raise DataError(f'{path}: field "rules": expected an object (question id -> list)')
    loaded = {}
    for question_id, patterns in rules.items():
        where = f"rules.{question_id}"
        if question_id not in question_ids:
            raise DataError(f'{path}: field "{where}": no question {question_id!r} in the metadata')
        if not isinstance(patterns, list):
            raise DataError(f"{path}: {wrong_type(where, 'a list', patterns)}")
        loaded[question_id] = [
            check_pattern(p, path, f"{where}[{i}]") for i, p in enumerate(patterns)
        ]
    return loaded
