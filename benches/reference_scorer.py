"""A pure-Python scorer written straight from scoring-spec.md §2-§6.

It is slow and obviously correct: the tests use it to judge the Rust core, and the score and
eval benches time it as their baseline (it is not shipped).
Every function follows the spec's wording, including its float operation order, except in one
place where the official scorer's published records show the spec wrong: the average adds the
rounded helpfulness (§6 says unrounded).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from reference_sums import official_sum

from pfgen_fast.pfgen.data import Question

MAX_NGRAM = 10
FLUENCY_CUT = 200
TRUTHFULNESS_CUT = 202
HELPFULNESS_CUT = 200
NOT_FOUND = 9999
# §4: characters the Truthfulness walk skips (ASCII `^`/`$` included, wherever they occur).
EXCLUDED = frozenset("^$、。・「」『』（）【】［］〈〉《》")


@dataclass(frozen=True)
class SourceTable:
    """One source's document frequencies of 1..10-grams, its size and its baseline (§2)."""

    df: dict[str, int]
    num_answers: int
    baseline: float


def distinct_ngrams(text: str) -> set[str]:
    """The distinct substrings of `text` of length 1..10."""
    return {
        text[start : start + n]
        for n in range(1, MAX_NGRAM + 1)
        for start in range(len(text) - n + 1)
    }


def document_frequencies(answers: list[str]) -> dict[str, int]:
    """df(g) = number of answers whose substrings include g."""
    counts: Counter[str] = Counter()
    for answer in answers:
        counts.update(distinct_ngrams(answer))
    return dict(counts)


def fluency(answer: str, df: dict[str, int], baseline: float) -> float:
    """§3: best-over-prefix of (summed df of distinct n-grams) * discount / baseline."""
    y = answer[:FLUENCY_CUT]
    seen: set[str] = set()
    total = 0
    best = 0.0
    for length in range(1, len(y) + 1):
        for n in range(1, min(MAX_NGRAM, length) + 1):
            gram = y[length - n : length]
            if gram not in seen:
                seen.add(gram)
                total += df.get(gram, 0)
        discount = 1 - max(length - 100, 0) / 50
        value = total * discount / baseline
        if value > best:
            best = value
    return best


def baseline(answers: list[str], df: dict[str, int]) -> float:
    """§2: mean raw fluency (baseline 1.0) of the source's own answers, summed in file order."""
    total = 0.0
    for answer in answers:
        total += fluency(answer, df, 1.0)
    return total / len(answers)


def truthfulness(answer: str, df: dict[str, int], num_answers: int) -> float:
    """§4: running mean of saturated 3-gram coverage over kept characters, best from j = 100."""
    t = ("^" + answer + "$")[:TRUTHFULNESS_CUT]
    coverage = [0] * len(t)
    for start in range(len(t) - 2):
        frequency = df.get(t[start : start + 3], 0)
        if frequency > 0:
            for j in range(start, start + 3):
                coverage[j] = max(coverage[j], frequency)
    total = 0.0
    count = 0
    current = 0.0
    best = 0.0
    for j, char in enumerate(t):
        if char in EXCLUDED:
            continue
        total += min(1.0, coverage[j] / num_answers * 200.0)
        count += 1
        current = total / count * (1 - max(j - 100, 0) / 50)
        if j >= 100:
            best = max(best, current)
    return max(best, current)


def rule_value(rule: dict[str, Any], head: str) -> tuple[int, str]:
    """§5: (value, name) of a keyword rule: match end of a `t` pattern, else max/min of children."""
    if "t" in rule:
        match = re.search(rule["t"], head)
        value = match.end() if match is not None else NOT_FOUND
        return value, rule.get("name", rule["t"])
    kind = "and" if "and" in rule else "or"
    children = [rule_value(child, head) for child in rule[kind]]
    values = [value for value, _ in children]
    value = max(values) if kind == "and" else min(values)
    first_name = next(name for child_value, name in children if child_value == value)
    return value, rule.get("name", first_name)


def helpfulness(answer: str, keywords: list[dict[str, Any]]) -> tuple[float, list[list[Any]]]:
    """§5: (H, helpfulness_results)."""
    head = answer[:HELPFULNESS_CUT]
    s = [1 - max(i - 100, 0) / 50 for i in range(min(len(head), 150) + 1)]
    rules = []
    for rule in keywords:
        value, name = rule_value(rule, head)
        factor = 1 - rule.get("importance", 1.0)
        rules.append((value, name, factor))
        for i in range(min(value, len(s))):
            s[i] *= factor
    best = max(s)
    n = max(i for i, value in enumerate(s) if value == best)
    results: list[list[Any]] = [[name, factor] for value, name, factor in rules if value > n]
    if n > 100 and s[n] > 0:
        results.append([f"{n - 100}字超過", 1 - max(n - 100, 0) / 50])
    return s[n], results


