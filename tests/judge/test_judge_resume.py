"""An interrupted `judge pairwise` (a real subprocess, a real signal, a slow judge) resumes:
the re-run makes only the calls the first run did not finish."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from scripted_judge import ScriptedJudge

from pfgen_fast.testing import serve

pytestmark = pytest.mark.slow

ITEMS = 24


def cli(items: Path, url: str, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pfgen_fast",
        "judge",
        "pairwise",
        str(items),
        "--prompt",
        "result-only",
        "--base-url",
        url,
        "--judge-model",
        "judge-1",
        "--concurrency",
        "2",
        *extra,
    ]


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_run_resumes(tmp_path: Path, signal_number: int) -> None:
    items = tmp_path / "items.jsonl"
    items.write_text(
        "".join(
            json.dumps(
                {"id": i, "question": f"問{i}", "answer_a": f"甲{i}", "answer_b": f"乙{i}"},
                ensure_ascii=False,
            )
            + "\n"
            for i in range(ITEMS)
        )
    )
    env = {**os.environ, "PFGEN_FAST_CACHE": str(tmp_path / "cache")}
    judge = ScriptedJudge(delay=0.1)
    with serve(judge) as server:
        process = subprocess.Popen(
            cli(items, server.base_url),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while judge.judged < 10 and time.monotonic() < deadline:
            time.sleep(0.02)
        process.send_signal(signal_number)
        _, err = process.communicate(timeout=60)
        # 128 + the signal's number when the CLI handles it, -number when it dies of it
        assert process.returncode in (128 + signal_number, -signal_number), err
        first_run = server.requests_count
        assert 10 <= first_run < 2 * ITEMS
        judge.delay = 0.0
        rerun = subprocess.run(
            cli(items, server.base_url, "--json"),
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert rerun.returncode == 0, rerun.stderr
    usage = json.loads(rerun.stdout)["summary"]["usage"]
    second_run = server.requests_count - first_run
    assert usage["calls"] == second_run
    # every reply received before the signal was kept; only those in flight are asked again
    assert usage["cached"] + second_run == 2 * ITEMS
    assert usage["cached"] >= first_run - 2
    assert len(json.loads(rerun.stdout)["items"]) == ITEMS
