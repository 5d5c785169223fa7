"""The paper's figures as PNG and SVG: the three measures against each other (Fig. 1-3),
score against answer length, and the source stability scatter plots (Fig. 4-6).

matplotlib is an optional dependency (`pip install pfgen_fast[plot]`), imported only here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pfgen_fast.common.figures import pyplot, save_figure
from pfgen_fast.pfgen.exactness import py_sum
from pfgen_fast.pfgen.results import RunResult
from pfgen_fast.pfgen.stability import pearson_by_pair

# How each kind of run is drawn: label, marker, colour.
STYLES = {
    "completion": ("completion", "o", "#2ca02c"),
    "chat": ("qa / chat", "^", "#1f77b4"),
    "system": ("system", "*", "#d62728"),
}
MEASURE_LABELS = {
    "fluency": "Fluency",
    "truthfulness": "Truthfulness",
    "helpfulness": "Helpfulness",
}
MEASURE_PAIRS = [
    ("fluency", "truthfulness"),
    ("fluency", "helpfulness"),
    ("truthfulness", "helpfulness"),
]


@dataclass(frozen=True)
class RunPoint:
    """What the figures need of one run."""

    kind: str  # a key of STYLES
    fluency: float
    truthfulness: float
    helpfulness: float
    score: float
    length: float


def kind_of(mode: str) -> str:
    return mode if mode in ("completion", "system") else "chat"


def run_point(run: RunResult, legacy_sum: bool = False) -> RunPoint:
    scores = run.data["scores"]
    return RunPoint(
        kind_of(run.mode),
        py_sum(list(scores["fluency"].values()), legacy_sum),
        py_sum(list(scores["truthfulness"].values()), legacy_sum),
        scores["helpfulness"],
        run.data["score"],
        run.data["length"],
    )


def scatter_by_kind(axes: Any, kinds: Sequence[str], x: np.ndarray, y: np.ndarray) -> None:
    kinds_array = np.asarray(kinds)
    for kind, (label, marker, colour) in STYLES.items():
        chosen = kinds_array == kind
        if chosen.any():
            axes.scatter(
                x[chosen],
                y[chosen],
                marker=marker,
                color=colour,
                label=label,
                s=60 if kind == "system" else 22,
                alpha=0.8,
                edgecolors="none",
            )
    axes.grid(True, alpha=0.3)
    axes.legend(loc="best", fontsize=8)


def measure_figures(points: Sequence[RunPoint], out_dir: Path) -> list[Path]:
    """Fig. 1-3: each pair of measures, one point per run."""
    plt = pyplot()
    kinds = [p.kind for p in points]
    written = []
    for number, (x_measure, y_measure) in enumerate(MEASURE_PAIRS, start=1):
        figure, axes = plt.subplots(figsize=(5, 4.5))
        x = np.array([getattr(p, x_measure) for p in points])
        y = np.array([getattr(p, y_measure) for p in points])
        scatter_by_kind(axes, kinds, x, y)
        axes.set_xlabel(MEASURE_LABELS[x_measure])
        axes.set_ylabel(MEASURE_LABELS[y_measure])
        axes.set_title(
            f"Fig. {number}: {MEASURE_LABELS[x_measure]} vs {MEASURE_LABELS[y_measure]} "
            f"({len(points)} runs)"
        )
        written += save_figure(figure, out_dir, f"fig{number}_{x_measure}_{y_measure}")
        plt.close(figure)
    return written


def length_figure(points: Sequence[RunPoint], out_dir: Path) -> list[Path]:
    """Score against mean answer length (log scale: a few runs ramble past 1000 characters)."""
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(6, 4.5))
    x = np.array([p.length for p in points])
    y = np.array([p.score for p in points])
    scatter_by_kind(axes, [p.kind for p in points], x, y)
    axes.set_xscale("symlog", linthresh=10)
    axes.axvline(100, color="grey", linestyle="--", linewidth=0.8)
    axes.set_xlabel("mean answer length (characters; the target is 100)")
    axes.set_ylabel("Score")
    axes.set_title(f"Score vs answer length ({len(points)} runs)")
    written = save_figure(figure, out_dir, "score_length")
    plt.close(figure)
    return written


def stability_figures(
    kinds: Sequence[str], scores: dict[str, np.ndarray], out_dir: Path
) -> list[Path]:
    """Fig. 4-6: each run's score against one source versus against another, with Pearson r;
    none for a pair without r (scores that do not vary: `print_pearson` says why)."""
    plt = pyplot()
    written = []
    for number, ((a, b), r) in enumerate(pearson_by_pair(scores).items(), start=4):
        if r is None:
            continue
        figure, axes = plt.subplots(figsize=(5, 4.5))
        x, y = scores[a], scores[b]
        low = min(float(x.min()), float(y.min()))
        high = max(float(x.max()), float(y.max()))
        axes.plot([low, high], [low, high], color="grey", linewidth=0.8, linestyle="--")
        scatter_by_kind(axes, kinds, x, y)
        axes.set_xlabel(f"score with source {a} only")
        axes.set_ylabel(f"score with source {b} only")
        axes.set_title(f"Fig. {number}: source {a} vs {b} (r = {r:.4f}, {len(x)} runs)")
        written += save_figure(figure, out_dir, f"fig{number}_stability_{a}_{b}")
        plt.close(figure)
    return written
