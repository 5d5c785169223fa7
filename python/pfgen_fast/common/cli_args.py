"""The command-line arguments that commands share, each declared once with one help text: the
benchmark's data directory, input paths (globs with `**`), worker threads and JSON output; and
the argument types for counts and durations. Imports neither numpy nor the compiled core."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from pfgen_fast.common.cpus import usable_cpus
from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.files import expand_paths


def add_data_argument(parser: argparse.ArgumentParser, default: str) -> None:
    """`--data DIR`; `default` says where the data is found without it."""
    parser.add_argument(
        "--data", metavar="DIR", help=f"the benchmark's data directory (default: {default})"
    )


def add_paths_argument(parser: argparse.ArgumentParser, what: str, defaults: Sequence[str]) -> None:
    """`PATH ...`: files (`what`, e.g. "result.json files") or glob patterns, with defaults."""
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help=f"{what} or glob patterns with ** (quote them); default: {' '.join(defaults)}",
    )


def input_paths(patterns: list[str], defaults: Sequence[str], console: Console) -> list[Path]:
    """The files the patterns name (the defaults when none is given); a warning on `console`
    for each given pattern that matches nothing (a default that matches nothing is silent)."""
    paths, unmatched = expand_paths(patterns or list(defaults))
    if patterns:
        for pattern in unmatched:
            console.print(f"[yellow]warning:[/] nothing matches {escape(pattern)}")
    return paths


def whole_number(text: str, minimum: int) -> int:
    """`text` as a whole number of at least `minimum`, else an argparse type error."""
    try:
        value = int(text)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number of at least {minimum}")
    return value


def positive_int(text: str) -> int:
    """An argument type: a whole number of at least 1."""
    return whole_number(text, 1)


def non_negative_int(text: str) -> int:
    """An argument type: a whole number of at least 0."""
    return whole_number(text, 0)


def positive_float(text: str) -> float:
    """An argument type: a finite number above 0 (e.g. seconds)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value > 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"{text!r}: expected a finite number above 0")
    return value


def non_negative_float(text: str) -> float:
    """An argument type: a finite number of at least 0 (e.g. a temperature)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value >= 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"{text!r}: expected a finite number of at least 0")
    return value


def paths_by_task(values: list[str], option: str, placeholder: str) -> dict[str, Path]:
    """`TASK=PATH` values of a repeated option, by task; a value of another form is an error
    naming the option and the form (`placeholder`: FILE or DIR)."""
    paths = {}
    for value in values:
        task, separator, path = value.partition("=")
        if not separator or not task or not path:
            raise PfgenError(f"{option} {value!r}: expected TASK={placeholder}")
        paths[task] = Path(path)
    return paths


def add_jobs_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--jobs",
        type=positive_int,
        default=usable_cpus(),
        help="worker threads (default: the CPUs this process may use)",
    )


def add_json_argument(parser: argparse.ArgumentParser, what: str) -> None:
    """`--json`: print `what` (e.g. "the summary") as JSON instead of a table."""
    parser.add_argument("--json", action="store_true", help=f"print {what} as JSON")


def add_table_argument(parser: argparse.ArgumentParser, what: str) -> None:
    """`--table FILE`: also write `what` (the table printed) as .csv, .parquet or .json. Output
    options have one meaning each across the commands: `--out` is where a command's own output
    goes, `--table` an export of the table it prints."""
    parser.add_argument(
        "--table", type=Path, metavar="FILE", help=f"also write {what} (.csv, .parquet or .json)"
    )
