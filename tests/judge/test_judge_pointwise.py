"""`judge pointwise`: the 10-point judge over published runs, each run's mean rating, Pearson's r
against the runs' pfgen-bench scores, and the scatter plot."""

from __future__ import annotations

import json
import lzma
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from judge_data import bench_dir, published_runs

from pfgen_fast.cli import main
from pfgen_fast.judge.pointwise import parse_rating
from pfgen_fast.testing import Reply, serve

ANSWER = re.compile(r"\[The Start of Assistant's Answer\]\n(.*)\n\[The End of Assistant's", re.S)


def rating_for(answer: str) -> int:
    return 1 + len(answer) % 10


def rater(path: str, request: dict[str, Any]) -> Reply:
    answer = ANSWER.search(request["messages"][-1]["content"])
    assert answer is not None
    return Reply(text=f"模範回答と比べて…。Rating: [[{rating_for(answer.group(1))}]]")


@pytest.mark.parametrize(
    ("text", "rating"),
    [
        ("理由。Rating: [[8]]", 8.0),
        ("[[3]] と思ったが、Rating: [[7.5]]", 7.5),
        ("Rating: [6]", 6.0),
        ("Rating: [[11]]", None),
        ("評価できません", None),
    ],
)
def test_parse_rating(text: str, rating: float | None) -> None:
    assert parse_rating(text) == rating


def first_trials(run: Path) -> dict[str, str]:
    """Each question's first answer in the run's trials file."""
    first: dict[str, str] = {}
    for line in lzma.decompress((run / "trials.jsonl.xz").read_bytes()).splitlines():
        row = json.loads(line)
        first.setdefault(row["question"], row["answer"])
    return first


def test_pointwise_over_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = published_runs()[:4]
    with serve(rater) as server:
        code = main(
            [
                "judge",
                "pointwise",
                *map(str, runs),
                "--data",
                str(bench_dir() / "data"),
                "--trials",
                "1",
                "--json",
                "--out",
                str(tmp_path / "out"),
                "--plot",
                str(tmp_path / "scatter.png"),
                "--base-url",
                server.base_url,
                "--judge-model",
                "judge-1",
            ]
        )
    result = json.loads(capsys.readouterr().out)
    assert code == 0
    assert server.requests_count == 4 * 50
    means, scores = [], []
    for run, row in zip(runs, result["summary"]["runs"], strict=True):
        ratings = [rating_for(answer) for answer in first_trials(run).values()]
        score = json.loads((run / "result.json").read_text())["score"]
        assert row["run"] == str(run)
        assert row["mean rating"] == pytest.approx(np.mean(ratings), abs=1e-4)
        assert (row["pfgen score"], row["rated"], row["unrated"]) == (score, 50, 0)
        means.append(np.mean(ratings))
        scores.append(score)
    assert result["summary"]["pearson_r"] == pytest.approx(np.corrcoef(scores, means)[0, 1])
    assert (tmp_path / "scatter.png").read_bytes()[:4] == b"\x89PNG"
    lines = (tmp_path / "out/ratings.jsonl").read_text().splitlines()
    assert len(lines) == 200
    assert json.loads(lines[0])["question"] == "Q01"


def test_scatter_points_are_labelled_with_their_runs() -> None:
    from pfgen_fast.judge.pointwise import RunRating, point_labels

    runs = [
        RunRating("/data/result/org/model-a/run1", 0.5, 6.0, 10, 0),
        RunRating("/data/result/org/model-b/run1", 0.6, None, 0, 10),  # unrated: no point
        RunRating("/data/result/other/model-c/run2", 0.7, 7.5, 10, 0),
    ]
    assert point_labels(runs) == ["org/model-a/run1", "other/model-c/run2"]
    assert point_labels(runs[:1]) == ["run1"]
