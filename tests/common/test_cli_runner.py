"""The tests' CLI runner (`tests/cli_runner.py`): a run in this process gives what a process
of its own gives, and leaves this process as it found it."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from cli_runner import run_cli
from pfgen_fast.testing import Reply, serve


def test_in_process_and_a_process_of_its_own_give_the_same(tmp_path: Path) -> None:
    for args in (["--version"], ["eval", "--no-such-option"], ["mm", "tasks", "--json"]):
        mine, own = run_cli(*args, cwd=tmp_path), run_cli(*args, cwd=tmp_path, process=True)
        assert (mine.returncode, mine.stdout, mine.stderr) == (
            own.returncode,
            own.stdout,
            own.stderr,
        ), args


def test_the_process_is_left_as_it_was(tmp_path: Path) -> None:
    handlers = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    streams = sys.stdin, sys.stdout, sys.stderr
    environment, cwd = dict(os.environ), os.getcwd()
    done = run_cli(
        "score", "--data", tmp_path, cwd=tmp_path, env={"PFGEN_FAST_CACHE": str(tmp_path)}
    )
    assert done.returncode == 1 and "no Qxx.json question files" in done.stderr
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == handlers
    assert (sys.stdin, sys.stdout, sys.stderr) == streams
    assert dict(os.environ) == environment and os.getcwd() == cwd
    assert gc.isenabled()


def test_standard_input_is_given(data_dir: Path) -> None:
    for process in (False, True):
        done = run_cli("score", "--data", data_dir, input=b"\xfd7zXZ\x00", process=process)
        assert done.returncode == 1 and "compressed with xz" in done.stderr


def test_past_its_time_a_run_is_stopped(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    row = {"id": "1", "question": "q", "answer_a": "a", "answer_b": "b"}
    items.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with serve(lambda path, request: Reply(text="A", delay=30)) as server:
        args = ["judge", "pairwise", items, "--base-url", server.base_url, "--judge-model", "j"]
        with pytest.raises(subprocess.TimeoutExpired):
            run_cli(*args, "--max-retries", "0", timeout=0.5)
    assert run_cli("--version").returncode == 0
