"""`python -m pfgen_fast COMMAND ...`: pfgen-bench's commands (one module each in
`pfgen_fast.pfgen.commands`), and one command per other benchmark room (`lctg`, `mm`, `judge`),
whose own subcommands its `cli` module declares."""

from __future__ import annotations

import argparse
import errno
import gc
import importlib
import io
import os
import shlex
import signal
import sys
import threading
import traceback
from typing import Any, NoReturn

from pfgen_fast import __version__
from pfgen_fast.common.errors import PfgenError

# Subcommand name -> (module in pfgen_fast.pfgen.commands, one-line help). Modules are imported
# only when their command runs, so `score` does not pay for plotting or HTTP imports.
COMMANDS: dict[str, tuple[str, str]] = {
    "score": ("score", "score JSON lines of answers (question, answer) against the reference data"),
    "eval": (
        "eval",
        "evaluate trials files and write result.json beside each (the benchmark's make)",
    ),
    "data": ("data", "fetch the published benchmark data or verify a data directory"),
    "prompt": ("prompt", "print the published prompt of every question for one trial"),
    "generate": ("generate", "generate trials with a model server, with the published protocol"),
    "build-refs": (
        "build_refs",
        "build reference answer sets (Qxx.json) from generated candidates, with a step report",
    ),
    "synth": ("synth", "write synthetic candidate answers to one question (for benchmarks)"),
    "report": (
        "report",
        "write README.md beside each result.json, the leaderboard into a README, exports",
    ),
    "plot": ("plot", "draw the paper's figures (PNG and SVG) from result.json files"),
    "stability": (
        "stability",
        "score every run with one reference source at a time and print Pearson r per pair",
    ),
}


# Room command -> (its cli module, one-line help). A room's cli module has `DESCRIPTION`,
# `add_arguments(parser)` (its subcommands) and `run(args) -> int`.
ROOMS: dict[str, tuple[str, str]] = {
    "lctg": ("pfgen_fast.lctg.cli", "LCTG Bench: controllability of generation (CyberAgent)"),
    "mm": ("pfgen_fast.evalmm.cli", "llm-jp-eval-mm's scorers (Japanese vision-language tasks)"),
    "judge": ("pfgen_fast.judge.cli", "pairwise LLM-as-a-judge with verdict probabilities"),
}


# Commands that read large trees of parsed JSON (trials, results, reference answers) and make
# next to no reference cycles: Python's cyclic collector would walk those growing trees again
# and again (a quarter of a second of an evaluation of 66 runs), so it is off while they run.
WITHOUT_CYCLE_COLLECTOR = {"score", "eval", "report", "plot", "stability"}


DESCRIPTION = """\
Exact, fast evaluation of Japanese text generation: pfgen-bench's commands, and one command per
other benchmark (lctg, mm, judge). `python -m pfgen_fast COMMAND --help` lists a command's
options."""
EXIT_STATUS = """\
exit status: 0 every input used and every output written; 1 an error (named on stderr), also
when the other inputs were processed; 130 SIGINT, 143 SIGTERM; 141 standard output closed."""

# Where unexpected failures are to be reported: the package's "Issues" project URL when its
# metadata has one.
TRACKER_LABELS = ("issues", "bug tracker", "tracker")
EXIT_ERROR = 1
EXIT_INTERRUPTED = 130
EXIT_OUTPUT_CLOSED = 141
EXIT_TERMINATED = 143


class ArgumentParser(argparse.ArgumentParser):
    """Usage errors are errors like the others: one line, exit status 1."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_ERROR, f"error: {message} (see {self.prog} --help)\n")


class Terminated(BaseException):
    """SIGTERM, raised in the main thread as SIGINT raises KeyboardInterrupt, so that the same
    clean-up runs (temporary files and spill folders removed)."""


class OutputClosed(Exception):
    """The reader of standard output went away (a closed pipe)."""


class StandardOutput(io.RawIOBase):
    """File descriptor 1, with its failures told apart from those of the files a command reads
    and writes: a closed pipe raises OutputClosed, any other failure a PfgenError naming
    standard output. After a failure the rest is discarded, so that nothing fails again at
    exit."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd = fd
        self.failed = False

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.fd

    def isatty(self) -> bool:
        return os.isatty(self.fd)

    def write(self, data: bytes) -> int:  # type: ignore[override]
        if self.failed:
            return len(memoryview(data))
        try:
            return os.write(self.fd, data)
        except OSError as error:
            self.failed = True
            if error.errno == errno.EPIPE:
                raise OutputClosed from None
            raise PfgenError(f"standard output: cannot write: {error.strerror}") from None


