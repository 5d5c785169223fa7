"""`mm leaderboard` with an `evaluation.jsonl` that cannot be read: the error named, that run's
cells n/a, every other row shown."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import run_cli


def write_evaluation(result: Path, task: str, model: str, score: float) -> Path:
    path = result / task / model / "evaluation.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"rougel": {"overall_score": score}}) + "\n")
    return path


def test_an_unreadable_evaluation_leaves_the_other_rows(tmp_path: Path) -> None:
    result = tmp_path / "result"
    write_evaluation(result, "ja-vg-vqa-500", "model-a", 0.25)
    write_evaluation(result, "ja-vg-vqa-500", "model-b", 0.5)
    write_evaluation(result, "jdocqa", "model-a", 0.75)
    broken = write_evaluation(result, "jdocqa", "model-b", 0.0)
    broken.write_text('{"rougel": {"overall_sc')
    board = run_cli("mm", "leaderboard", result, "--table", tmp_path / "board.csv")
    assert board.returncode == 1
    [error] = board.stderr.splitlines()
    assert error.startswith(f"error: {broken}: cannot read: ")
    rows = [line.split("\t") for line in board.stdout.splitlines()]
    assert rows == [
        ["model", "ja-vg-vqa-500/rougel", "jdocqa/rougel"],
        ["model-a", "0.25", "0.75"],
        ["model-b", "0.5", "n/a"],
    ]
    assert (tmp_path / "board.csv").read_text().splitlines()[2] == "model-b,0.5,"
    csv = run_cli("mm", "leaderboard", result, "--format", "csv")
    assert csv.returncode == 1 and len(csv.stdout.splitlines()) == 3
