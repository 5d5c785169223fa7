"""What the site shows, as plain data the readers fill and the builder writes: leaderboards
(columns and rows) and run pages (settings and items)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
    # How a cell's spread reads: "±" (a standard deviation) or "CI" (an interval low..high).
    spread: str | None = None


@dataclass
class Row:
    run: str  # the run's folder relative to the input given
    cells: dict[str, Any]  # column name -> value (None: empty)
    spreads: dict[str, Any] = field(default_factory=dict)  # column name -> std or [low, high]
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


@dataclass
class Page:
    """A run's page: written to its own script file, loaded when the run is opened."""

    id: str
    bench: str
    title: str
    settings: dict[str, Any]
    items: list[Item]

    def document(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "bench": self.bench,
            "title": self.title,
            "settings": self.settings,
            "items": [
                {
                    "id": item.id,
                    "category": item.category,
                    "score": item.score,
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
class Collected:
    """Everything read from the inputs, and the problems met (one line each)."""

    boards: list[Board] = field(default_factory=list)
    pages: list[Page] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)  # paths relative to OUT
    notes: dict[str, list[str]] = field(default_factory=dict)  # bench -> lines shown on its tab
    warnings: list[str] = field(default_factory=list)
