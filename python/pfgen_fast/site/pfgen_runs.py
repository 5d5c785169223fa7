"""pfgen-bench runs as the site shows them: each `result.json` below the input (a checkout or a
result tree) is a leaderboard row, its questions with every sampled answer's F/T/H a run page.
The checkout's `data/Qxx.json` give each question's reference answer and category."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.jsonl import read_json, read_json_object
from pfgen_fast.common.pfgen_data import QUESTION_FILE
from pfgen_fast.common.runs import RESULT_NAME, read_config
from pfgen_fast.site.model import Answer, Board, Collected, Column, Item, Page, Row

COLUMNS = [
    Column("model", numeric=False),
    Column("score", spread="±"),
    Column("fluency"),
    Column("truthfulness"),
    Column("helpfulness"),
    Column("length", spread="±"),
    Column("trials"),
    Column("mode", numeric=False),
]
LOOKED_FOR = "result/<org>/<model>/<hash>/result.json files (pfgen-bench results)"
# The settings a row shows on hover, from the run's config.
CACHE_PATH = Path("cache") / "scores.json"
SETTINGS = ("model", "mode", "engine", "num_examples", "max_tokens", "temperature", "top_p")


def result_files(root: Path) -> list[Path]:
    if root.is_file() and root.name == RESULT_NAME:
        return [root]
    return sorted(root.rglob(RESULT_NAME))


def total(value: Any) -> float | None:
    """A criterion's score: a number, or per-category parts that add up to it."""
    if isinstance(value, dict):
        parts = [v for v in value.values() if isinstance(v, (int, float))]
        return round(sum(parts), 5) if parts else None
    return value if isinstance(value, (int, float)) else None


def sum_mode(run_dir: Path) -> str:
    """How the run's scores were added, from the header of its score cache (written by `eval`);
    a published result.json alone does not say."""
    try:
        with (run_dir / CACHE_PATH).open("rb") as cache:
            head = cache.read(256)
    except OSError:
        return "not recorded (no cache/scores.json)"
    if b'"legacy_sum":true' in head:
        return "left to right (Python <= 3.11, --legacy-sum)"
    return "compensated (Python >= 3.12)"


def references(root: Path) -> dict[str, dict[str, str]]:
    """Question text -> its `note` (reference answer) and category, from `data/Qxx.json` of the
    checkout (none when the input is a bare result tree)."""
    data = root / "data" if root.is_dir() else root.parent / "data"
    found: dict[str, dict[str, str]] = {}
    if not data.is_dir():
        return found
    for path in sorted(data.iterdir()):
        if not QUESTION_FILE.fullmatch(path.name):
            continue
        try:
            value = read_json_object(path)
        except PfgenError:
            continue
        if isinstance(value.get("question"), str):
            found[value["question"]] = {
                "reference": str(value.get("note") or ""),
                "category": str(value.get("category") or ""),
            }
    return found


def read_result(path: Path) -> dict[str, Any]:
    result = read_json(path)
    if not isinstance(result, dict):
        raise PfgenError(f"{path}: expected a JSON object")
    for name in ("score", "scores", "questions"):
        if name not in result:
            raise PfgenError(f'{path}: field "{name}": missing')
    if not isinstance(result["questions"], dict) or not isinstance(result["scores"], dict):
        raise PfgenError(f'{path}: fields "scores" and "questions": expected objects')
    return result


def question_item(qid: str, question: dict[str, Any], known: dict[str, dict[str, str]]) -> Item:
    text = str(question.get("question", ""))
    found = known.get(text, {})
    fields = [("question", text)]
    if found.get("reference"):
        fields.append(("reference", found["reference"]))
    answers = []
    for number, sample in enumerate(question.get("samples") or [], start=1):
        scores = sample.get("scores") or {}
        answers.append(
            Answer(
                label=f"sample {number}",
                text=str(sample.get("answer", "")),
                scores={
                    "F": total(scores.get("fluency")),
                    "T": total(scores.get("truthfulness")),
                    "H": total(scores.get("helpfulness")),
                    "average": total(scores.get("average")),
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


def collect_pfgen(roots: list[Path], collected: Collected) -> None:
    board = Board("pfgen", "Leaderboard", COLUMNS)
    for root in roots:
        paths = result_files(root)
        if not paths:
            collected.warnings.append(f"{root}: nothing recognised; looked for {LOOKED_FOR}")
            continue
        known = references(root)
        base = root if root.is_dir() else root.parent
        for path in paths:
            try:
                result = read_result(path)
                config = result.get("config") or read_config(path.parent) or {}
            except PfgenError as error:
                collected.warnings.append(f"{error}; run left out")
                continue
            run = path.parent.relative_to(base).as_posix()
            page_id = f"pfgen-{len(collected.pages)}"
            scores = result["scores"]
            settings = {name: config[name] for name in SETTINGS if name in config}
            settings["trials"] = result.get("num_trials")
            settings["sum mode"] = sum_mode(path.parent)
            settings["sources"] = result.get("sources") or "all (the published scoring)"
            settings["input_hash"] = result.get("input_hash")
            settings["metadata_hash"] = result.get("metadata_hash")
            board.rows.append(
                Row(
                    run=run,
                    cells={
                        "model": config.get("model") or run,
                        "score": result.get("score"),
                        "fluency": total(scores.get("fluency")),
                        "truthfulness": total(scores.get("truthfulness")),
                        "helpfulness": total(scores.get("helpfulness")),
                        "length": result.get("length"),
                        "trials": result.get("num_trials"),
                        "mode": config.get("mode"),
                    },
                    spreads={"score": result.get("score_std"), "length": result.get("length_std")},
                    settings=settings,
                    page=page_id,
                )
            )
            items = [
                question_item(qid, question, known)
                for qid, question in result["questions"].items()
                if isinstance(question, dict)
            ]
            title = f"pfgen-bench: {config.get('model') or run} ({run})"
            collected.pages.append(Page(page_id, "pfgen", title, settings, items))
    board.rows.sort(key=lambda row: -(row.cells["score"] or 0))
    board.sort = "score"
    if board.rows:
        collected.boards.append(board)
