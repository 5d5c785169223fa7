"""The leaderboard of many runs: the benchmark README's Markdown table (replaced between its
markers), a rich table for the terminal, and a polars frame for export."""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pfgen_fast.common.errors import InputError
from pfgen_fast.common.tables import print_table
from pfgen_fast.pfgen.outputs import (
    FIGURE_CAPTION,
    FIGURE_COLUMNS,
    FIGURE_LABELS,
    TOTAL_PLACES,
    RunResult,
    criterion_total,
)
from pfgen_fast.pfgen.pages import ordered_sources

if TYPE_CHECKING:
    import polars as pl

START_MARKER = "<!-- leaderboard -->"
END_MARKER = "<!-- /leaderboard -->"
NAME_LIMIT = 40
MODE_ICONS = {"completion": "🟢", "qa": "💬", "chat": "💬"}
SYSTEM_ICONS = {"system/ground-truth": "👑"}
OTHER_SYSTEM_ICON = "🎯"
UNKNOWN_MODE_ICON = "❔"
# The published header: the &nbsp; runs set the column widths on GitHub.
HEADER = (
    "| <code>Rank</code> | <code>Score"
    + "&nbsp;" * 19
    + "</code> | <code>Model"
    + "&nbsp;" * 38
    + "</code> | <code>Length"
    + "&nbsp;" * 10
    + "</code> | "
    "<code>Fluency</code> | <code>Truthfulness</code> | <code>Helpfulness</code> |"
)
SEPARATOR = "|-----" * 7 + "|"


@dataclass(frozen=True)
class Entry:
    """One run on the leaderboard; `rank` is None for the `system/*` rows."""

    rank: int | None
    run: RunResult
    legacy_sum: bool = False

    @property
    def is_system(self) -> bool:
        return self.run.mode == "system"

    @property
    def icon(self) -> str:
        if self.is_system:
            return SYSTEM_ICONS.get(self.run.model, OTHER_SYSTEM_ICON)
        return MODE_ICONS.get(self.run.mode, UNKNOWN_MODE_ICON)

    @property
    def short_name(self) -> str:
        name = self.run.model
        return name if len(name) <= NAME_LIMIT else name[: NAME_LIMIT - 3] + "..."

    def total(self, measure: str) -> float:
        """Fluency or Truthfulness over all sources (`criterion_total`)."""
        return criterion_total(self.run.data["scores"][measure], self.legacy_sum)


def rank_runs(runs: Sequence[RunResult], legacy_sum: bool = False) -> list[Entry]:
    """Best score first, equal scores in the order of their result.json paths as strings (as
    the benchmark sorts them); system rows take no rank."""
    entries = []
    rank = 0
    by_path = sorted(runs, key=lambda r: str(r.path))
    for run in sorted(by_path, key=lambda r: -r.data["score"]):
        if run.mode == "system":
            entries.append(Entry(None, run, legacy_sum))
        else:
            rank += 1
            entries.append(Entry(rank, run, legacy_sum))
    return entries


def page_link(entry: Entry, readme_dir: Path) -> str:
    """The run's README.md, relative to the leaderboard's README, with forward slashes."""
    target = entry.run.path.parent / "README.md"
    return Path(os.path.relpath(target, readme_dir)).as_posix()


