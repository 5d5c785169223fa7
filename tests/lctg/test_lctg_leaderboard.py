"""`lctg leaderboard`: evaluations of several models and tasks side by side, exported and
drawn; a bad file is named and the others still shown."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from cli_runner import run_cli
from pfgen_fast.lctg.aggregate import COLUMNS


def scores_file(folder: Path, task: str, model: str, level: float) -> Path:
    scores = {name: round(level + index / 100, 3) for index, name in enumerate(COLUMNS)}
    path = folder / model / f"lctg-{task}-scores.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"task": task, "model": model, "scores": scores}), "utf-8")
    return path


def test_leaderboard_table_export_and_figures(tmp_path: Path) -> None:
    scores_file(tmp_path, "summary", "small", 0.3)
    scores_file(tmp_path, "summary", "large", 0.6)
    scores_file(tmp_path, "ad_text", "small", 0.4)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "lctg-summary-scores.json").write_text("{", "utf-8")
    board = tmp_path / "board.csv"
    result = run_cli(
        "lctg", "leaderboard", str(tmp_path / "**" / "lctg-*-scores.json"),
        "--table", str(board), "--plots", str(tmp_path / "figures"),
    )  # fmt: skip
    assert result.returncode == 1
    assert (
        result.stderr.startswith("error: ") and "broken/lctg-summary-scores.json" in result.stderr
    )
    # Piped: one table, each row naming its task.
    lines = result.stdout.splitlines()
    assert lines[0] == "\t".join(["task", "model", *COLUMNS])
    assert lines[1].startswith("summary\tlarge\t0.600\t0.610")
    assert lines[2].startswith("summary\tsmall\t0.300")
    assert lines[3].startswith("ad_text\tsmall\t0.400") and lines[4].startswith("wrote ")
    table = pl.read_csv(board)
    assert table.columns == ["task", "model", *COLUMNS]
    assert table.select("task", "model").rows() == [
        ("summary", "large"),
        ("summary", "small"),
        ("ad_text", "small"),
    ]
    for name in ("lctg-summary.png", "lctg-summary.svg", "lctg-ad_text.png", "lctg-ad_text.svg"):
        assert (tmp_path / "figures" / name).stat().st_size > 1000


def test_parquet_export(tmp_path: Path) -> None:
    path = scores_file(tmp_path, "pros_and_cons", "m", 0.5)
    result = run_cli("lctg", "leaderboard", str(path), "--table", str(tmp_path / "b.parquet"))
    assert result.returncode == 0, result.stderr
    assert pl.read_parquet(tmp_path / "b.parquet")["Avg-qual"].to_list() == [0.59]


def test_a_score_that_is_not_a_number_is_shown_as_na_with_a_warning(tmp_path: Path) -> None:
    scores_file(tmp_path, "summary", "good", 0.6)
    path = scores_file(tmp_path, "summary", "odd", 0.3)
    document = json.loads(path.read_text("utf-8"))
    document["scores"][COLUMNS[0]] = float("nan")
    document["scores"][COLUMNS[1]] = float("inf")
    path.write_text(json.dumps(document), "utf-8")
    result = run_cli("lctg", "leaderboard", str(tmp_path / "*" / "lctg-*-scores.json"))
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        f'warning: {path}: field "scores.{name}": not a number, shown as n/a'
        for name in COLUMNS[:2]
    ]
    lines = result.stdout.splitlines()
    assert lines[1].startswith("summary\tgood\t0.600\t0.610")
    assert lines[2].startswith("summary\todd\tn/a\tn/a\t0.320")
    assert "nan" not in result.stdout and "inf" not in result.stdout
