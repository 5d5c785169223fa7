"""Progress of a command that asks a model, through the CLI (`judge pairwise`): in a
pseudo-terminal a live bar whose item count and percentage come before the summary; piped, at
most 11 plain lines; nothing with --quiet."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from scripted_judge import ScriptedJudge
from test_judge_pairwise import SCRIPT, item_rows, write_items

from pfgen_fast.testing import serve

ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")


def pairwise(url: str, items: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "pfgen_fast", "judge", "pairwise", str(items), "--base-url", url,
        "--judge-model", "judge-1", "--no-cache", *extra,
    ]  # fmt: skip


def run_in_terminal(command: list[str]) -> str:
    """What the command shows on a pseudo-terminal (stdout and stderr), escapes removed."""
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "150", "TERM": "xterm"}
    child = subprocess.Popen(command, stdin=follower, stdout=follower, stderr=follower, env=env)
    os.close(follower)
    shown = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 1.0)
        if not ready:
            if child.poll() is not None:
                break
            continue
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert child.wait(timeout=60) == 0
    return ESCAPES.sub("", shown.decode())


def test_a_bar_on_a_terminal_before_the_summary(tmp_path: Path) -> None:
    items = write_items(tmp_path / "items.jsonl", item_rows())
    with serve(ScriptedJudge(SCRIPT)) as server:
        shown = run_in_terminal(pairwise(server.base_url, items))
    summary = shown.index("robustness")
    assert 0 <= shown.find("10/10") < summary and 0 <= shown.find("100%") < summary
    assert "0 cached, 0 failed" in shown[:summary]


@pytest.mark.slow
def test_piped_at_most_eleven_lines_and_none_when_quiet(tmp_path: Path) -> None:
    items = write_items(tmp_path / "items.jsonl", item_rows())
    with serve(ScriptedJudge(SCRIPT)) as server:
        piped = subprocess.run(
            pairwise(server.base_url, items), capture_output=True, text=True, timeout=120
        )
        quiet = subprocess.run(
            pairwise(server.base_url, items, "--quiet"), capture_output=True, text=True, timeout=120
        )
    lines = piped.stderr.splitlines()
    assert 1 <= len(lines) <= 11 and all(line.startswith("verdicts: ") for line in lines)
    assert lines[-1].startswith("verdicts: 10/10 (100%), ")
    assert quiet.stderr == "" and quiet.stdout == piped.stdout
