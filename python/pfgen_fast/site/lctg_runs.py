"""LCTG Bench evaluations as the site shows them: each `lctg-TASK-scores.json` that `lctg eval
--out` wrote (read and checked by the lctg room's `outputs`, as its leaderboard reads it) is a
leaderboard row; the `lctg-TASK-analysis.jsonl` beside it (every generation with its
constraint's check and the quality judge's replies) is its run page, each item with the prompt
the model was given and what its constraint's check looks for, from LCTG Bench's files (where
`lctg eval` finds them, or `--lctg-data DIR`)."""

from __future__ import annotations

from pathlib import Path

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.lctg.outputs import (
    AnalysisRecord,
    Entry,
    PromptRow,
    read_analysis,
    read_entry,
    scores_files,
    task_prompts,
)
from pfgen_fast.site.model import Answer, Board, Collected, Column, Item, Page, Row

LOOKED_FOR = "lctg-TASK-scores.json files (written by `lctg eval --out`)"


def verdict(value: bool | str | None) -> bool | str | None:
    """A check's or the quality judge's verdict: true, false, the unparseable reply, or none."""
    return None if value == "" else value


def checked(constraint: str, row: PromptRow) -> str:
    """What the check of `constraint` looks for in a generation."""
    if constraint == "char_count":
        low, high = row.char_range
        return f"{low} to {high} characters (after the header remover)"
    if constraint == "keyword":
        return f"contains 「{row.keyword}」"
    if constraint == "prohibited_word":
        return f"does not contain 「{row.prohibited_word}」"
    return "nothing before or after the text (the header remover removes nothing)"


def prompt_fields(row: PromptRow | None, prompt_id: int, constraint: str) -> list[tuple[str, str]]:
    """The prompt the model was given for `constraint` and what its check looks for (its id
    alone without its row)."""
    if row is None or constraint not in row.prompts:
        return [("prompt", f"{prompt_id}"), ("constraint", constraint)]
    return [
        ("prompt", row.prompts[constraint]),
        ("constraint", constraint),
        ("checked", checked(constraint, row)),
    ]


def analysis_items(
    path: Path, prompts: dict[int, PromptRow] | None
) -> tuple[list[Item], list[int]]:
    """One item per prompt and constraint, each iteration's generation an answer; the prompt's
    text from `prompts` (None: not read); and the ids not among them."""
    grouped: dict[tuple[int, str], list[AnalysisRecord]] = {}
    for record in read_analysis(path):
        grouped.setdefault((record.prompt_id, record.constraint), []).append(record)
    items = []
    missing = []
    for (prompt_id, constraint), records in grouped.items():
        row = prompts.get(prompt_id) if prompts is not None else None
        if prompts is not None and row is None and prompt_id not in missing:
            missing.append(prompt_id)
        answers = []
        for record in sorted(records, key=lambda r: r.iteration):
            notes = [f"judge: {reply}" for reply in record.judge_replies]
            if record.raw and record.raw != record.cleaned:
                notes.insert(0, f"before the header remover: {record.raw}")
            answers.append(
                Answer(
                    label=f"iteration {record.iteration}",
                    text=record.cleaned or record.raw,
                    scores={"check": verdict(record.check), "quality": verdict(record.quality)},
                    notes=notes,
                )
            )
        checks = [a.scores["check"] for a in answers if isinstance(a.scores["check"], bool)]
        items.append(
            Item(
                id=f"prompt {prompt_id} / {constraint}",
                category=constraint,
                score=sum(checks) / len(checks) if checks else None,
                score_label="checks passed",
                fields=prompt_fields(row, prompt_id, constraint),
                answers=answers,
            )
        )
    return items, missing


class Prompts:
    """Each task's prompts, read once from LCTG Bench's files (`data_dir`, else where `lctg
    eval` finds them); why they cannot be had, said once per task."""

    def __init__(self, data_dir: Path | None) -> None:
        self.data_dir = data_dir
        self.tasks: dict[str, dict[int, PromptRow] | str] = {}

    def of(self, task: str, collected: Collected) -> dict[int, PromptRow] | str:
        if task not in self.tasks:
            try:
                self.tasks[task] = task_prompts(task, self.data_dir)
            except PfgenError as error:
                first = str(error).splitlines()[0]
                why = f"{task}: prompt texts left out ({first}; the site's option: --lctg-data)"
                collected.notices.append(why)
                self.tasks[task] = why
        return self.tasks[task]


def collect_lctg(roots: list[Path], data_dir: Path | None, collected: Collected) -> None:
    columns: list[Column] = [Column("model", numeric=False), Column("task", numeric=False)]
    board = Board("lctg", "Leaderboard", columns)
    prompts = Prompts(data_dir)
    for root in roots:
        for path in collected.recognised(root, scores_files(root), LOOKED_FOR):
            notes: list[str] = []
            try:
                entry = read_entry(path)
                analysis = entry.analysis_path
                items: list[Item] = []
                if analysis.is_file():
                    texts = prompts.of(entry.task, collected)
                    if isinstance(texts, str):
                        notes.append(texts)
                    read = analysis_items(analysis, None if isinstance(texts, str) else texts)
                    items, missing = read
                    notes += missing_prompts(entry.task, missing)
            except PfgenError as error:
                collected.run_left_out(error)
                continue
            for name in entry.scores:
                board.add_column(Column(name))
            folder = path.parent.relative_to(root).as_posix()
            run = entry.task if folder == "." else f"{folder}/{entry.task}"
            add_entry(entry, run, items, notes, board, collected)
    if board.rows:
        collected.boards.append(board)


def missing_prompts(task: str, missing: list[int]) -> list[str]:
    """The note for prompt ids that are not among the task's prompts."""
    if not missing:
        return []
    more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
    return [f"{task}: prompt {missing[0]}{more} not in LCTG Bench's files: shown by id"]


def add_entry(
    entry: Entry,
    run: str,
    items: list[Item],
    notes: list[str],
    board: Board,
    collected: Collected,
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
    collected.pages.append(Page(page_id, "lctg", title, settings, items, notes=notes))
