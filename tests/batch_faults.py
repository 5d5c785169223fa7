"""A stand-in that fails one request of a concurrent batch, for the tests that every command
asking a model finishes whatever a server answers: each fault as `Reply`s of
`pfgen_fast.testing` give it, and a run of the CLI under a time limit that counts a hang as a
failure."""

from __future__ import annotations

import dataclasses
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cli_runner import run_cli
from pfgen_fast.testing import Reply

Responder = Callable[[str, dict[str, Any]], Reply]

# What the failing request gets: a refusal of that request alone, a server error, a body that
# is not JSON, an empty answer, a connection closed without a reply.
FAULTS: dict[str, Reply] = {
    "400": Reply(status=400, error="This model's maximum context length is 2048 tokens."),
    "500": Reply(status=500, error="llama_decode returned 1"),
    "malformed": Reply(malformed=True),
    "empty": Reply(text=""),
    "dropped": Reply(drop=True),
}
# Longer than any command of these tests takes: reaching it is a hang.
HANG_LIMIT = 120.0
# Where the fault hits: the third request of every run; the refusal also at the seventh.
PLACES = [(fault, 3) for fault in FAULTS] + [("400", 7)]


def one_fails(responder: Responder, fault: str, number: int = 3, delay: float = 0.02) -> Responder:
    """`responder`'s replies, each after `delay` (so that requests overlap), but the
    `number`-th request received gets `fault`."""
    count = 0
    lock = threading.Lock()

    def respond(path: str, request: dict[str, Any]) -> Reply:
        nonlocal count
        with lock:
            count += 1
            mine = count
        if mine == number:
            return FAULTS[fault]
        reply = responder(path, request)
        return dataclasses.replace(reply, delay=max(reply.delay, delay))

    return respond


def run_to_the_end(*args: str | Path, cache: Path) -> subprocess.CompletedProcess[str]:
    """`python -m pfgen_fast ARGS` (no retries; `cache` as the user cache), which must end on
    its own within HANG_LIMIT, with exit status 0 or 1 and no traceback."""
    try:
        done = run_cli(
            *args,
            "--max-retries",
            "0",
            env={"PFGEN_FAST_CACHE": str(cache), "OPENAI_API_KEY": ""},
            timeout=HANG_LIMIT,
        )
    except subprocess.TimeoutExpired as hung:
        raise AssertionError(f"hung: {' '.join(map(str, args))}\n{hung.stderr!r}") from None
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr and "This is a bug" not in done.stderr, done.stderr
    return done
