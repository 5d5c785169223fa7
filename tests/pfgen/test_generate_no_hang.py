"""`generate` ends whatever one request of a concurrent batch gets (see batch_faults.py), under
a time limit that counts a hang as a failure."""

from __future__ import annotations

from pathlib import Path

import pytest
from batch_faults import PLACES, one_fails, run_to_the_end

from pfgen_fast.testing import Reply, serve

pytestmark = pytest.mark.slow


def answer(path: str, request: dict[str, object]) -> Reply:
    return Reply(text="A: 回答です。")


@pytest.mark.parametrize(("fault", "number"), PLACES)
def test_generate_ends(data_dir: Path, tmp_path: Path, fault: str, number: int) -> None:
    responder = one_fails(answer, fault, number)
    with serve(responder) as server:
        run_to_the_end(
            "generate", "--model", "test/model", "--mode", "chat", "--base-url", server.base_url,
            "--num-trials", "1", "--data", data_dir, "--out", tmp_path / "out", cache=tmp_path,
        )  # fmt: skip
    assert server.requests_count >= number
