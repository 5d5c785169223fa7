"""Bradley-Terry ranking against hand-computed cases."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from judge_data import bench_dir, published_runs
from judged_pairs import judged_pair, write_pairs
from scripted_judge import ScriptedJudge

from cli_runner import run_cli
from pfgen_fast.cli import main
from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.jsonl import dumps_line
from pfgen_fast.judge.leaderboard import Comparison, rank_models
from pfgen_fast.judge.outputs import read_ranking
from pfgen_fast.site.judge_runs import ranking_board
from pfgen_fast.testing import serve


def games(first: str, second: str, first_wins: int, second_wins: int, ties: int = 0) -> list:
    return (
        [Comparison(first, second, "A")] * first_wins
        + [Comparison(second, first, "A")] * second_wins
        + [Comparison(first, second, "C")] * ties
    )


def test_strengths_four_two_one() -> None:
    # With p = (4, 2, 1): P(x>y) = 2/3, P(x>z) = 4/5, P(y>z) = 2/3. Counts equal to their
    # expectations satisfy the likelihood equations W_i = sum_j n_ij p_i / (p_i + p_j)
    # (x: 6 = 3*2/3 + 5*4/5; y: 3 = 3*1/3 + 3*2/3; z: 2 = 5*1/5 + 3*1/3), so p is the MLE.
    data = games("x", "y", 2, 1) + games("x", "z", 4, 1) + games("y", "z", 2, 1)
    ranked = rank_models(data, prior=0.0, bootstrap=0)
    assert [r.model for r in ranked] == ["x", "y", "z"]
    logs = [math.log(4), math.log(2), 0.0]
    mean = sum(logs) / 3
    for r, expected in zip(ranked, logs, strict=True):
        assert r.strength == pytest.approx(expected - mean, abs=1e-8)
    assert (ranked[0].wins, ranked[0].losses, ranked[0].ties) == (6, 2, 0)


def test_two_models_and_a_tie() -> None:
    # a tie is half a win each: x 3.5, y 1.5 of 5 games, so p_x / p_y = 7 / 3
    ranked = rank_models(games("x", "y", 3, 1, ties=1), prior=0.0, bootstrap=0)
    assert ranked[0].strength - ranked[1].strength == pytest.approx(math.log(7 / 3))
    assert ranked[0].ties == 1


def test_prior_keeps_an_unbeaten_model_finite() -> None:
    # with one virtual tie: x 4.5, y 0.5 of 5, so p_x / p_y = 9
    ranked = rank_models(games("x", "y", 4, 0), prior=1.0, bootstrap=0)
    assert ranked[0].strength - ranked[1].strength == pytest.approx(math.log(9))


def test_bootstrap_interval_holds_the_estimate() -> None:
    data = games("x", "y", 30, 10) + games("y", "z", 25, 15) + games("x", "z", 12, 8, 5)
    ranked = rank_models(data, bootstrap=200, seed=1)
    for r in ranked:
        assert r.low <= r.strength <= r.high
        assert r.low < r.high
    assert ranked == rank_models(data, bootstrap=200, seed=1)  # seeded


def test_disconnected_models() -> None:
    with pytest.raises(PfgenError, match="never compared"):
        rank_models(games("x", "y", 1, 1) + games("u", "v", 1, 1), bootstrap=0)


def test_rank_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = [str(run) for run in published_runs()[:3]]
    with serve(ScriptedJudge()) as server:
        for k, (a, b) in enumerate([(0, 1), (1, 2), (0, 2)]):
            code = main(
                [
                    "judge",
                    "pairwise",
                    "--runs",
                    runs[a],
                    runs[b],
                    "--data",
                    str(bench_dir() / "data"),
                    "--trials",
                    "1",
                    "--prompt",
                    "result-only",
                    "--out",
                    str(tmp_path / f"p{k}"),
                    "--base-url",
                    server.base_url,
                    "--judge-model",
                    "judge-1",
                ]
            )
            assert code == 0
    capsys.readouterr()
    out_file = tmp_path / "rank.csv"
    code = main(
        [
            "judge",
            "rank",
            *(str(tmp_path / f"p{k}") for k in range(3)),
            "--json",
            "--bootstrap",
            "100",
            "--table",
            str(out_file),
        ]
    )
    ranking = json.loads(capsys.readouterr().out)
    assert code == 0
    assert sorted(row["model"] for row in ranking) == sorted(runs)
    assert [row["rank"] for row in ranking] == [1, 2, 3]
    assert sum(row["wins"] + row["losses"] + row["ties"] for row in ranking) == 2 * 150
    assert out_file.read_text().startswith("rank,model,strength,low,high,wins,losses,ties")


def test_rank_needs_model_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_pairs(tmp_path / "items.jsonl", [judged_pair(1, None, None, "A")])
    assert main(["judge", "rank", str(path)]) == 1
    assert capsys.readouterr().err == f'error: {path}:1: field "model_a": missing\n'


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda line: line.update(id=True), 'field "id": expected a string or an integer'),
        (lambda line: line.pop("verdict"), 'field "verdict": missing'),
        (
            lambda line: line["verdict"].update(bs1="D"),
            "verdict: field \"bs1\": 'D' is not A, B or C",
        ),
        (
            lambda line: line.update(consistent="yes"),
            'field "consistent": expected true or false, got a string',
        ),
        (
            lambda line: line["orders"][1]["probabilities"].update(A=1),
            'order 2: probabilities: field "A": expected a number or null, got an integer',
        ),
        (
            lambda line: line["orders"][0]["top_logprobs"].append(["A"]),
            "order 1: field \"top_logprobs\": ['A'] is not a token and its log-probability",
        ),
    ],
)
def test_rank_names_the_line_and_field_of_an_items_file_not_as_written(
    tmp_path: Path, change: Callable[[dict[str, Any]], Any], problem: str
) -> None:
    lines = [judged_pair(n, "x", "y", "A").line() for n in range(3)]
    change(lines[1])
    path = tmp_path / "items.jsonl"
    path.write_bytes(b"".join(map(dumps_line, lines)))
    done = run_cli("judge", "rank", path, "--bootstrap", "0")
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: {path}:2: {problem}")
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr


def test_rank_without_bootstrap_shows_no_interval(tmp_path: Path) -> None:
    verdicts = [("x", "y", "A"), ("x", "y", "A"), ("y", "x", "A"), ("x", "y", "C")]
    items = write_pairs(
        tmp_path / "items.jsonl",
        [judged_pair(n, a, b, v) for n, (a, b, v) in enumerate(verdicts)],
    )
    table = tmp_path / "rank.csv"
    shown = run_cli("judge", "rank", items, "--bootstrap", "0", "--table", table)
    assert shown.returncode == 0, shown.stderr
    assert "interval" not in shown.stdout
    assert "low" not in shown.stdout and "high" not in shown.stdout
    assert table.read_text().splitlines()[0] == "rank,model,strength,wins,losses,ties"
    # The site shows such a ranking, its strengths without a CI.
    rows = read_ranking(table)
    assert rows is not None
    assert [row.spreads for row in ranking_board("rank", rows).rows] == [{}, {}]
    as_json = run_cli("judge", "rank", items, "--bootstrap", "0", "--json")
    assert [sorted(row) for row in json.loads(as_json.stdout)] == [
        sorted(["rank", "model", "strength", "wins", "losses", "ties"])
    ] * 2
    with_interval = run_cli("judge", "rank", items, "--bootstrap", "50", "--json")
    assert all("low" in row and "high" in row for row in json.loads(with_interval.stdout))
