"""`judge pairwise` and `judge pointwise` end whatever one request of a concurrent batch gets
(see batch_faults.py), each run under a time limit that counts a hang as a failure."""

from __future__ import annotations

from pathlib import Path

import pytest
from batch_faults import PLACES, one_fails, run_to_the_end
from judge_data import bench_dir, published_runs
from scripted_judge import ScriptedJudge
from test_judge_pairwise import SCRIPT, item_rows, write_items
from test_judge_pointwise import rater

from pfgen_fast.testing import serve

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(("fault", "number"), PLACES)
def test_pairwise_ends(tmp_path: Path, fault: str, number: int) -> None:
    items = write_items(tmp_path / "items.jsonl", item_rows())
    responder = one_fails(ScriptedJudge(SCRIPT), fault, number)
    with serve(responder) as server:
        run_to_the_end(
            "judge", "pairwise", items, "--out", tmp_path / "out", "--base-url", server.base_url,
            "--judge-model", "judge-1", "--prompt", "reason-then-result", cache=tmp_path,
        )  # fmt: skip
    assert server.requests_count >= number


@pytest.mark.parametrize(("fault", "number"), [("400", 3), ("500", 3), ("dropped", 3)])
def test_pointwise_ends(tmp_path: Path, fault: str, number: int) -> None:
    run = published_runs()[0]
    responder = one_fails(rater, fault, number)
    with serve(responder) as server:
        run_to_the_end(
            "judge", "pointwise", run, "--data", bench_dir() / "data", "--trials", "1",
            "--out", tmp_path / "out", "--base-url", server.base_url, "--judge-model", "judge-1",
            cache=tmp_path,
        )  # fmt: skip
    assert server.requests_count >= number
