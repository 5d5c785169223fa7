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


def order_answer(number: int, order: dict[str, Any], record: dict[str, Any]) -> Answer:
    """One order's judge reply, its letter and letter probabilities (A: the answer shown
    first in that order)."""
    probabilities = order.get("probabilities") or {}
    scores = (
        {f"P({k})": v for k, v in probabilities.items()} if isinstance(probabilities, dict) else {}
    )
    scores["letter"] = order.get("letter")
    first = order.get("shown_first", "?")
    model = record.get("model_a" if first == "A" else "model_b")
    shown = f"{first} ({model})" if model else first
    return Answer(
        label=f"judge, order {number}: answer {shown} shown first, as A",
        text=str(order.get("text", "")),
        scores=scores,
    )


def answer_label(record: dict[str, Any], letter: str) -> str:
    model = record.get(f"model_{letter.lower()}")
    return f"answer {letter} ({model})" if model else f"answer {letter}"


def verdict_text(record: dict[str, Any]) -> str:
    """The three verdicts, each with what it means; the proposed one with its probability
    (the mean over both orders) and the others'."""
    verdict = record.get("verdict") or {}
    averages = record.get("averages") or {}
    meaning = {"A": "A is better", "B": "B is better", "C": "a tie"}
    parts = []
    proposed = verdict.get("proposed")
    if proposed in meaning:
        others = ", ".join(
            f"{x} {averages[x]:.4f}"
            for x in meaning
            if x != proposed and isinstance(averages.get(x), (int, float))
        )
        probability = averages.get(proposed)
        shown = f"P {probability:.4f}" if isinstance(probability, (int, float)) else "P n/a"
        parts.append(f"proposed: {proposed}, {meaning[proposed]} ({shown}; {others})")
    else:
        parts.append("proposed: no verdict")
    for method, name in (("bs1", "BS1"), ("bs2", "BS2")):
        letter = verdict.get(method)
        if letter in meaning:
            parts.append(f"{name}: {letter}, {meaning[letter]}")
        else:
            parts.append(f"{name}: no verdict (the orders' letters disagree)")
    if record.get("tie_broken"):
        parts.append("proposed verdict's tie broken")
    return "\n".join(parts)


def pair_item(record: dict[str, Any]) -> Item:
    """An item with what a reader needs to judge it: the question, the reference, both answers,
    the verdicts with their probability, and each order's judge reply."""
    fields = []
    if "question" in record:
        fields.append(("question", str(record["question"])))
    if record.get("reference") is not None:
        fields.append(("reference", str(record["reference"])))
    for letter in "AB":
        if f"answer_{letter.lower()}" in record:
            fields.append((answer_label(record, letter), str(record[f"answer_{letter.lower()}"])))
        elif record.get(f"model_{letter.lower()}"):
            fields.append((f"model {letter}", str(record[f"model_{letter.lower()}"])))
    if record.get("verdict"):
        fields.append(("verdict", verdict_text(record)))
    if record.get("labels"):
        fields.append(("annotators", ", ".join(map(str, record["labels"]))))
    if record.get("criteria"):
        fields.append(("criteria", str(record["criteria"])))
    if record.get("error"):
        fields.append(("error", str(record["error"])))
    averages = record.get("averages") or {}
    proposed = (record.get("verdict") or {}).get("proposed")
    probability = averages.get(proposed) if isinstance(averages, dict) else None
    return Item(
        id=str(record.get("id")),
        category=str(record.get("task", "")),
        score=probability if isinstance(probability, (int, float)) else None,
        score_label="P(verdict)",
        fields=fields,
        answers=[
            order_answer(n, o, record) for n, o in enumerate(record.get("orders") or [], start=1)
        ],
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
    notes = []
    if any("question" not in r for r in result.records):
        notes.append(
            f"{result.folder / PAIRWISE_ITEMS} records no question or answers for some items "
            "(`judge pairwise` writes them): only the verdicts are shown there"
        )
    page = Page(page_id, "judge", f"Judge: {run}", settings, items, notes=notes)
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
