"""Pairwise judge results as the site shows them: each folder `judge pairwise --out` wrote
(`items.jsonl`, `summary.json`) is a leaderboard row and its items a run page (both orders'
A/B/C probabilities and the judge's replies); each ranking `judge rank --table` wrote (.csv,
.json or .parquet with rank, model, strength, low, high) is a table of models with their
Bradley-Terry 95 % intervals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.judge.outputs import (
    PAIRWISE_ITEMS,
    SUMMARY,
    PairwiseResult,
    is_pairwise_result,
    read_pairwise_result,
    read_ranking,
)
from pfgen_fast.site.model import Answer, Board, Collected, Column, Item, Page, Row

LOOKED_FOR = (
    f"{PAIRWISE_ITEMS} with {SUMMARY} (`judge pairwise --out`) and ranking .csv/.json/.parquet "
    "files (`judge rank --table`)"
)
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
        for items_path in sorted(root.rglob(PAIRWISE_ITEMS)):
            folder = items_path.parent
            if not is_pairwise_result(folder):
                continue
            found = True
            try:
                result = read_pairwise_result(folder)
            except PfgenError as error:
                collected.run_left_out(error)
                continue
            add_pairwise_run(result, run_name(root, folder), pairs, collected)
        for path in sorted(root.rglob("*")):
            rows = read_ranking(path) if path.is_file() else None
            if rows is not None:
                found = True
                rankings.append(ranking_board(path.relative_to(root).as_posix(), rows))
        if not found:
            collected.nothing_recognised(root, LOOKED_FOR)
    if pairs.rows:
        collected.boards.append(pairs)
    collected.boards.extend(rankings)


def run_name(root: Path, folder: Path) -> str:
    """A run's name: its folder below the input, or the input's own name."""
    name = folder.relative_to(root).as_posix()
    return folder.absolute().name if name == "." else name


def add_pairwise_run(result: PairwiseResult, run: str, pairs: Board, collected: Collected) -> None:
    cells = flat_numbers(result.summary)
    for name in cells:
        pairs.add_column(Column(name))
    page_id = f"judge-{len(collected.pages)}"
    settings = {"items": len(result.records), "models": ", ".join(result.models()) or "-"}
    pairs.rows.append(Row(run=run, cells=cells, settings=settings, page=page_id))
    items = [pair_item(r) for r in result.records]
    collected.pages.append(Page(page_id, "judge", f"Judge: {run}", settings, items))


def ranking_board(name: str, rows: list[dict[str, Any]]) -> Board:
    board = Board("judge-rank", f"Bradley-Terry ranking: {name}", RANKING)
    for row in rows:
        board.rows.append(
            Row(
                run=f"{name}#{row['model']}",
                cells={c.name: row.get(c.name) for c in RANKING},
                spreads={"strength": [row["low"], row["high"]]} if "low" in row else {},
                settings={"ranking": name},
            )
        )
    return board
