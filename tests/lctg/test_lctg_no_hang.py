"""`lctg generate` and `lctg eval` end whatever one request of a concurrent batch gets (see
batch_faults.py), under a time limit that counts a hang as a failure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from batch_faults import PLACES, one_fails, run_to_the_end
from lctg_support import lctg_dir
from test_lctg_eval import TASK, build_setup, write_lines

from pfgen_fast.testing import Reply, serve

pytestmark = pytest.mark.slow


def generated(path: str, request: dict[str, Any]) -> Reply:
    return Reply(text=f"生成{len(request['messages'][-1]['content'])}")


@pytest.mark.parametrize(("fault", "number"), [("400", 3), ("dropped", 3)])
def test_generate_ends(tmp_path: Path, fault: str, number: int) -> None:
    responder = one_fails(generated, fault, number, delay=0)
    with serve(responder) as server:
        run_to_the_end(
            "lctg", "generate", "--task", TASK, "--data", lctg_dir(), "--base-url", server.base_url,
            "--model", "demo-7b", "--out", tmp_path / "out",
            "--concurrency", "16", cache=tmp_path,
        )  # fmt: skip
    assert server.requests_count >= number


@pytest.mark.parametrize(("fault", "number"), PLACES)
def test_eval_ends(tmp_path: Path, fault: str, number: int) -> None:
    setup = build_setup()
    generations = write_lines(tmp_path / "generated_result_v1.jsonl", setup.rows[:2])
    responder = one_fails(setup.stand_in.responder(), fault, number)
    with serve(responder) as server:
        run_to_the_end(
            "lctg", "eval", "--task", TASK, "--data", lctg_dir(), "--base-url", server.base_url,
            "--judge-model", "judge-1", generations, "--out", tmp_path / "out", cache=tmp_path,
        )  # fmt: skip
    assert server.requests_count >= number
