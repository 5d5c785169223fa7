"""The tables of `lctg eval`, `lctg leaderboard`, `mm evaluate` and `mm leaderboard`, run as
commands on a terminal of 80 and of 120 columns (rich told so by FORCE_COLOR and
COLUMNS): no line is wider, and every column header and every value shows whole on one line."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console

from cli_runner import run_cli
from pfgen_fast.lctg.aggregate import COLUMNS as LCTG_COLUMNS

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
WIDTHS = (80, 120)
MODELS = ("llm-jp/llm-jp-3-vila-14b", "Qwen/Qwen2-VL-7B-Instruct")


def on_terminal(width: int, *args: str | Path) -> list[str]:
    result = run_cli(*args, env={"COLUMNS": str(width), "FORCE_COLOR": "1", "TERM": "xterm"})
    assert result.returncode == 0, result.stderr
    return ANSI.sub("", result.stdout).splitlines()


def assert_whole(lines: list[str], width: int, texts: list[str]) -> None:
    assert lines and max(cell_len(line) for line in lines) <= width
    missing = [text for text in texts if not any(text in line for line in lines)]
    assert not missing, f"not whole at {width} columns: {missing}\n" + "\n".join(lines)


def lctg_scores(folder: Path) -> list[Path]:
    paths = []
    for level, model in zip((0.25, 0.5), MODELS, strict=True):
        for task in ("summary", "ad_text"):
            scores = {name: round(level + k / 100, 3) for k, name in enumerate(LCTG_COLUMNS)}
            scores["P-word-qual"] = None
            path = folder / task / model.replace("/", "_") / f"lctg-{task}-scores.json"
            path.parent.mkdir(parents=True)
            path.write_text(json.dumps({"task": task, "model": model, "scores": scores}))
            paths.append(path)
    return paths


@pytest.mark.parametrize("width", WIDTHS)
def test_lctg_leaderboard(tmp_path: Path, width: int) -> None:
    lines = on_terminal(width, "lctg", "leaderboard", *lctg_scores(tmp_path))
    values = [
        f"{0.25 + k / 100:.3f}" for k, name in enumerate(LCTG_COLUMNS) if name != "P-word-qual"
    ]
    assert_whole(lines, width, [*LCTG_COLUMNS, *MODELS, *values, "n/a", "LCTG Bench ad_text"])


@pytest.mark.parametrize("width", WIDTHS)
def test_lctg_eval_scores(width: int) -> None:
    from pfgen_fast.lctg.report import print_scores

    scores = {name: round(0.5 + k / 100, 3) for k, name in enumerate(LCTG_COLUMNS)}
    document = {"task": "summary", "model": MODELS[1], "judge": {"model": "judge-1"}}
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=True, color_system=None)
    print_scores({**document, "scores": scores}, console=console)
    values = [f"{value:.3f}" for value in scores.values()]
    assert_whole(out.getvalue().splitlines(), width, [*LCTG_COLUMNS, MODELS[1], *values])


def mm_results(folder: Path) -> Path:
    """Two models' predictions on three tasks, scored without a judge."""
    rows = [
        {"question_id": 0, "text": "東京タワーです。", "answer": "東京タワーです。",
         "input_text": "これは何？"},
        {"question_id": 1, "text": "赤い", "answer": "青い", "input_text": "何色？"},
    ]  # fmt: skip
    for task in ("ja-vg-vqa-500", "ja-vlm-bench-in-the-wild", "llava-bench-in-the-wild"):
        for model in MODELS:
            path = folder / task / model.replace("/", "_") / "prediction.jsonl"
            path.parent.mkdir(parents=True)
            path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return folder


@pytest.mark.parametrize("width", WIDTHS)
def test_mm_evaluate_and_leaderboard(tmp_path: Path, width: int) -> None:
    results = mm_results(tmp_path / "results")
    evaluated = on_terminal(width, "mm", "evaluate", results, "--metrics", "rougel", "exact-match")
    board = on_terminal(width, "mm", "leaderboard", results)
    headers = [
        f"{task}/{metric}"
        for task in ("ja-vg-vqa-500", "ja-vlm-bench-in-the-wild", "llava-bench-in-the-wild")
        for metric in ("exact-match", "rougel")
    ]
    models = [model.replace("/", "_") for model in MODELS]
    for lines in (evaluated, board):
        assert_whole(lines, width, [*headers, *models, "50.0", "0.5"])
