"""`judge pairwise --runs`: two published pfgen-bench runs judged question by question, trial by
trial, with the questions' model answers from the benchmark data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from judge_data import bench_dir, published_runs
from scripted_judge import ScriptedJudge

from pfgen_fast.cli import main
from pfgen_fast.testing import serve


def test_two_runs(capsys: pytest.CaptureFixture[str]) -> None:
    run_a, run_b = published_runs()[:2]
    judge = ScriptedJudge()
    with serve(judge) as server:
        code = main(
            [
                "judge",
                "pairwise",
                "--runs",
                str(run_a),
                str(run_b),
                "--data",
                str(bench_dir() / "data"),
                "--trials",
                "2",
                "--prompt",
                "result-only",
                "--json",
                "--base-url",
                server.base_url,
                "--judge-model",
                "judge-1",
            ]
        )
    out = capsys.readouterr().out
    assert code == 0
    items = json.loads(out)["items"]
    assert [item["id"] for item in items[:3]] == ["Q01/1", "Q01/2", "Q02/1"]
    assert len(items) == 100
    assert {(item["model_a"], item["model_b"]) for item in items} == {(str(run_a), str(run_b))}
    # Both orders of each item, identical requests (the same answers twice) once.
    bodies = {json.dumps(body, sort_keys=True) for body in server.bodies()}
    assert judge.judged == server.requests_count == len(bodies) <= 200
    assert items[0]["task"] == json.loads((bench_dir() / "data/Q01.json").read_text())["category"]
    assert sum(t["items"] for t in json.loads(out)["summary"]["by_task"].values()) == 100


def test_run_with_unknown_question(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "trials.jsonl").write_text(json.dumps({"question": "謎の質問", "answer": "x"}) + "\n")
    code = main(
        [
            "judge",
            "pairwise",
            "--runs",
            str(run),
            str(run),
            "--data",
            str(bench_dir() / "data"),
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--judge-model",
            "judge-1",
        ]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert err == f'error: {run}/trials.jsonl:1: field "question": not a question of the data\n'


def test_run_problems_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    data = str(bench_dir() / "data")
    server = ["--base-url", "http://127.0.0.1:9/v1", "--judge-model", "judge-1"]
    cases = [
        (
            ["pairwise", "--runs", str(empty), str(empty), "--data", data],
            f"error: {empty}: no trials.jsonl.xz or trials.jsonl\n",
        ),
        (
            ["pairwise", "--runs", str(empty), str(empty), "--data", str(empty)],
            f"error: {empty}: no Qxx.json question files\n",
        ),
        (
            ["pointwise", str(published_runs()[0].parent), "--data", data],
            f"error: {published_runs()[0].parent}: no trials.jsonl.xz or trials.jsonl\n",
        ),
    ]
    for args, message in cases:
        assert main(["judge", *args, *server]) == 1
        assert capsys.readouterr().err == message