def guard_standard_output() -> None:
    """Replaces sys.stdout by the same stream over StandardOutput."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (captured by a test harness): left as it is
    old = sys.stdout
    buffer = io.BufferedWriter(StandardOutput(fd))
    sys.stdout = io.TextIOWrapper(
        buffer,
        encoding=old.encoding,
        errors=old.errors,
        line_buffering=buffer.isatty(),
        write_through=False,
    )


# Set when SIGTERM stopped an event loop by cancelling its tasks (see `on_sigterm`).
TERMINATED_LOOP = threading.Event()


def running_loop() -> Any:
    """The asyncio event loop running in this thread, if any (asyncio is not imported for it:
    a command that never imported it runs no loop)."""
    # Absent also while asyncio is being imported (the signal may come then).
    get_running_loop = getattr(sys.modules.get("asyncio"), "get_running_loop", None)
    if get_running_loop is None:
        return None
    try:
        return get_running_loop()
    except RuntimeError:
        return None


def on_sigterm(signum: int, frame: object) -> None:
    """Raises Terminated; inside a running event loop (the model-calling commands), where the
    loop's own callbacks would log and drop the exception and task groups would wrap it, the
    loop's tasks are cancelled instead, as asyncio.run does on SIGINT: the CancelledError
    that ends the loop then ends the command as terminated."""
    loop = running_loop()
    if loop is None:
        raise Terminated
    import asyncio

    TERMINATED_LOOP.set()
    for task in asyncio.all_tasks(loop):
        task.cancel()
    loop.call_soon_threadsafe(lambda: None)  # wakes the loop from its wait


def issue_tracker() -> str:
    """The address to report bugs to (from the package metadata), or what to look for."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        urls = metadata("pfgen_fast").get_all("Project-URL") or []
    except PackageNotFoundError:
        urls = []
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() in TRACKER_LABELS:
            return url.strip()
    return "the pfgen_fast issue tracker"


def unexpected(error: BaseException, argv: list[str]) -> str:
    """The one line for an exception that is a bug: the command line that met it, the error,
    and where to report it."""
    command = " ".join(["python -m pfgen_fast", shlex.join(argv)])
    if len(command) > 200:
        command = command[:197] + "..."
    detail = str(error).splitlines()[0] if str(error) else ""
    kind = type(error).__name__ + (f": {detail}" if detail else "")
    return (
        f"error: unexpected {kind} in `{command}`. This is a bug in pfgen_fast: please report "
        f"it to {issue_tracker()} with this line (add --debug for the traceback)"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="python -m pfgen_fast",
        description=DESCRIPTION,
        epilog=EXIT_STATUS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"pfgen_fast {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an unexpected error"
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(_module=f"pfgen_fast.pfgen.commands.{module_name}")
    for name, (module_name, help_text) in ROOMS.items():
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(_module=module_name)
    return parser


def dispatch(argv: list[str]) -> int:
    """Parses the command line and runs the command."""
    parser = build_parser()
    if not argv:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    # Parse the command name first, then let its module declare its own arguments.
    known, _ = parser.parse_known_args(argv[:1] if not argv[0].startswith("-") else argv)
    module = importlib.import_module(known._module)
    description = getattr(module, "DESCRIPTION", None) or {**COMMANDS, **ROOMS}[known.command][1]
    sub = ArgumentParser(prog=f"python -m pfgen_fast {known.command}", description=description)
    module.add_arguments(sub)
    args = sub.parse_args(argv[argv.index(known.command) + 1 :])
    if known.command in WITHOUT_CYCLE_COLLECTOR:
        gc.disable()
    status = int(module.run(args) or 0)
    sys.stdout.flush()
    return status


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # --debug is taken anywhere before a `--` (users add it at the end of a failed command).
    options = argv[: argv.index("--")] if "--" in argv else argv
    debug = "--debug" in options
    if debug:
        argv.remove("--debug")
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous_handler = signal.getsignal(signal.SIGTERM) if in_main_thread else None
    previous_stdout = sys.stdout
    try:
        if in_main_thread:
            signal.signal(signal.SIGTERM, on_sigterm)
        guard_standard_output()
        return run_guarded(argv, debug)
    except Terminated:  # between the handler and the command, or while an error is shown
        print("terminated", file=sys.stderr)
        return EXIT_TERMINATED
    finally:
        # What is left of the output (after an error), then the caller's stream and handler back.
        try:
            sys.stdout.flush()
        except (OutputClosed, PfgenError):
            pass
        sys.stdout = previous_stdout
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous_handler)


def run_guarded(argv: list[str], debug: bool) -> int:
    """The command's exit status, every way it can end turned into one (see EXIT_STATUS)."""
    try:
        return dispatch(argv)
    except PfgenError as error:
        if debug:
            traceback.print_exc()
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated:
        print("terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except OutputClosed:
        return EXIT_OUTPUT_CLOSED
    except Exception as error:
        if debug:
            traceback.print_exc()
        print(unexpected(error, argv), file=sys.stderr)
        return EXIT_ERROR
    except BaseException as error:  # asyncio's CancelledError is not an Exception
        asyncio = sys.modules.get("asyncio")
        if asyncio is None or not TERMINATED_LOOP.is_set():
            raise
        if not isinstance(error, asyncio.CancelledError):
            raise
        print("terminated", file=sys.stderr)
        return EXIT_TERMINATED
