"""pfgen-bench runs as the site shows them: each `result.json` below the input (a checkout or a
result tree), read and checked by the pfgen room's `outputs` as its leaderboard reads it, is a
leaderboard row, its questions with every sampled answer's F/T/H a run page. The checkout's
`data/Qxx.json` give each question's reference answer and category."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.pfgen.outputs import (
    CACHE_PATH,
    RESULT_NAME,
    TOTAL_PLACES,
    RunResult,
    ValidTrials,
    cached_legacy_sum,
    criterion_total,
    load_questions,
    load_result,
    run_figures,
)
from pfgen_fast.site.model import Answer, Board, Collected, Column, Item, Page, Row

COLUMNS = [
    Column("model", numeric=False),
    Column("score", spread="±"),
    Column("fluency"),
    Column("truthfulness"),
    Column("helpfulness"),
    Column("length", spread="±"),
    Column("trials", spread="of"),
    Column("mode", numeric=False),
]
LOOKED_FOR = f"result/<org>/<model>/<hash>/{RESULT_NAME} files (pfgen-bench results)"
# The settings a row shows on hover and its page at the top, from the run's config: these
# first, then every other key of the config in its order (those `generate` records:
# enable_thinking, strip_reasoning, seed, --extra-body's keys; the published runners': stop,
# prefix, chat_template, add_no_think ...).
SETTINGS = (
    "model",
    "mode",
    "engine",
    "num_examples",
    "max_tokens",
    "temperature",
    "top_p",
    "enable_thinking",
    "strip_reasoning",
)
# What stands for an answer the runner gave up on (`"generated": false`): never its text.
GIVEN_UP = "(no answer: the runner gave up on this one)"
# A longer text (a chat template) is shown by its start and its length.
SHOWN_CHARACTERS = 80
SUM_MODES = {
    None: f"not recorded (no {CACHE_PATH})",
    True: "left to right (Python <= 3.11, --legacy-sum)",
    False: "compensated (Python >= 3.12)",
}


def result_files(root: Path) -> list[Path]:
    if root.is_file() and root.name == RESULT_NAME:
        return [root]
    return sorted(root.rglob(RESULT_NAME))


def total(value: Any, legacy_sum: bool) -> float | None:
    """A criterion's score: a number, or per-source parts that add up to it."""
    if isinstance(value, dict):
        return round(criterion_total(value, legacy_sum), TOTAL_PLACES) if value else None
    return value if isinstance(value, (int, float)) else None


def references(root: Path) -> dict[str, dict[str, str]]:
    """Question text -> its `note` (reference answer) and category, from `data/Qxx.json` of the
    checkout (none when the input is a bare result tree or its data cannot be read)."""
    data = root / "data" if root.is_dir() else root.parent / "data"
    try:
        questions = load_questions(data, require_answers=False) if data.is_dir() else {}
    except PfgenError:
        return {}
    return {q.question: {"reference": q.note, "category": q.category} for q in questions.values()}


def question_item(
    qid: str,
    question: dict[str, Any],
    known: dict[str, dict[str, str]],
    legacy_sum: bool,
    valid: ValidTrials | None = None,
) -> Item:
    """A question of a run's page; `valid`: its valid trials where some were given up."""
    text = str(question.get("question", ""))
    found = known.get(text, {})
    fields = [("question", text)]
    if found.get("reference"):
        fields.append(("reference", found["reference"]))
    if valid:
        fields.append(("valid trials", f"{valid} (answers the runner gave up on are not scored)"))
    answers = []
    samples = [s for s in question.get("samples") or [] if isinstance(s, dict)]
    for number, sample in enumerate(samples, start=1):
        if sample.get("generated") is False:
            answers.append(Answer(label=f"sample {number}: given up", text=GIVEN_UP))
            continue
        scores = sample.get("scores") or {}
        answers.append(
            Answer(
                label=f"sample {number}",
                text=str(sample.get("answer", "")),
                scores={
                    "F": total(scores.get("fluency"), legacy_sum),
                    "T": total(scores.get("truthfulness"), legacy_sum),
                    "H": total(scores.get("helpfulness"), legacy_sum),
                    "average": total(scores.get("average"), legacy_sum),
                },
            )
        )
    score = question.get("score")
    return Item(
        id=qid,
        category=found.get("category", ""),
        score=score if isinstance(score, (int, float)) else None,
        fields=fields,
        answers=answers,
    )


