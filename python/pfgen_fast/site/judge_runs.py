"""Pairwise judge results as the site shows them: each folder `judge pairwise --out` wrote
(`items.jsonl`, `summary.json`) is a leaderboard row and its items a run page (both orders'
A/B/C probabilities and the judge's replies); each ranking `judge rank --table` wrote (.csv,
.json or .parquet with rank, model, strength, low, high) is a table of models with their
Bradley-Terry 95 % intervals."""

from __future__ import annotations

from math import isnan
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.judge.outputs import (
    PAIRWISE_ITEMS,
    SUMMARY,
    OrderRecord,
    PairRecord,
    PairVerdict,
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


def order_answer(number: int, order: OrderRecord, record: PairRecord) -> Answer:
    """One order's judge reply, its letter and letter probabilities (A: the answer shown
    first in that order)."""
    scores: dict[str, Any] = {f"P({k})": v for k, v in order.probabilities.items()}
    scores["letter"] = order.letter
    first = order.shown_first
    model = record.model_a if first == "A" else record.model_b
    shown = f"{first} ({model})" if model else first
    return Answer(
        label=f"judge, order {number}: answer {shown} shown first, as A",
        text=order.text,
        scores=scores,
    )


def answer_label(model: str | None, letter: str) -> str:
    return f"answer {letter} ({model})" if model else f"answer {letter}"


def verdict_text(verdict: PairVerdict) -> str:
    """The three verdicts, each with what it means; the proposed one with its probability
    (the mean over both orders) and the others' (NaN: not known)."""
    averages = verdict.averages
    meaning = {"A": "A is better", "B": "B is better", "C": "a tie"}
    parts = []
    proposed = verdict.proposed
    if proposed is not None:
        others = ", ".join(
            f"{x} {averages[x]:.4f}" for x in meaning if x != proposed and not isnan(averages[x])
        )
        probability = averages[proposed]
        shown = "P n/a" if isnan(probability) else f"P {probability:.4f}"
        parts.append(f"proposed: {proposed}, {meaning[proposed]} ({shown}; {others})")
    else:
        parts.append("proposed: no verdict")
    for name, letter in (("BS1", verdict.bs1), ("BS2", verdict.bs2)):
        if letter is not None:
            parts.append(f"{name}: {letter}, {meaning[letter]}")
        else:
            parts.append(f"{name}: no verdict (the orders' letters disagree)")
    if verdict.tie_broken:
        parts.append("proposed verdict's tie broken")
    return "\n".join(parts)


def pair_item(record: PairRecord) -> Item:
    """An item with what a reader needs to judge it: the question, the reference, both answers,
    the verdicts with their probability, and each order's judge reply."""
    fields = [("question", record.question)]
    if record.reference is not None:
        fields.append(("reference", record.reference))
    fields.append((answer_label(record.model_a, "A"), record.answer_a))
    fields.append((answer_label(record.model_b, "B"), record.answer_b))
    probability = None
    if record.verdict is not None:
        fields.append(("verdict", verdict_text(record.verdict)))
        if record.verdict.proposed is not None:
            probability = record.verdict.averages[record.verdict.proposed]
    if record.labels:
        fields.append(("annotators", ", ".join(record.labels)))
    if record.criteria:
        fields.append(("criteria", record.criteria))
    if record.error:
        fields.append(("error", record.error))
    return Item(
        id=str(record.id),
        category=record.task or "",
        score=probability,
        score_label="P(verdict)",
        fields=fields,
        answers=[order_answer(n, o, record) for n, o in enumerate(record.orders, start=1)],
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
    page = Page(page_id, "judge", f"Judge: {run}", settings, items)
    collected.pages.append(page)


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
