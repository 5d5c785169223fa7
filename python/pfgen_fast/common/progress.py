"""Progress of the long commands (`generate`, `eval`, `lctg generate|eval`, `mm run`, `judge
pairwise|pointwise`), on stderr, in one shape for all.

Each step of a command is a task with a label and a total (None when unknown), advanced item
by item, with the items taken from a cache and those that failed counted apart.
* On a terminal: a live bar per task (rich): items done/total, percentage, rate, time left,
  cached and failed counts; the finished bar stays on the screen.
* Piped (a log file, CI): a plain line each time the task passes a further tenth of its total
  or 30 s after the last line, so a task writes at most 11 lines whatever its length.
* `--quiet` (`add_quiet_argument`, shared by every such command) turns it off.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeRemainingColumn,
)
from rich.progress import Progress as RichProgress

# The longest time between two plain lines of a piped task, in seconds.
PLAIN_INTERVAL = 30.0
# Plain lines come at each further tenth of a task's total.
PLAIN_STEPS = 10


def add_quiet_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--quiet", action="store_true", help="no progress on stderr (errors and summaries stay)"
    )


def progress_from_args(args: argparse.Namespace) -> Progress:
    """The progress of a command with `--quiet` (`add_quiet_argument`)."""
    return Progress(enabled=not getattr(args, "quiet", False))


class Progress:
    """Where a command's tasks show their progress: `task(label, total)`."""

    def __init__(
        self,
        *,
        enabled: bool = True,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.enabled = enabled
        self.stream = stream
        self.clock = clock

    def task(self, label: str, total: int | None) -> ProgressTask:
        """A task shown until its `close`."""
        stream = self.stream if self.stream is not None else sys.stderr
        if not self.enabled:
            return ProgressTask(label, total, self.clock)
        if stream.isatty():
            return BarTask(label, total, self.clock, stream)
        return PlainTask(label, total, self.clock, stream)


class ProgressTask:
    """A task's counts; shown by its subclasses (this one shows nothing: `--quiet`)."""

    def __init__(self, label: str, total: int | None, clock: Callable[[], float]) -> None:
        self.label = label
        self.total = total
        self.clock = clock
        self.started = clock()
        self.done = 0
        self.cached = 0
        self.failed = 0

    def advance(self, count: int = 1, *, cached: bool = False, failed: bool = False) -> None:
        self.done += count
        self.cached += count if cached else 0
        self.failed += count if failed else 0
        self.show()

    def set_total(self, total: int | None) -> None:
        self.total = total
        self.show()

    def show(self) -> None:
        pass

    def close(self) -> None:
        pass

    def rate(self) -> float:
        """Items per second, the cached ones left out (they cost nothing)."""
        elapsed = self.clock() - self.started
        return (self.done - self.cached) / elapsed if elapsed > 0 else 0.0

    def counts(self) -> str:
        return f"{self.cached} cached, {self.failed} failed"


class PlainTask(ProgressTask):
    """A line per further tenth of the total or per PLAIN_INTERVAL."""

    def __init__(
        self, label: str, total: int | None, clock: Callable[[], float], stream: TextIO
    ) -> None:
        super().__init__(label, total, clock)
        self.stream = stream
        self.shown_step = 0
        self.shown_at = self.started
        self.shown_done = -1

    def show(self) -> None:
        now = self.clock()
        step = self.step()
        if step > self.shown_step or now - self.shown_at >= PLAIN_INTERVAL:
            self.shown_step = max(step, self.shown_step)
            self.shown_at = now
            self.write()

    def step(self) -> int:
        if not self.total:
            return 0
        return min(self.done, self.total) * PLAIN_STEPS // self.total

    def close(self) -> None:
        if self.done and self.done != self.shown_done:
            self.write()

    def write(self) -> None:
        self.shown_done = self.done
        if self.total:
            percent = 100 * min(self.done, self.total) // self.total
            where = f"{self.done}/{self.total} ({percent}%)"
        else:
            where = f"{self.done}"
        rate = self.rate()
        left = ""
        if self.total and rate > 0 and self.done < self.total:
            left = f", {format_seconds((self.total - self.done) / rate)} left"
        line = f"{self.label}: {where}, {rate:.1f}/s{left}, {self.counts()}\n"
        self.stream.write(line)
        self.stream.flush()


class BarTask(ProgressTask):
    """A live bar (rich) on a terminal."""

    def __init__(
        self, label: str, total: int | None, clock: Callable[[], float], stream: TextIO
    ) -> None:
        super().__init__(label, total, clock)
        self.bar = RichProgress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[counts]}"),
            console=Console(file=stream),
            get_time=clock,
        )
        self.id: TaskID = self.bar.add_task(label, total=total, rate="", counts=self.counts())
        self.bar.start()

    def show(self) -> None:
        self.bar.update(
            self.id,
            completed=self.done,
            total=self.total,
            rate=f"{self.rate():.1f}/s",
            counts=self.counts(),
        )

    def close(self) -> None:
        self.show()
        self.bar.stop()


def format_seconds(seconds: float) -> str:
    """`1:02:03`, `2:03` or `3 s`."""
    whole = int(seconds + 0.5)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    if minutes:
        return f"{minutes}:{secs:02d}"
    return f"{secs} s"
