"""`mm run` ends whatever one request of a concurrent batch gets (see batch_faults.py), under a
time limit that counts a hang as a failure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from batch_faults import PLACES, one_fails, run_to_the_end
from test_evalmm_run import TASK, image_bytes, one_image_task

from pfgen_fast.testing import Reply, serve

pytestmark = pytest.mark.slow


def describe(path: str, request: dict[str, Any]) -> Reply:
    return Reply(text=f"答え{len(str(request['messages']))}")


@pytest.mark.parametrize(("fault", "number"), PLACES)
def test_mm_run_ends(tmp_path: Path, fault: str, number: int) -> None:
    data = one_image_task(tmp_path / "data", [image_bytes((16, 16), "PNG", i) for i in range(11)])
    responder = one_fails(describe, fault, number)
    with serve(responder) as server:
        run_to_the_end(
            "mm", "run", "--task", TASK, "--model", "org/vlm-1", "--base-url", server.base_url,
            "--data", data, "--out", tmp_path / "out", "--metrics", "rougel", cache=tmp_path,
        )  # fmt: skip
    assert server.requests_count >= number
