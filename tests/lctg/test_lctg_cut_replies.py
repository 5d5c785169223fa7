"""`lctg generate` counts every reply cut at max_tokens, those with text too (kept as the
generation, as the benchmark's generator keeps them), with the hint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lctg_support import lctg_dir

from cli_runner import run_cli
from pfgen_fast.testing import Reply, serve


def test_generate_counts_cut_replies_with_the_hint(tmp_path: Path) -> None:
    def respond(path: str, request: dict[str, Any]) -> Reply:
        cut = request["seed"] == 1  # the second generation of every prompt
        return Reply(text="途中まで", finish_reason="length" if cut else "stop")

    with serve(respond) as server:
        result = run_cli(
            "lctg", "generate", "--task", "pros_and_cons", "--data", lctg_dir(), "--base-url",
            server.base_url, "--model", "m", "--out", tmp_path, "--max-tokens", "8", "--quiet",
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "warning: 600 replies were cut at max_tokens (raise --max-tokens)" in (
        result.stderr.splitlines()
    )
