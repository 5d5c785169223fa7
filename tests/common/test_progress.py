"""The progress of long commands: on a terminal a live bar with the item count, percentage,
rate, time left, cached and failed counts; piped, at most one line per tenth of the total or
per 30 s; nothing with --quiet."""

from __future__ import annotations

import io
import os
import pty
import re

from pfgen_fast.common.progress import PLAIN_INTERVAL, Progress, format_seconds


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_piped_a_line_per_tenth_at_most_eleven() -> None:
    stream, clock = io.StringIO(), Clock()
    task = Progress(stream=stream, clock=clock).task("verdicts", 1000)
    for number in range(1000):
        clock.now += 0.01
        task.advance(cached=number < 100, failed=number % 100 == 0)
    task.close()
    lines = stream.getvalue().splitlines()
    assert 10 <= len(lines) <= 11
    # The rate leaves the cached items out (they cost nothing).
    assert lines[0] == "verdicts: 100/1000 (10%), 0.0/s, 100 cached, 1 failed"
    assert lines[1] == "verdicts: 200/1000 (20%), 50.0/s, 16 s left, 100 cached, 2 failed"
    assert lines[-1].startswith("verdicts: 1000/1000 (100%), 90.0/s, 100 cached, 10 failed")


def test_piped_a_line_every_thirty_seconds_when_slow_or_of_unknown_length() -> None:
    stream, clock = io.StringIO(), Clock()
    task = Progress(stream=stream, clock=clock).task("requests", None)
    for _ in range(10):
        clock.now += PLAIN_INTERVAL / 2
        task.advance()
    task.close()
    assert stream.getvalue().splitlines() == [
        "requests: 2, 0.1/s, 0 cached, 0 failed",
        "requests: 4, 0.1/s, 0 cached, 0 failed",
        "requests: 6, 0.1/s, 0 cached, 0 failed",
        "requests: 8, 0.1/s, 0 cached, 0 failed",
        "requests: 10, 0.1/s, 0 cached, 0 failed",
    ]


def test_quiet_shows_nothing_and_an_empty_task_nothing_either() -> None:
    stream = io.StringIO()
    quiet = Progress(enabled=False, stream=stream).task("x", 10)
    quiet.advance(10)
    quiet.close()
    Progress(stream=stream).task("y", 0).close()
    assert stream.getvalue() == "" and quiet.done == 10


def test_on_a_terminal_a_bar_with_counts() -> None:
    leader, follower = pty.openpty()
    with os.fdopen(follower, "w", encoding="utf-8") as terminal:
        os.environ["COLUMNS"] = "120"
        try:
            task = Progress(stream=terminal).task("items", 40)
            for number in range(40):
                task.advance(cached=number < 5, failed=number == 7)
            task.close()
        finally:
            del os.environ["COLUMNS"]
    shown = read_all(leader)
    assert "40/40" in shown and "100%" in shown and "5 cached, 1 failed" in shown


def read_all(fd: int) -> str:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the terminal's other end is closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode())


def test_format_seconds() -> None:
    assert [format_seconds(s) for s in (3.2, 62, 3723)] == ["3 s", "1:02", "1:02:03"]
