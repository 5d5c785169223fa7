"""`python -m pfgen_fast COMMAND ...`: the commands every benchmark room declares in its `cli`
module (a `ROOM`, see common/rooms.py): pfgen-bench's at the top level, each other room's under
its own word (`lctg`, `mm`, `judge`)."""

from __future__ import annotations

import argparse
import codecs
import errno
import gc
import importlib
import io
import os
import shlex
import shutil
import signal
import sys
import textwrap
import threading
import traceback
from typing import TYPE_CHECKING, Any, NoReturn

from pfgen_fast import __version__
from pfgen_fast.common.errors import PfgenError, UsageError
from pfgen_fast.common.rooms import Command, Room
from pfgen_fast.common.termination import deliver_again_soon, importing, running_in

if TYPE_CHECKING:
    from types import FrameType

    from _typeshed import ReadableBuffer

# The rooms' cli modules, each holding its ROOM. They import nothing heavy: a command's own
# module is imported only when that command runs, so `score` does not pay for plotting or HTTP.
ROOMS = (
    "pfgen_fast.pfgen.cli",
    "pfgen_fast.lctg.cli",
    "pfgen_fast.evalmm.cli",
    "pfgen_fast.judge.cli",
    "pfgen_fast.site.cli",
)


DESCRIPTION = """\
Exact, fast evaluation of Japanese text generation: pfgen-bench's commands (scoring, running a
model, reports), and one command per other benchmark: lctg (LCTG Bench), mm (llm-jp-eval-mm:
vision-language models run on its tasks, its scorers, its leaderboard), judge (LLM-as-a-judge).
`python -m pfgen_fast COMMAND --help` lists a command's options."""
EXIT_STATUS = """\
exit status: 0 every input used and every output written; 1 an error (named on stderr), also
when the other inputs were processed; 2 a usage error (an option or argument refused before
anything ran); 130 SIGINT, 143 SIGTERM; 141 standard output closed."""

# Where unexpected failures are to be reported: the package's "Issues" project URL when its
# metadata has one.
TRACKER_LABELS = ("issues", "bug tracker", "tracker")
# Where the help of a command starts in the listing of `--help`.
HELP_COLUMN = 16
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_OUTPUT_CLOSED = 141
EXIT_TERMINATED = 143
# The name of standard output's encoding error handler (`escape_unencodable`).
OUTPUT_ERRORS = "pfgen_fast.escape"


class ArgumentParser(argparse.ArgumentParser):
    """Usage errors: one line, exit status 2 (argparse's own status, without the usage text)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"error: {message} (see {self.prog} --help)\n")


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

    def write(self, data: ReadableBuffer) -> int:
        if self.failed:
            return len(memoryview(data))
        try:
            return os.write(self.fd, data)
        except OSError as error:
            self.failed = True
            if error.errno == errno.EPIPE:
                raise OutputClosed from None
            raise PfgenError(f"standard output: cannot write: {error.strerror}") from None


def escape_unencodable(error: UnicodeError) -> tuple[str | bytes, int]:
    """The error handler of standard output: bytes that came in undecodable (a file name in
    the C locale, held as surrogates) go out as they came, every other character the encoding
    lacks (ASCII: `LC_ALL=C`, `PYTHONIOENCODING=ascii`) as a backslash escape, as Python's
    standard error writes it."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    chunk = error.object[error.start : error.end]
    if all(0xDC80 <= ord(character) <= 0xDCFF for character in chunk):
        return bytes(ord(character) - 0xDC00 for character in chunk), error.end
    return codecs.backslashreplace_errors(error)


codecs.register_error(OUTPUT_ERRORS, escape_unencodable)


