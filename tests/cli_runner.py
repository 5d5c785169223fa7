"""Running the command line from any room's tests (a plain module, not a conftest: every room
folder may have its own conftest.py, and pytest imports each of them under the name
`conftest`).

`run_cli` runs `cli.main` in the test's own process, as `python -m pfgen_fast` would run it in
a process of its own: the output captured in the encoding and with the wide COLUMNS a pipe
gets, `cwd` and `env` applied for the call only, the process state the command touches (the
SIGTERM handler, the cycle collector, the environment, the working directory, the standard
streams) put back afterwards. `process=True` starts that process instead, for the tests that
need one of its own: signals, the exit at interpreter shutdown, the standard streams as real
pipes."""

from __future__ import annotations

import contextlib
import gc
import io
import locale
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from pfgen_fast import cli

ROOT = Path(__file__).resolve().parent.parent
# The width rich and argparse take the terminal to have: wide enough for every table.
COLUMNS = "200"
PROGRAM = [sys.executable, "-m", "pfgen_fast"]


class CommandTimedOut(BaseException):
    """The in-process command ran past its time limit (a BaseException, so that the command's
    own handlers of Exception do not take it for one of its errors)."""


def run_cli(
    *args: str | int | Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 300,
    input: bytes | None = None,  # subprocess.run's name
    process: bool = False,
) -> subprocess.CompletedProcess[str]:
    """`python -m pfgen_fast ARGS` (in `cwd`, with `env` added to the environment and `input`
    on standard input), output captured as text (wide, for the rich tables). In this process
    unless `process`; past `timeout` seconds, subprocess.TimeoutExpired either way."""
    argv = [str(arg) for arg in args]
    environment = {"COLUMNS": COLUMNS, **(env or {})}
    if process:
        done = subprocess.run(
            [*PROGRAM, *argv],
            cwd=cwd,
            input=input,
            capture_output=True,
            timeout=timeout,
            env={**os.environ, **environment},
        )
        return subprocess.CompletedProcess(
            done.args, done.returncode, text_of(done.stdout), text_of(done.stderr)
        )
    stdout, stderr = io.BytesIO(), io.BytesIO()
    with (
        environment_set(environment),
        working_directory(cwd),
        standard_streams(input or b"", stdout, stderr),
        process_state_kept(),
        time_limit(timeout, [*PROGRAM, *argv], stderr),
    ):
        try:
            status = cli.main(argv)
        except SystemExit as leaving:  # argparse's --help, --version and usage errors
            status = exit_status(leaving.code)
        sys.stdout.flush()
        sys.stderr.flush()
    return subprocess.CompletedProcess(
        [*PROGRAM, *argv], status, text_of(stdout.getvalue()), text_of(stderr.getvalue())
    )


def text_of(output: bytes) -> str:
    """Output as subprocess.run(text=True) gives it: decoded in the locale's encoding, every
    line ending a "\\n"."""
    text = output.decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


def exit_status(code: object) -> int:
    """The process's exit status for `sys.exit(code)`."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


@contextlib.contextmanager
def environment_set(changes: dict[str, str]) -> Iterator[None]:
    """os.environ with `changes`, then as it was (also where the command changed it)."""
    before = dict(os.environ)
    os.environ.update(changes)
    try:
        yield
    finally:
        for name in set(os.environ) - set(before):
            del os.environ[name]
        for name, value in before.items():
            if os.environ.get(name) != value:
                os.environ[name] = value


@contextlib.contextmanager
def working_directory(cwd: Path | None) -> Iterator[None]:
    before = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(before)


@contextlib.contextmanager
def standard_streams(data: bytes, stdout: io.BytesIO, stderr: io.BytesIO) -> Iterator[None]:
    """sys.stdin reading `data`, sys.stdout and sys.stderr writing to the two buffers, each as
    Python sets them up over a pipe; then the test's own streams."""
    encoding = locale.getpreferredencoding(False)
    streams = (sys.stdin, sys.stdout, sys.stderr)
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.BytesIO(data)), encoding=encoding)
    sys.stdout = io.TextIOWrapper(stdout, encoding=encoding)
    sys.stderr = io.TextIOWrapper(
        stderr, encoding=encoding, errors="backslashreplace", line_buffering=True
    )
    try:
        yield
    finally:
        # Detached, not closed: closing a wrapper would close the buffer read afterwards.
        for wrapper in (sys.stdin, sys.stdout, sys.stderr):
            with contextlib.suppress(ValueError):  # a wrapper the command replaced
                wrapper.flush()
                wrapper.detach()
        sys.stdin, sys.stdout, sys.stderr = streams


@contextlib.contextmanager
def process_state_kept() -> Iterator[None]:
    """The SIGTERM and SIGINT handlers and the cycle collector's state, as they were before:
    `cli.main` sets its own handler, asyncio sets SIGINT's, a command may turn the collector
    off."""
    in_main_thread = threading.current_thread() is threading.main_thread()
    handlers = {number: signal.getsignal(number) for number in (signal.SIGTERM, signal.SIGINT)}
    collecting = gc.isenabled()
    try:
        yield
    finally:
        if in_main_thread:
            for number, handler in handlers.items():
                signal.signal(number, handler)
        if collecting:
            gc.enable()
        cli.TERMINATED_LOOP.clear()
        forget_what_the_run_kept()


def forget_what_the_run_kept() -> None:
    """The package's per-process memory emptied, as a new process starts without it: the
    functools caches of its modules (a parsed file, the Hub decision) and the Hub datasets
    already said to be unpinned."""
    # Copies (atomic): a thread the command left may still be importing.
    for name, module in sys.modules.copy().items():
        if name.startswith("pfgen_fast.") and module is not None:
            for value in vars(module).copy().values():
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()
    rows = sys.modules.get("pfgen_fast.evalmm.tasks.rows")
    getattr(rows, "UNPINNED_NOTED", set()).clear()


@contextlib.contextmanager
def time_limit(seconds: float, command: list[str], stderr: io.BytesIO) -> Iterator[None]:
    """CommandTimedOut raised in the command after `seconds` (a SIGALRM timer; in the main
    thread only), turned into subprocess.TimeoutExpired as a process past its time gives."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum: int, frame: FrameType | None) -> None:
        raise CommandTimedOut

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except CommandTimedOut:
        raise subprocess.TimeoutExpired(command, seconds, stderr=stderr.getvalue()) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