def source_table(answers: list[str]) -> SourceTable:
    """§2: a source's document frequencies and baseline (about a second and 35 MB per source)."""
    df = document_frequencies(answers)
    return SourceTable(df, len(answers), baseline(answers, df))


class ReferenceScorer:
    """Scores answers to one question against all its sources, or the given ones in that order."""

    def __init__(self, question: Question, tables: dict[str, SourceTable]) -> None:
        self.question = question
        self.sources = list(tables)
        self.tables = tables

    @classmethod
    def build(cls, question: Question) -> ReferenceScorer:
        """Builds the tables of every source of the question, in file order."""
        return cls(
            question, {source: source_table(refs) for source, refs in question.answers.items()}
        )

    def restricted_to(self, sources: list[str]) -> ReferenceScorer:
        """A scorer of the same question on some of its sources, in that order, sharing tables."""
        return ReferenceScorer(self.question, {source: self.tables[source] for source in sources})

    def raw_scores(self, answer: str) -> tuple[dict[str, float], dict[str, float]]:
        """Unrounded F_k and T_k per source, in source order."""
        fluencies = {k: fluency(answer, t.df, t.baseline) for k, t in self.tables.items()}
        truths = {k: truthfulness(answer, t.df, t.num_answers) for k, t in self.tables.items()}
        return fluencies, truths

    def score_record(self, answer: str, legacy_sum: bool = False) -> dict[str, Any]:
        """§6: the per-answer record, key order included; the official `sum()` of Python >= 3.12,
        or of Python <= 3.11 with `legacy_sum`."""
        num_sources = len(self.sources)
        raw_fluency, raw_truth = self.raw_scores(answer)
        fluencies = {k: round(v / num_sources, 6) for k, v in raw_fluency.items()}
        truths = {k: round(v / num_sources, 6) for k, v in raw_truth.items()}
        help_value, help_results = helpfulness(answer, self.question.keywords)
        rounded_help = round(help_value, 5)
        total_fluency = official_sum(fluencies.values(), legacy_sum)
        # The rounded H, as the official scorer adds it (scoring-spec.md §6 says unrounded; the
        # official records of over-length answers whose average is a tie say otherwise).
        average = (total_fluency + official_sum(truths.values(), legacy_sum) + rounded_help) / 3
        return {
            "fluency": fluencies,
            "fluency_discount": 1.0,
            "truthfulness": truths,
            "helpfulness": rounded_help,
            "helpfulness_results": help_results,
            "average": round(average, 5),
        }

    def trigram_df(self, text: str) -> list[int]:
        """§8: per character, the largest summed-over-sources df of the 3-grams covering it."""
        coverage = [0] * len(text)
        for start in range(len(text) - 2):
            gram = text[start : start + 3]
            frequency = sum(t.df.get(gram, 0) for t in self.tables.values())
            for j in range(start, start + 3):
                coverage[j] = max(coverage[j], frequency)
        return coverage


def record_differences(actual: dict[str, Any], expected: dict[str, Any]) -> list[str]:
    """How `actual` departs from `expected` beyond the tolerance of scoring-spec.md §9 (1e-6 for
    the 6-digit per-source values, 1e-5 for the others); key order and helpfulness_results must
    be equal."""
    problems = []
    if list(actual) != list(expected):
        problems.append(f"keys {list(actual)} != {list(expected)}")
    for field in ("fluency", "truthfulness"):
        got, want = actual.get(field, {}), expected.get(field, {})
        if list(got) != list(want):
            problems.append(f"{field} sources {list(got)} != {list(want)}")
            continue
        for source, value in want.items():
            if abs(got[source] - value) > 1e-6 + 1e-12:
                problems.append(f"{field}[{source}] {got[source]!r} != {value!r}")
    for field in ("fluency_discount", "helpfulness", "average"):
        value = actual.get(field)
        if not isinstance(value, float) or abs(value - expected[field]) > 1e-5 + 1e-12:
            problems.append(f"{field} {value!r} != {expected[field]!r}")
    if actual.get("helpfulness_results") != expected["helpfulness_results"]:
        problems.append(
            f"helpfulness_results {actual.get('helpfulness_results')!r} != "
            f"{expected['helpfulness_results']!r}"
        )
    return problems
