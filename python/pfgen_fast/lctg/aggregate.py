"""The benchmark's scores from per-generation results, with its rounding order: per iteration,
a constraint's CTG rate is written with 3 decimals and those are averaged (`get_scores.py`);
the quality rate of an iteration is kept unrounded, the mean of the three is rounded; the
averages over the four constraints follow, and every cell is shown with 3 decimals."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pfgen_fast.lctg.data import CONSTRAINTS

ITERATIONS = 3
LABELS = {
    "format": "Format",
    "char_count": "C-count",
    "keyword": "Keyword",
    "prohibited_word": "P-word",
}
COLUMNS = [f"{LABELS[c]}-{kind}" for c in CONSTRAINTS for kind in ("ctg", "qual")] + [
    "Avg-ctg",
    "Avg-qual",
]


def shown(value: float) -> float:
    """The value as the benchmark writes it ("{:.3f}"), read back as a number."""
    return float(f"{value:.3f}")


def ctg_rate(results: Sequence[bool | None]) -> float | None:
    """Satisfied generations over all generations of the joined prompts (None fails); None
    when there are none (every generation of the iteration failed at the remover)."""
    if not results:
        return None
    return sum(1 for result in results if result is True) / len(results)


def quality_rate(labels: Sequence[bool | str | None]) -> tuple[float | None, int, int]:
    """(rate, judged appropriate, judged): unparseable replies (strings) and items without a
    label (None: a failed call) leave numerator and denominator; the rate is None when no
    reply of the iteration could be parsed (the benchmark's script stops there with a
    division by zero)."""
    judged = [label for label in labels if isinstance(label, bool)]
    appropriate = sum(1 for label in judged if label)
    return (appropriate / len(judged) if judged else None), appropriate, len(judged)


@dataclass(frozen=True)
class ConstraintScores:
    ctg_iterations: list[float | None]  # unrounded, per iteration
    ctg_counts: list[int]  # satisfied, per iteration
    ctg_checked: list[int]  # generations checked, per iteration
    quality_iterations: list[float | None]  # unrounded, per iteration
    quality_counts: list[tuple[int, int]]  # (appropriate, judged), per iteration
    ctg: float | None  # mean of the rounded iteration rates
    quality: float | None  # the rounded mean of the iteration rates


def rounded_mean(rates: Sequence[float | None]) -> float | None:
    """The mean of the rates rounded as the benchmark writes them; None when one is None."""
    present = [shown(rate) for rate in rates if rate is not None]
    return sum(present) / len(present) if len(present) == len(rates) else None


def constraint_scores(
    ctg_results: Sequence[Sequence[bool | None]], labels: Sequence[Sequence[bool | str | None]]
) -> ConstraintScores:
    """One constraint's scores from its per-iteration results (`[iteration][prompt]`)."""
    ctg_iterations = [ctg_rate(results) for results in ctg_results]
    quality = [quality_rate(iteration) for iteration in labels]
    rates = [rate for rate, _, _ in quality]
    mean_quality = None
    if all(rate is not None for rate in rates):
        mean_quality = shown(sum(rate for rate in rates if rate is not None) / len(rates))
    return ConstraintScores(
        ctg_iterations=ctg_iterations,
        ctg_counts=[sum(1 for r in results if r is True) for results in ctg_results],
        ctg_checked=[len(results) for results in ctg_results],
        quality_iterations=rates,
        quality_counts=[(appropriate, judged) for _, appropriate, judged in quality],
        ctg=rounded_mean(ctg_iterations),
        quality=mean_quality,
    )


def score_row(scores: dict[str, ConstraintScores]) -> dict[str, float | None]:
    """The table's cells before display: the averages come from the unrounded CTG means and
    from the rounded quality means."""
    row: dict[str, float | None] = {}
    for constraint in CONSTRAINTS:
        row[f"{LABELS[constraint]}-ctg"] = scores[constraint].ctg
        row[f"{LABELS[constraint]}-qual"] = scores[constraint].quality
    row["Avg-ctg"] = mean_of_all([scores[c].ctg for c in CONSTRAINTS])
    row["Avg-qual"] = mean_of_all([scores[c].quality for c in CONSTRAINTS])
    return row


def mean_of_all(values: Sequence[float | None]) -> float | None:
    """The mean of the values; None when one of them is None."""
    present = [value for value in values if value is not None]
    return sum(present) / len(values) if len(present) == len(values) else None


def shown_row(row: dict[str, float | None]) -> dict[str, float | None]:
    """Every cell as the benchmark's table shows it (3 decimals)."""
    return {name: None if value is None else shown(value) for name, value in row.items()}