def collect_pfgen(roots: list[Path], collected: Collected) -> list[Path]:
    """Every run read into the leaderboard and a run page; the result.json files read (a run
    that cannot be read is named, with why, in a note and a warning)."""
    board = Board("pfgen", "Leaderboard", COLUMNS)
    read: list[Path] = []
    for root in roots:
        paths = result_files(root)
        if not paths:
            collected.nothing_recognised(root, LOOKED_FOR)
            continue
        known = references(root)
        base = root if root.is_dir() else root.parent
        for path in paths:
            try:
                run = load_result(path)
            except PfgenError as error:
                collected.run_left_out(error)
                collected.notes.setdefault("pfgen", []).append(f"Left out: {error}")
                continue
            read.append(path)
            name = path.parent.relative_to(base).as_posix()
            recorded = cached_legacy_sum(path.parent / CACHE_PATH)
            page = run_page(run, name, known, f"pfgen-{len(collected.pages)}", recorded)
            board.rows.append(run_row(run, name, page, bool(recorded)))
            collected.pages.append(page)
    board.rows.sort(key=lambda row: -(row.cells["score"] or 0))
    board.sort = "score"
    if board.rows:
        collected.boards.append(board)
    return read


def run_settings(run: RunResult, legacy_sum: bool | None) -> dict[str, Any]:
    config = run.config
    names = [
        *(name for name in SETTINGS if name in config),
        *(n for n in config if n not in SETTINGS),
    ]
    settings = {name: setting_text(config[name]) for name in names}
    valid = run.valid_trials()
    settings["trials"] = str(valid) if valid else run.data.get("num_trials")
    settings["sum mode"] = SUM_MODES[legacy_sum]
    settings["sources"] = run.data.get("sources") or "all (the published scoring)"
    settings["input_hash"] = run.data.get("input_hash")
    settings["metadata_hash"] = run.data.get("metadata_hash")
    return settings


def setting_text(value: Any) -> Any:
    """A config value as shown: a long text by its start and length, an object or a list as
    JSON, else itself."""
    if isinstance(value, (dict, list)):
        value = json.dumps(value, ensure_ascii=False)
    if isinstance(value, str) and len(value) > SHOWN_CHARACTERS:
        return f"{value[:SHOWN_CHARACTERS]}… ({len(value):,} characters)"
    return value


def run_page(
    run: RunResult,
    name: str,
    known: dict[str, dict[str, str]],
    page_id: str,
    legacy_sum: bool | None,
) -> Page:
    """The run's page; `legacy_sum`: the sum mode its score cache records (None: none)."""
    items = [
        question_item(qid, question, known, bool(legacy_sum), run.valid_trials(qid))
        for qid, question in run.data["questions"].items()
    ]
    settings = run_settings(run, legacy_sum)
    title = f"pfgen-bench: {run.config.get('model') or name} ({name})"
    return Page(page_id, "pfgen", title, settings, items)


def run_row(run: RunResult, name: str, page: Page, legacy_sum: bool) -> Row:
    figures = run_figures(run.data, legacy_sum)
    valid = run.valid_trials()
    spreads = {
        "score": figures.score_std,
        "length": figures.length_std,
        "trials": valid.trials if valid else figures.num_trials,
    }
    return Row(
        run=name,
        cells={
            "model": run.config.get("model") or name,
            "score": figures.score,
            "fluency": figures.rounded_fluency,
            "truthfulness": figures.rounded_truthfulness,
            "helpfulness": figures.helpfulness,
            "length": figures.length,
            "trials": valid.valid if valid else figures.num_trials,
            "mode": run.config.get("mode"),
        },
        spreads=spreads,
        settings=page.settings,
        page=page.id,
    )
