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


@pytest.mark.slow
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
    # One request per distinct question and answer: identical ones are sent once.
    answers = {pair for run in runs for pair in first_trials(run).items()}
    assert server.requests_count == len(answers) <= 4 * 50
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


def small_run(folder: Path, answers: list[str]) -> Path:
    """A run directory answering the first questions of the data once each."""
    questions = sorted((bench_dir() / "data").glob("Q*.json"))[: len(answers)]
    folder.mkdir()
    lines = [
        json.dumps({"question": json.loads(q.read_text())["question"], "answer": a}) + "\n"
        for q, a in zip(questions, answers, strict=True)
    ]
    (folder / "trials.jsonl").write_text("".join(lines))
    (folder / "result.json").write_text('{"score": 0.5}')
    return folder


def pointwise(run: Path, url: str, *args: str) -> list[str]:
    data = str(bench_dir() / "data")
    return [
        "judge", "pointwise", str(run), "--data", data, "--base-url", url,
        "--judge-model", "judge-1", "--max-retries", "0", "--json", *args,
    ]  # fmt: skip


def test_pointwise_replies_that_reason_are_cut_or_empty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    replies = {
        "考える回答": Reply(text="<think>[[2]]かな</think>Rating: [[7]]"),
        "離れて考える回答": Reply(text="Rating: [[8]]", reasoning="[[1]]ではない"),
        "長い回答": Reply(text="理由は" * 100 + "[[5]]", finish_reason="length"),
        "途中の回答": Reply(text="<think>まず", finish_reason="length"),
        "空の回答": Reply(text=""),
        "評価なしの回答": Reply(text="評価できません"),
    }

    def respond(path: str, request: dict[str, Any]) -> Reply:
        answer = ANSWER.search(request["messages"][-1]["content"])
        assert answer is not None
        return replies[answer.group(1)]

    run = small_run(tmp_path / "run", list(replies))
    with serve(respond) as server:
        code = main(pointwise(run, server.base_url, "--max-tokens", "100"))
    captured = capsys.readouterr()
    assert code == 1
    result = json.loads(captured.out)
    outcomes = [(r["rating"], r.get("error")) for r in result["ratings"]]
    assert outcomes == [
        (7.0, None),
        (8.0, None),
        (None, "cut at max_tokens before its rating (raise --max-tokens)"),
        (None, "cut at max_tokens before an answer (raise --max-tokens)"),
        (None, "empty reply"),
        (None, "no rating [[1-10]] in the reply"),
    ]
    assert result["summary"]["runs"][0]["rated"] == 2
    assert result["summary"]["settings"]["max_tokens"] == 100
    assert {body["max_tokens"] for body in server.bodies()} == {100}
    errors = [line for line in captured.err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith("error: 4 answers got no rating (")


def test_pointwise_checks_its_outputs_before_the_first_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = small_run(tmp_path / "run", ["回答"])
    blocker = tmp_path / "file"
    blocker.write_text("")
    cases = [
        (["--plot", str(tmp_path / "scatter.xyz")], "error: --plot "),
        (["--plot", str(blocker / "scatter.png")], f"error: {blocker}: cannot write: "),
        (["--out", str(blocker)], f"error: {blocker}: cannot write: "),
    ]
    with serve(rater) as server:
        for args, start in cases:
            assert main(pointwise(run, server.base_url, *args)) == 1
            err = capsys.readouterr().err
            assert err.startswith(start) and len(err.splitlines()) == 1, err
    assert server.received == []
