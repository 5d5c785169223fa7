"""Several evaluations side by side: a table per task from the `lctg-TASK-scores.json` files
that `lctg eval` writes, an export of all rows (CSV, Parquet or JSON), and per task a figure of
constraint satisfaction against quality, one marker per constraint and model. matplotlib is
optional (`pip install pfgen_fast[plot]`) and imported only for the figures."""

from __future__ import annotations

import dataclasses
import math
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.figures import pyplot, save_figure
from pfgen_fast.common.files import expand_paths
from pfgen_fast.common.tables import print_table, write_table
from pfgen_fast.lctg.aggregate import COLUMNS, LABELS
from pfgen_fast.lctg.data import CONSTRAINTS, TASKS
from pfgen_fast.lctg.outputs import Entry, read_entry


def read_entries(patterns: list[str]) -> tuple[list[Entry], list[str], list[str]]:
    """The readable evaluations (first of each task and model), the problems met, and the
    warnings: a score that is not a finite number (NaN, Infinity) is shown as n/a."""
    paths, unmatched = expand_paths(patterns)
    problems = [f"{pattern}: no such file" for pattern in unmatched]
    warnings: list[str] = []
    entries: dict[tuple[str, str], Entry] = {}
    for path in paths:
        try:
            entry = read_entry(path)
        except PfgenError as error:
            problems.append(str(error))
            continue
        entry, not_finite = finite_scores(entry)
        warnings += [
            f'{path}: field "scores.{name}": not a number, shown as n/a' for name in not_finite
        ]
        key = (entry.task, entry.model)
        if key in entries:
            problems.append(
                f"{path}: {entry.task} of {entry.model} again (kept {entries[key].path})"
            )
            continue
        entries[key] = entry
    return list(entries.values()), problems, warnings


def finite_scores(entry: Entry) -> tuple[Entry, list[str]]:
    """The entry with its scores that are not finite numbers as None (n/a), and their names."""
    not_finite = [
        name
        for name, value in entry.scores.items()
        if value is not None and not math.isfinite(value)
    ]
    scores = {name: None if name in not_finite else value for name, value in entry.scores.items()}
    return dataclasses.replace(entry, scores=scores), not_finite


def sort_key(entry: Entry) -> tuple[int, float, str]:
    average = entry.scores["Avg-ctg"]
    return TASKS.index(entry.task), -(average if average is not None else -1.0), entry.model


def cell(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def run_leaderboard(patterns: list[str], out: str | None, plots: str | None) -> int:
    entries, problems, warnings = read_entries(patterns)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if not entries:
        raise PfgenError("no evaluations to show")
    entries.sort(key=sort_key)
    print_leaderboard(entries)
    if out:
        values = [[e.task, e.model, *(e.scores[c] for c in COLUMNS)] for e in entries]
        write_table(Path(out), ["task", "model", *COLUMNS], values)
        print(f"wrote {out}")
    if plots:
        for path in draw_figures(entries, Path(plots)):
            print(f"wrote {path}")
    return 1 if problems else 0


def print_leaderboard(entries: list[Entry]) -> None:
    """On a terminal a table per task, titled with it; piped, one table with a task column."""
    console = Console()
    if not console.is_terminal:
        rows = [[e.task, e.model, *(cell(e.scores[c]) for c in COLUMNS)] for e in entries]
        print_table(None, ["task", "model", *COLUMNS], rows, console=console)
        return
    for task in TASKS:
        mine = [e for e in entries if e.task == task]
        if mine:
            rows = [[e.model, *(cell(e.scores[c]) for c in COLUMNS)] for e in mine]
            print_table(f"LCTG Bench {task}", ["model", *COLUMNS], rows, console=console)


def draw_figures(entries: list[Entry], folder: Path) -> list[Path]:
    """Per task, CTG against quality: a colour per constraint, a marker per model."""
    plt = pyplot()
    written = []
    for task in TASKS:
        mine = [e for e in entries if e.task == task]
        if not mine:
            continue
        figure, axes = plt.subplots(figsize=(6.4, 5.2))
        draw_task(axes, task, mine)
        written.extend(save_figure(figure, folder, f"lctg-{task}"))
        plt.close(figure)
    return written


def draw_task(axes: Any, task: str, entries: list[Entry]) -> None:
    markers = "osD^vP*Xhp<>"
    colours = ["tab:blue", "tab:orange", "tab:green", "tab:red"]
    for k, constraint in enumerate(CONSTRAINTS):
        label = LABELS[constraint]
        for m, entry in enumerate(entries):
            x, y = entry.scores[f"{label}-ctg"], entry.scores[f"{label}-qual"]
            if x is None or y is None:
                continue
            axes.scatter(x, y, color=colours[k], marker=markers[m % len(markers)], s=40)
    from matplotlib.artist import Artist
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles: list[Artist] = [
        Patch(color=colours[k], label=LABELS[c]) for k, c in enumerate(CONSTRAINTS)
    ]
    handles += [
        Line2D([], [], color="grey", marker=markers[m % len(markers)], linestyle="", label=e.model)
        for m, e in enumerate(entries)
    ]
    axes.set_xlim(-0.02, 1.02)
    axes.set_ylim(-0.02, 1.02)
    axes.set_xlabel("constraint satisfied (CTG)")
    axes.set_ylabel("quality (judge)")
    axes.set_title(f"LCTG Bench {task}")
    axes.grid(alpha=0.3)
    axes.legend(handles=handles, fontsize=7, loc="lower left", bbox_to_anchor=(1.02, 0.0))
