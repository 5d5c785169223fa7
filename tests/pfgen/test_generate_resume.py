"""`generate` stopped mid-run (SIGTERM, SIGKILL) and run again: the re-run repeats at most the
calls that were in flight when it stopped (the response cache holds every reply), and writes
the same trials; with --no-cache it asks again every question of the unfinished trials."""

from __future__ import annotations

import json
import lzma
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_generate import chat_model_answer, generate_args, run_dir_of

from pfgen_fast.testing import serve

CONCURRENCY = 4
TRIALS = 4  # 200 questions


def canonical(body: dict[str, object]) -> str:
    return json.dumps(body, sort_keys=True, ensure_ascii=False)


def interrupted_then_resumed(
    data_dir: Path, tmp_path: Path, sig: signal.Signals, *extra: str
) -> tuple[list[str], list[str], subprocess.CompletedProcess[str]]:
    """The requests of a run stopped by `sig` after 80 requests, and those of its re-run."""
    env = {**os.environ, "PFGEN_FAST_CACHE": str(tmp_path / "cache"), "OPENAI_API_KEY": ""}
    with serve(chat_model_answer, delay=0.01) as server:
        args = [*generate_args(server.base_url, tmp_path / "out", data_dir, "qa", TRIALS), *extra]
        args += ["--concurrency", str(CONCURRENCY)]
        command = [sys.executable, "-m", "pfgen_fast", *args]
        process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
        )
        deadline = time.monotonic() + 120
        while server.requests_count < 80 and process.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.005)
        process.send_signal(sig)
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == (143 if sig == signal.SIGTERM else -sig), stderr
        first = [canonical(body) for body in server.bodies()]
        again = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
        second = [canonical(body) for body in server.bodies()[len(first) :]]
    return first, second, again


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_resumed_run_repeats_only_the_calls_in_flight(
    data_dir: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    first, second, again = interrupted_then_resumed(data_dir, tmp_path, sig)
    assert again.returncode == 0, again.stderr
    repeated = [request for request in second if request in set(first)]
    assert len(repeated) <= CONCURRENCY
    assert len(set(first) | set(second)) == TRIALS * 50 == len(first) + len(second) - len(repeated)
    packed = lzma.decompress((run_dir_of(tmp_path / "out") / "trials.jsonl.xz").read_bytes())
    assert len(packed.splitlines()) == TRIALS * 50


def test_without_the_cache_the_unfinished_trials_are_asked_again(
    data_dir: Path, tmp_path: Path
) -> None:
    first, second, again = interrupted_then_resumed(
        data_dir, tmp_path, signal.SIGKILL, "--no-cache"
    )
    assert again.returncode == 0, again.stderr
    assert not (tmp_path / "cache" / "llm").exists()
    # The answered questions of the unfinished trials: more than what was in flight.
    assert len(set(second) & set(first)) > CONCURRENCY