def markdown_table(entries: Sequence[Entry], readme_dir: Path) -> str:
    lines = [HEADER, SEPARATOR]
    for entry in entries:
        data = entry.run.data
        valid = entry.run.valid_trials()
        cells = [
            "N/A" if entry.rank is None else str(entry.rank),
            f"{data['score']:.4f} (±{data['score_std']:.4f}/√{data['num_trials']}"
            + (f"; valid {valid})" if valid else ")"),
            f"[{entry.icon} {entry.short_name}]({page_link(entry, readme_dir)})",
            f"{data['length']:.1f} (±{data['length_std']:.1f})",
            f"{entry.total('fluency'):.3f}",
            f"{entry.total('truthfulness'):.3f}",
            f"{data['scores']['helpfulness']:.3f}",
        ]
        lines.append("| " + " | ".join(f"<code>{cell}</code>" for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def replace_table(readme_text: str, table: str, readme: Path) -> str:
    """The README with everything between the markers replaced by the table."""
    pairs = max(readme_text.count(START_MARKER), readme_text.count(END_MARKER))
    if pairs > 1:
        raise InputError(
            f"{readme}: {pairs} pairs of leaderboard markers: keep one line '{START_MARKER}' "
            f"and one line '{END_MARKER}'"
        )
    start = readme_text.find(START_MARKER)
    end = readme_text.find(END_MARKER)
    if start < 0 or end < 0 or end < start:
        raise InputError(
            f"{readme}: no leaderboard markers: the table goes between a line "
            f"'{START_MARKER}' and a line '{END_MARKER}'"
        )
    head = readme_text[: start + len(START_MARKER)]
    return f"{head}\n{table}\n{readme_text[end:]}"


def source_columns(entries: Sequence[Entry]) -> list[str]:
    """Every source of the runs, in display order."""
    seen: dict[str, float] = {}
    for entry in entries:
        for measure in ("fluency", "truthfulness"):
            seen.update(dict.fromkeys(entry.run.data["scores"][measure], 0.0))
    return ordered_sources(seen)


def frame(entries: Sequence[Entry]) -> pl.DataFrame:
    """One row per run, with per-source Fluency and Truthfulness columns (null when a run
    lacks a source)."""
    import polars as pl

    sources = source_columns(entries)
    rows = []
    for entry in entries:
        data = entry.run.data
        scores = data["scores"]
        row = {
            "rank": entry.rank,
            "model": entry.run.model,
            "mode": entry.run.mode,
            "path": str(entry.run.path),
            "num_trials": data["num_trials"],
            "score": data["score"],
            "score_std": data["score_std"],
            "length": data["length"],
            "length_std": data["length_std"],
            "fluency": round(entry.total("fluency"), TOTAL_PLACES),
            "truthfulness": round(entry.total("truthfulness"), TOTAL_PLACES),
            "helpfulness": scores["helpfulness"],
            "average": scores["average"],
        }
        for measure in ("fluency", "truthfulness"):
            for key in sources:
                value = scores[measure].get(key)
                row[f"{measure}_{key}"] = None if value is None else float(value)
        rows.append(row)
    schema = {
        "rank": pl.Int64,
        "model": pl.String,
        "mode": pl.String,
        "path": pl.String,
        "num_trials": pl.Int64,
        **dict.fromkeys(
            ["score", "score_std", "length", "length_std", "fluency", "truthfulness"], pl.Float64
        ),
        "helpfulness": pl.Float64,
        "average": pl.Float64,
        **{f"{m}_{key}": pl.Float64 for m in ("fluency", "truthfulness") for key in sources},
    }
    return pl.DataFrame(rows, schema=schema, orient="row")


def export_bytes(entries: Sequence[Entry], file_format: str) -> bytes:
    """The leaderboard as csv, parquet or json (a list of row objects)."""
    table = frame(entries)
    if file_format == "csv":
        return table.write_csv().encode()
    if file_format == "json":
        return table.write_json().encode()
    buffer = io.BytesIO()
    table.write_parquet(buffer)
    return buffer.getvalue()


# The leaderboard as printed: piped, these columns (the rank empty for system rows); on a
# terminal, short labels, with the mode and the path under the model's name.
COLUMNS = ["model", "rank", "mode", *FIGURE_COLUMNS, "path"]
LABELS = ["model", "rank", "mode", *FIGURE_LABELS, "path"]


def print_leaderboard(entries: Sequence[Entry]) -> None:
    rows = [
        [
            entry.run.model,
            "" if entry.rank is None else entry.rank,
            entry.run.mode,
            f"{entry.run.data['score']:.4f}",
            f"{entry.run.data['score_std']:.4f}",
            f"{entry.run.data['length']:.1f}",
            f"{entry.total('fluency'):.3f}",
            f"{entry.total('truthfulness'):.3f}",
            f"{entry.run.data['scores']['helpfulness']:.3f}",
            str(entry.run.path),
        ]
        for entry in entries
    ]
    print_table(
        "pfgen-bench leaderboard",
        COLUMNS,
        rows,
        labels=LABELS,
        second_line=("mode", "path"),
        caption=FIGURE_CAPTION,
    )