def guard_standard_output() -> None:
    """Replaces sys.stdout by the same stream over StandardOutput, writing what its encoding
    cannot hold as `escape_unencodable` says."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (captured by a test harness): left as it is
    old = sys.stdout
    buffer = io.BufferedWriter(StandardOutput(fd))
    sys.stdout = io.TextIOWrapper(
        buffer,
        encoding=old.encoding,
        errors=OUTPUT_ERRORS,
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


def inside_asyncio(frame: FrameType | None) -> bool:
    """Whether the interrupted code runs inside asyncio itself. With no loop running, that is
    a loop being made or closed (`asyncio.run`): an exception there leaves a half-made loop
    and the coroutine it was to run never awaited."""
    asyncio = sys.modules.get("asyncio")
    location = getattr(asyncio, "__file__", None)
    if location is None:
        return False
    return running_in(frame, os.path.dirname(location) + os.sep)


def cancel_every_task(loop: Any) -> None:
    """Cancels every task of the loop that has taken its first step. One that has not is
    left to the task group that spawned it, which cancels it once it has started (anyio's
    groups wait so too): a task cancelled before its first step never runs its coroutine, and
    a wrapped one (anyio's TaskHandle) leaves the coroutine it wraps never awaited, a
    RuntimeWarning at exit."""
    import asyncio
    import inspect

    for task in asyncio.all_tasks(loop):
        coroutine = task.get_coro()
        if not inspect.iscoroutine(coroutine) or (
            inspect.getcoroutinestate(coroutine) != inspect.CORO_CREATED
        ):
            task.cancel()


def on_sigterm(signum: int, frame: FrameType | None) -> None:
    """Raises Terminated; inside a running event loop (the model-calling commands), where the
    loop's own callbacks would log and drop the exception and task groups would wrap it, the
    loop's tasks are cancelled instead, as asyncio.run does on SIGINT: the CancelledError
    that ends the loop then ends the command as terminated. The cancelling is a callback of
    the loop, not done in the handler, and leaves tasks that have not started to their groups
    (see `cancel_every_task`). During an import, where the exception could be dropped or
    crash a compiled module, and while asyncio makes or closes a loop, the signal comes again
    a moment later."""
    if importing(frame):
        deliver_again_soon()
        return
    loop = running_loop()
    if loop is None:
        if inside_asyncio(frame):
            deliver_again_soon()
            return
        raise Terminated
    TERMINATED_LOOP.set()
    loop.call_soon_threadsafe(cancel_every_task, loop)


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


def rooms() -> list[Room]:
    return [importlib.import_module(name).ROOM for name in ROOMS]


def commands_help(all_rooms: list[Room]) -> str:
    """The commands, room by room: a top-level room's help, then its commands indented; a room
    under its own word, the word and the room's help."""
    width = max(shutil.get_terminal_size().columns - 2, 60)
    lines = ["commands:"]

    def entry(name: str, text: str, indent: str) -> None:
        lead = f"{indent}{name:<{HELP_COLUMN - len(indent) - 2}}  "
        wrapped = textwrap.wrap(text, width - len(lead)) or [""]
        lines.append(lead + wrapped[0])
        lines.extend(" " * len(lead) + rest for rest in wrapped[1:])

    for room in all_rooms:
        if room.word is None:
            lines.append(f"  {room.help}")
            for command in room.commands:
                entry(command.name, command.help, "    ")
        else:
            entry(room.word, room.help, "  ")
    return "\n".join(lines)


def build_parser(argv: list[str]) -> tuple[argparse.ArgumentParser, Command | None]:
    """The parser of every room's commands, with the arguments of the command that `argv`
    names, if it names one; and that command."""
    all_rooms = rooms()
    parser = ArgumentParser(
        prog="python -m pfgen_fast",
        usage="%(prog)s [-h] [--version] [--debug] COMMAND ...",
        description=DESCRIPTION,
        epilog=f"{commands_help(all_rooms)}\n\n{EXIT_STATUS}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"pfgen_fast {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an unexpected error"
    )
    # The commands are listed room by room in the epilog (commands_help).
    top = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", help=argparse.SUPPRESS, prog=parser.prog
    )
    chosen = None
    for room in all_rooms:
        if room.word is None:
            chosen = add_commands(top, room.commands, argv[:1]) or chosen
            continue
        sub = top.add_parser(room.word, help=room.help, description=room.help)
        if argv[:1] == [room.word]:
            inner = sub.add_subparsers(dest="room_command", required=True, metavar="COMMAND")
            chosen = add_commands(inner, room.commands, argv[1:2])
    return parser, chosen


def add_commands(subparsers: Any, commands: tuple[Command, ...], word: list[str]) -> Command | None:
    """A parser for each command, with its arguments for the one `word` names; that one."""
    chosen = None
    for command in commands:
        sub = subparsers.add_parser(command.name, help=command.help, description=command.help)
        if word == [command.name]:
            command.load().add_arguments(sub)
            chosen = command
    return chosen


def dispatch(argv: list[str]) -> int:
    """Parses the command line and runs the command."""
    parser, command = build_parser(argv)
    if not argv:  # no command: the list of them
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    args = parser.parse_args(argv)
    if command is None:  # parse_args has already refused a line that names none
        parser.error("no command")
    if command.without_cycle_collector:
        gc.disable()
    try:
        status = int(command.load().run(args) or 0)
    except UsageError as error:  # worded as the parser's own usage errors
        words = [args.command, *([args.room_command] if "room_command" in args else [])]
        print(f"error: {error} (see {parser.prog} {' '.join(words)} --help)", file=sys.stderr)
        return EXIT_USAGE
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
