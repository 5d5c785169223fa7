"""Pairwise judge results as the site shows them: each folder `judge pairwise --out` wrote
(`items.jsonl`, `summary.json`) is a leaderboard row and its items a run page (both orders'
A/B/C probabilities and the judge's replies); each ranking `judge rank --table` wrote (.csv,
.json or .parquet with rank, model, strength, low, high) is a table of models with their
Bradley-Terry 95 % intervals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.jsonl import iter_json_lines, read_json, read_json_object
from pfgen_fast.site.model import Answer, Board, Collected, Column, Item, Page, Row

LOOKED_FOR = (
    "items.jsonl with summary.json (`judge pairwise --out`) and ranking .csv/.json/.parquet "
    "files (`judge rank --table`)"
)
RANK_COLUMNS = ("rank", "model", "strength", "low", "high")
RANKING = [
    Column("rank"),
    Column("model", numeric=False),
    Column("strength", spread="CI"),
    Column("wins"),
    Column("losses"),
    Column("ties"),
]


def flat_numbers(value: Any, prefix: str = "") -> dict[str, float]:
    """The numbers of a summary, nested names joined by dots (verdict counts and request
    settings left out)."""
    found: dict[str, float] = {}
    if isinstance(value, dict):
        for key, inner in value.items():
            if key in ("verdicts", "by_task", "settings"):
                continue
            found.update(flat_numbers(inner, f"{prefix}{key}."))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        found[prefix.rstrip(".")] = value
    return found


def ranking_rows(path: Path) -> list[dict[str, Any]] | None:
    """A ranking file's rows, None when the file is not a ranking."""
    try:
        if path.suffix == ".json":
            value = read_json(path)
            rows = value if isinstance(value, list) else None
        elif path.suffix == ".csv":
            rows = pl.read_csv(path).to_dicts()
        else:
            rows = pl.read_parquet(path).to_dicts()
    except (OSError, PfgenError, pl.exceptions.PolarsError):
        return None
    if not rows or not all(isinstance(r, dict) and set(RANK_COLUMNS) <= set(r) for r in rows):
        return None
    return rows


def order_answer(number: int, order: dict[str, Any]) -> Answer:
    probabilities = order.get("probabilities") or {}
    scores = (
        {f"P({k})": v for k, v in probabilities.items()} if isinstance(probabilities, dict) else {}
    )
    scores["letter"] = order.get("letter")
    return Answer(
        label=f"order {number}: {order.get('shown_first', '?')} shown first",
        text=str(order.get("text", "")),
        scores=scores,
    )


def pair_item(record: dict[str, Any]) -> Item:
    verdict = record.get("verdict") or {}
    fields = [
        ("models", f"A: {record.get('model_a', '-')}  B: {record.get('model_b', '-')}"),
        ("verdicts", ", ".join(f"{k} {v}" for k, v in verdict.items()) or "-"),
    ]
    if record.get("labels"):
        fields.append(("annotators", ", ".join(map(str, record["labels"]))))
    if record.get("criteria"):
        fields.append(("criteria", str(record["criteria"])))
    if record.get("error"):
        fields.append(("error", str(record["error"])))
    averages = record.get("averages") or {}
    proposed = averages.get("A") if isinstance(averages, dict) else None
    return Item(
        id=str(record.get("id")),
        category=str(record.get("task", "")),
        score=proposed if isinstance(proposed, (int, float)) else None,
        fields=fields,
        answers=[order_answer(n, o) for n, o in enumerate(record.get("orders") or [], start=1)],
    )


def collect_judge(roots: list[Path], collected: Collected) -> None:
    pairs = Board("judge", "Pairwise judge runs", [Column("items"), Column("errors")])
    rankings: list[Board] = []
    for root in roots:
        found = False
        for items_path in sorted(root.rglob("items.jsonl")):
            found = True
            folder = items_path.parent
            try:
                records = [line.value for line in iter_json_lines(items_path)]
                summary_path = folder / "summary.json"
                summary = read_json_object(summary_path) if summary_path.is_file() else {}
            except PfgenError as error:
                collected.warnings.append(f"{error}; run left out")
                continue
            cells = flat_numbers(summary)
            for name in cells:
                if all(c.name != name for c in pairs.columns):
                    pairs.columns.append(Column(name))
            run = folder.relative_to(root).as_posix()
            page_id = f"judge-{len(collected.pages)}"
            models = sorted({str(r[k]) for r in records for k in ("model_a", "model_b") if k in r})
            settings = {"items": len(records), "models": ", ".join(models) or "-"}
            pairs.rows.append(Row(run=run, cells=cells, settings=settings, page=page_id))
            collected.pages.append(
                Page(page_id, "judge", f"Judge: {run}", settings, [pair_item(r) for r in records])
            )
        for path in sorted(root.rglob("*")):
            if path.suffix not in (".csv", ".json", ".parquet") or path.name == "summary.json":
                continue
            rows = ranking_rows(path)
            if rows is None:
                continue
            found = True
            name = path.relative_to(root).as_posix()
            board = Board("judge-rank", f"Bradley-Terry ranking: {name}", RANKING)
            for row in rows:
                board.rows.append(
                    Row(
                        run=f"{name}#{row['model']}",
                        cells={c.name: row.get(c.name) for c in RANKING},
                        spreads={"strength": [row["low"], row["high"]]},
                        settings={"ranking": name},
                    )
                )
            rankings.append(board)
        if not found:
            collected.warnings.append(f"{root}: nothing recognised; looked for {LOOKED_FOR}")
    if pairs.rows:
        collected.boards.append(pairs)
    collected.boards.extend(rankings)
