"""LCTG Bench evaluations as the site shows them: each `lctg-TASK-scores.json` that `lctg eval
--out` wrote (read and checked by the lctg room's `outputs`, as its leaderboard reads it) is a
leaderboard row; the `lctg-TASK-analysis.jsonl` beside it (every generation with its
constraint's check and the quality judge's replies) is its run page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.lctg.outputs import Entry, read_analysis, read_entry, scores_files
from pfgen_fast.site.model import Answer, Board, Collected, Column, Item, Page, Row

LOOKED_FOR = "lctg-TASK-scores.json files (written by `lctg eval --out`)"


def verdict(value: Any) -> bool | str | None:
    """A check's or the quality judge's verdict: true, false, the unparseable reply, or none."""
    return value if isinstance(value, (bool, str)) and value != "" else None


def analysis_items(path: Path) -> list[Item]:
    """One item per prompt and constraint, each iteration's generation an answer."""
    grouped: dict[tuple[Any, str], list[dict[str, Any]]] = {}
    for record in read_analysis(path):
        grouped.setdefault((record.get("prompt_id"), str(record.get("constraint"))), []).append(
            record
        )
    items = []
    for (prompt_id, constraint), records in grouped.items():
        answers = []
        for record in sorted(records, key=lambda r: r.get("iteration") or 0):
            cleaned = str(record.get("cleaned") or "")
            raw = str(record.get("raw") or "")
            notes = [f"judge: {reply}" for reply in record.get("judge_replies") or []]
            if raw and raw != cleaned:
                notes.insert(0, f"before the header remover: {raw}")
            answers.append(
                Answer(
                    label=f"iteration {record.get('iteration')}",
                    text=cleaned or raw,
                    scores={
                        "check": verdict(record.get("check")),
                        "quality": verdict(record.get("quality")),
                    },
                    notes=notes,
                )
            )
        checks = [a.scores["check"] for a in answers if isinstance(a.scores["check"], bool)]
        items.append(
            Item(
                id=f"prompt {prompt_id} / {constraint}",
                category=constraint,
                score=sum(checks) / len(checks) if checks else None,
                fields=[("prompt", str(prompt_id)), ("constraint", constraint)],
                answers=answers,
            )
        )
    return items


def collect_lctg(roots: list[Path], collected: Collected) -> None:
    columns: list[Column] = [Column("model", numeric=False), Column("task", numeric=False)]
    board = Board("lctg", "Leaderboard", columns)
    for root in roots:
        for path in collected.recognised(root, scores_files(root), LOOKED_FOR):
            try:
                entry = read_entry(path)
                analysis = entry.analysis_path
                items = analysis_items(analysis) if analysis.is_file() else []
            except PfgenError as error:
                collected.run_left_out(error)
                continue
            for name in entry.scores:
                board.add_column(Column(name))
            folder = path.parent.relative_to(root).as_posix()
            run = entry.task if folder == "." else f"{folder}/{entry.task}"
            add_entry(entry, run, items, board, collected)
    if board.rows:
        collected.boards.append(board)


def add_entry(
    entry: Entry, run: str, items: list[Item], board: Board, collected: Collected
) -> None:
    judge = entry.document.get("judge") or {}
    settings = {
        "model": entry.model,
        "task": entry.task,
        "judge model": judge.get("model") if isinstance(judge, dict) else judge,
        "prompts scored": entry.document.get("prompts_scored"),
        "prompts in task": entry.document.get("prompts_in_task"),
    }
    page_id = f"lctg-{len(collected.pages)}"
    cells = {"model": entry.model, "task": entry.task, **entry.scores}
    board.rows.append(Row(run=run, cells=cells, settings=settings, page=page_id))
    title = f"LCTG Bench {entry.task}: {entry.model} ({run})"
    collected.pages.append(Page(page_id, "lctg", title, settings, items))
