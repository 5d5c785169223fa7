"""Output options mean one thing across the commands: `--out` where a command's own output goes,
`--table FILE` an export of the table it prints. The former names (`report --output`, `lctg
leaderboard --out`, `judge rank --out`, `mm score --output`) still work for one release: hidden
from help, with a warning naming the new option."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from cli_runner import run_cli
from pfgen_fast.lctg.aggregate import COLUMNS

# command words, the new option, its former name
RENAMED = [
    (["report"], "--table", "--output"),
    (["lctg", "leaderboard"], "--table", "--out"),
    (["judge", "rank"], "--table", "--out"),
    (["mm", "score"], "--out", "--output"),
]


@pytest.mark.parametrize(("words", "new", "old"), RENAMED)
def test_help_shows_the_new_name_only(words: list[str], new: str, old: str) -> None:
    result = run_cli(*words, "--help")
    assert result.returncode == 0
    options = {word.strip(",[]") for word in result.stdout.split()}
    assert new in options and old not in options


def lctg_scores(folder: Path) -> Path:
    scores = {name: 0.5 for name in COLUMNS}
    path = folder / "lctg-summary-scores.json"
    path.write_text(json.dumps({"task": "summary", "model": "m", "scores": scores}))
    return path


@pytest.mark.parametrize("option", ["--table", "--out"])
def test_lctg_leaderboard_table_by_either_name(tmp_path: Path, option: str) -> None:
    board = tmp_path / "board.csv"
    result = run_cli("lctg", "leaderboard", lctg_scores(tmp_path), option, board)
    assert result.returncode == 0, result.stderr
    assert pl.read_csv(board)["model"].to_list() == ["m"]
    warned = "warning: --out is deprecated and will be removed: use --table"
    assert (warned in result.stderr) == (option == "--out")


@pytest.mark.parametrize("option", ["--out", "-o", "--output"])
def test_mm_score_output_by_any_name(tmp_path: Path, option: str) -> None:
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"ref": "東京", "pred": "東京"}, ensure_ascii=False) + "\n")
    scored = tmp_path / "scored.jsonl"
    result = run_cli("mm", "score", "--metric", "exact-match", items, option, scored)
    assert result.returncode == 0, result.stderr
    assert json.loads(scored.read_text())["score"] == 1.0
    assert ("deprecated" in result.stderr) == (option == "--output")
