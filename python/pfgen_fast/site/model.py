"""What the site shows, as plain data the readers fill and the builder writes: leaderboards
(columns and rows), run pages (settings and items) and the items several run pages share."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import PfgenError

# The benchmarks in the order of their tabs, with the names the page shows.
BENCHMARKS = {
    "pfgen": "pfgen-bench",
    "lctg": "LCTG Bench",
    "mm": "llm-jp-eval-mm",
    "judge": "Judge",
}


@dataclass(frozen=True)
class Column:
    name: str
    numeric: bool = True
    # How a cell's spread reads: "±" (a standard deviation), "CI" (an interval low..high) or
    # "of" (the whole the value is a part of, shown when the value is less: 98/100).
    spread: str | None = None


@dataclass
class Row:
    run: str  # the run's folder relative to the input given
    cells: dict[str, Any]  # column name -> value (None: empty)
    spreads: dict[str, Any] = field(default_factory=dict)  # column name -> its spread
    settings: dict[str, Any] = field(default_factory=dict)
    page: str | None = None  # the run page's id, None when the row has none


@dataclass
class Board:
    """One leaderboard table: `key` is its data-leaderboard mark."""

    key: str
    title: str
    columns: list[Column]
    rows: list[Row] = field(default_factory=list)
    sort: str | None = None  # the column the rows come sorted by, if any
    sorted: str = "descending"

    def add_column(self, column: Column) -> None:
        """`column` last, unless the board has a column of its name."""
        if all(c.name != column.name for c in self.columns):
            self.columns.append(column)


@dataclass
class Answer:
    label: str  # who answered (a model, a trial, an order)
    text: str
    scores: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # raw judge replies and the like


@dataclass
class Item:
    id: str
    category: str
    score: float | None
    fields: list[tuple[str, str]]  # (label, text): question, reference, ...
    answers: list[Answer]
    images: list[str] = field(default_factory=list)  # paths relative to OUT
    score_label: str = "score"  # what `score` is, shown before it


@dataclass
class Page:
    """A run's page: written to its own script file, loaded when the run is opened. A page whose
    items are shared with other runs' pages has none of its own: it names the Shared that holds
    them and its run's place there."""

    id: str
    bench: str
    title: str
    settings: dict[str, Any]
    items: list[Item]
    shared: str | None = None  # the id of the Shared holding its items
    opened: int | None = None  # its run's index in that Shared's labels and answers
    notes: list[str] = field(default_factory=list)  # shown at the top (what is left out)

    def document(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "bench": self.bench,
            "title": self.title,
            "settings": self.settings,
            "shared": self.shared,
            "opened": self.opened,
            "notes": self.notes,
            "items": [
                {
                    "id": item.id,
                    "category": item.category,
                    "score": item.score,
                    "score_label": item.score_label,
                    "fields": item.fields,
                    "answers": [
                        {"label": a.label, "text": a.text, "scores": a.scores, "notes": a.notes}
                        for a in item.answers
                    ],
                    "images": item.images,
                }
                for item in self.items
            ],
        }


@dataclass
class RunAnswer:
    """One run's answer in a SharedItem."""

    text: str
    scores: dict[str, Any]
    score: float | None  # the item's score on the page of this answer's run
    score_label: str  # the metric that score is
    reasoning: str | None = None  # the reasoning the run recorded with the answer
    failure: str | None = None  # why the run failed the item (its text is then empty)


@dataclass
class SharedItem:
    id: str
    category: str
    fields: list[tuple[str, str]]  # (label, text): question, reference, ...
    answers: list[RunAnswer | None]  # run n's answer at n, None where it has none
    images: list[str] = field(default_factory=list)  # paths relative to OUT


@dataclass
class Shared:
    """Items several run pages show, each with every run's answer (an llm-jp-eval-mm task's
    items and its models' answers): written once to its own script, loaded with the first of
    those pages that is opened, so each answer is written once however many pages show it."""

    id: str
    labels: list[str]  # run n's label at n
    items: list[SharedItem]

    def document(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "labels": self.labels,
            "items": [
                {
                    "id": item.id,
                    "category": item.category,
                    "fields": item.fields,
                    "answers": [
                        None
                        if a is None
                        else {
                            "text": a.text,
                            "scores": a.scores,
                            "score": a.score,
                            "score_label": a.score_label,
                            "reasoning": a.reasoning,
                            "failure": a.failure,
                        }
                        for a in item.answers
                    ],
                    "images": item.images,
                }
                for item in self.items
            ],
        }


@dataclass
class Collected:
    """Everything read from the inputs, and the problems met (one line each)."""

    boards: list[Board] = field(default_factory=list)
    pages: list[Page] = field(default_factory=list)
    shared: list[Shared] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)  # paths relative to OUT
    notes: dict[str, list[str]] = field(default_factory=dict)  # bench -> lines shown on its tab
    warnings: list[str] = field(default_factory=list)  # an input left out: exit status 1
    # What a page lacks though every input was used (a task's images): said, exit status 0.
    notices: list[str] = field(default_factory=list)

    def nothing_recognised(self, root: Path, looked_for: str) -> None:
        """The warning for an input that holds none of its benchmark's results."""
        self.warnings.append(f"{root}: nothing recognised; looked for {looked_for}")

    def recognised(self, root: Path, paths: list[Path], looked_for: str) -> list[Path]:
        """`paths`, the results found in `root`, after the warning when there are none."""
        if not paths:
            self.nothing_recognised(root, looked_for)
        return paths

    def run_left_out(self, error: PfgenError) -> None:
        """The warning for a run that cannot be read."""
        self.warnings.append(f"{error}; run left out")
