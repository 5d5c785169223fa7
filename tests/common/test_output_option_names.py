"""Output options mean one thing across the commands: `--out` where a command's own output goes,
`--table FILE` an export of the table it prints."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from cli_runner import run_cli
from pfgen_fast.lctg.aggregate import COLUMNS

# command words, the option naming its output
OUTPUT_OPTIONS = [
    (["report"], "--table"),
    (["lctg", "leaderboard"], "--table"),
    (["judge", "rank"], "--table"),
    (["mm", "score"], "--out"),
]


@pytest.mark.parametrize(("words", "option"), OUTPUT_OPTIONS)
def test_help_shows_the_output_option(words: list[str], option: str) -> None:
    result = run_cli(*words, "--help")
    assert result.returncode == 0
    assert option in {word.strip(",[]") for word in result.stdout.split()}


def lctg_scores(folder: Path) -> Path:
    scores = {name: 0.5 for name in COLUMNS}
    path = folder / "lctg-summary-scores.json"
    path.write_text(json.dumps({"task": "summary", "model": "m", "scores": scores}))
    return path


def test_lctg_leaderboard_table(tmp_path: Path) -> None:
    board = tmp_path / "board.csv"
    result = run_cli("lctg", "leaderboard", lctg_scores(tmp_path), "--table", board)
    assert result.returncode == 0, result.stderr
    assert pl.read_csv(board)["model"].to_list() == ["m"]


@pytest.mark.parametrize("option", ["--out", "-o"])
def test_mm_score_output_by_either_name(tmp_path: Path, option: str) -> None:
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"ref": "東京", "pred": "東京"}, ensure_ascii=False) + "\n")
    scored = tmp_path / "scored.jsonl"
    result = run_cli("mm", "score", "--metric", "exact-match", items, option, scored)
    assert result.returncode == 0, result.stderr
    assert json.loads(scored.read_text())["score"] == 1.0
