"""A ranking of models from pairwise verdicts: the Bradley-Terry model, P(i beats j) =
p_i / (p_i + p_j), fitted by Hunter's MM algorithm (2004), a tie counting half a win for each
side, with percentile bootstrap intervals.

Every pair of models that met gets `prior` virtual ties, so a model that never won (or never
lost) keeps a finite strength. Bootstrap samples redraw the verdicts of each pair of models
separately, so every sample compares the same pairs as the data."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pfgen_fast.common.errors import PfgenError

MAX_ITERATIONS = 10_000
TOLERANCE = 1e-10


@dataclass(frozen=True)
class Comparison:
    first: str
    second: str
    outcome: str  # "A": first wins, "B": second wins, "C": tie


@dataclass(frozen=True)
class Ranked:
    model: str
    strength: float  # log p, the models' mean 0
    low: float  # bootstrap interval of the strength
    high: float
    wins: int
    losses: int
    ties: int


def win_matrix(
    comparisons: Sequence[Comparison], index: dict[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """wins[i, j]: times i beat j, a tie counting half; games[i, j]: times i and j met."""
    size = len(index)
    wins = np.zeros((size, size))
    for c in comparisons:
        i, j = index[c.first], index[c.second]
        if c.outcome == "A":
            wins[i, j] += 1.0
        elif c.outcome == "B":
            wins[j, i] += 1.0
        else:
            wins[i, j] += 0.5
            wins[j, i] += 0.5
    return wins, wins + wins.T


def fit_strengths(wins: np.ndarray, prior: float) -> np.ndarray:
    """The log strengths (mean 0) maximising the Bradley-Terry likelihood of `wins`, with
    `prior` virtual ties between every pair that met."""
    met = (wins + wins.T) > 0
    wins = wins + np.where(met, prior / 2, 0.0)
    games = wins + wins.T
    total_wins = wins.sum(axis=1)
    strengths = np.ones(len(wins))
    for _ in range(MAX_ITERATIONS):
        pair_sums = strengths[:, None] + strengths[None, :]
        denominators = (games / pair_sums).sum(axis=1)
        updated = total_wins / denominators
        updated /= np.exp(np.log(updated).mean())
        if np.max(np.abs(updated - strengths)) < TOLERANCE:
            strengths = updated
            break
        strengths = updated
    logs = np.log(strengths)
    return logs - logs.mean()


def require_connected(games: np.ndarray, models: list[str]) -> None:
    """Strengths compare only models linked by a chain of meetings."""
    reached = {0}
    frontier = [0]
    while frontier:
        i = frontier.pop()
        for j in np.nonzero(games[i])[0]:
            if int(j) not in reached:
                reached.add(int(j))
                frontier.append(int(j))
    if len(reached) < len(models):
        apart = next(m for k, m in enumerate(models) if k not in reached)
        raise PfgenError(
            f"cannot rank: {apart} is never compared, directly or through other models, "
            f"with {models[0]}"
        )


def rank_models(
    comparisons: Sequence[Comparison],
    *,
    prior: float = 1.0,
    bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[Ranked]:
    """Models by strength, strongest first, with percentile intervals from `bootstrap`
    resamples (none when 0: the interval is the estimate)."""
    comparisons = [c for c in comparisons if c.first != c.second]  # a model against itself
    models = sorted({c.first for c in comparisons} | {c.second for c in comparisons})
    if len(models) < 2:
        raise PfgenError("cannot rank: the verdicts name fewer than two models")
    index = {model: i for i, model in enumerate(models)}
    wins, games = win_matrix(comparisons, index)
    require_connected(games, models)
    estimate = fit_strengths(wins, prior)
    low, high = estimate.copy(), estimate.copy()
    if bootstrap > 0:
        samples = bootstrap_strengths(comparisons, index, prior, bootstrap, seed)
        tail = (1 - confidence) / 2 * 100
        low, high = np.percentile(samples, [tail, 100 - tail], axis=0)
    counts = outcome_counts(comparisons, models)
    order = sorted(range(len(models)), key=lambda i: (-estimate[i], models[i]))
    return [
        Ranked(models[i], float(estimate[i]), float(low[i]), float(high[i]), *counts[models[i]])
        for i in order
    ]


def bootstrap_strengths(
    comparisons: Sequence[Comparison], index: dict[str, int], prior: float, samples: int, seed: int
) -> np.ndarray:
    """Strengths fitted to `samples` resamples, each redrawing every pair's verdicts."""
    groups: dict[tuple[int, int], list[float]] = {}
    for c in comparisons:
        i, j = index[c.first], index[c.second]
        first_wins = {"A": 1.0, "B": 0.0}.get(c.outcome, 0.5)
        # keyed by (lower index, higher index), the outcome seen from the lower index
        key, won = ((i, j), first_wins) if i < j else ((j, i), 1.0 - first_wins)
        groups.setdefault(key, []).append(won)
    pairs = [(key, np.array(values)) for key, values in groups.items()]
    generator = np.random.default_rng(seed)
    results = np.empty((samples, len(index)))
    for s in range(samples):
        wins = np.zeros((len(index), len(index)))
        for (i, j), outcomes in pairs:
            drawn = outcomes[generator.integers(0, len(outcomes), len(outcomes))]
            wins[i, j] += drawn.sum()
            wins[j, i] += len(drawn) - drawn.sum()
        results[s] = fit_strengths(wins, prior)
    return results


def outcome_counts(
    comparisons: Sequence[Comparison], models: list[str]
) -> dict[str, tuple[int, int, int]]:
    """(wins, losses, ties) of each model."""
    counts = {model: [0, 0, 0] for model in models}
    for c in comparisons:
        if c.outcome == "A":
            counts[c.first][0] += 1
            counts[c.second][1] += 1
        elif c.outcome == "B":
            counts[c.second][0] += 1
            counts[c.first][1] += 1
        else:
            counts[c.first][2] += 1
            counts[c.second][2] += 1
    return {model: (w, losses, t) for model, (w, losses, t) in counts.items()}
