"""The command-line arguments that commands share, each declared once with one help text: the
benchmark's data directory, input paths (globs with `**`), worker threads, JSON and table
output, repeatable TASK=PATH options; and the argument types of every numeric and TASK=PATH
option. Imports neither numpy nor the compiled core."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from pfgen_fast.common.cpus import usable_cpus
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


# Argument types: each turns an option's text into its value, or refuses it with
# `'TEXT': expected WHAT`, which argparse prefixes with the option (`argument --count: '0':
# expected a whole number of at least 1`) and ends with the usage status, 2.
ArgumentType = Callable[[str], Any]


def refused(text: str, expected: str) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(f"{text!r}: expected {expected}")


def model_name(text: str) -> str:
    """An argument type: a model's name as its server knows it, not blank."""
    if not text.strip():
        raise refused(text, "a model name")
    return text


def integer(text: str) -> int:
    """An argument type: any whole number (e.g. a seed)."""
    try:
        return int(text)
    except ValueError:
        raise refused(text, "a whole number") from None


def whole_number(text: str, minimum: int) -> int:
    """`text` as a whole number of at least `minimum`, else an argparse type error."""
    try:
        value = int(text)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise refused(text, f"a whole number of at least {minimum}")
    return value


def positive_int(text: str) -> int:
    """An argument type: a whole number of at least 1."""
    return whole_number(text, 1)


def non_negative_int(text: str) -> int:
    """An argument type: a whole number of at least 0."""
    return whole_number(text, 0)


def int_from_to(low: int, high: int) -> ArgumentType:
    """An argument type: a whole number from `low` to `high`."""

    def whole_number_in_range(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise refused(text, f"a whole number from {low} to {high}")
        return value

    return whole_number_in_range


def finite_number(text: str) -> float:
    """`text` as a finite number; NaN when it is none (every comparison with NaN is false)."""
    try:
        value = float(text)
    except ValueError:
        return math.nan
    return value if math.isfinite(value) else math.nan


def positive_float(text: str) -> float:
    """An argument type: a finite number above 0 (e.g. seconds)."""
    value = finite_number(text)
    if not value > 0:
        raise refused(text, "a finite number above 0")
    return value


def non_negative_float(text: str) -> float:
    """An argument type: a finite number of at least 0 (e.g. a temperature)."""
    value = finite_number(text)
    if not value >= 0:
        raise refused(text, "a finite number of at least 0")
    return value


def fraction(text: str) -> float:
    """An argument type: a number above 0 and at most 1 (a share)."""
    value = finite_number(text)
    if not 0 < value <= 1:
        raise refused(text, "a number above 0 and at most 1")
    return value


def fraction_or_none(text: str) -> float | None:
    """An argument type: a number above 0 and at most 1, or `none` (not sent: the server's
    default)."""
    if text.lower() == "none":
        return None
    value = finite_number(text)
    if not 0 < value <= 1:
        raise refused(text, "a number above 0 and at most 1, or none")
    return value


def task_path(placeholder: str) -> ArgumentType:
    """An argument type: `TASK=PATH` (`placeholder`, FILE or DIR, names PATH in the message),
    as a (task, path) pair; `dict(args.option)` gives the paths by task."""

    def task_and_path(text: str) -> tuple[str, Path]:
        task, separator, path = text.partition("=")
        if not separator or not task or not path:
            raise refused(text, f"TASK={placeholder}")
        return task, Path(path)

    return task_and_path


def add_task_paths_argument(
    parser: argparse.ArgumentParser, flag: str, placeholder: str, help: str
) -> None:
    """A repeatable `TASK=PATH` option (`placeholder`, FILE or DIR, names PATH); `dict(args.x)`
    gives the paths by task."""
    parser.add_argument(
        flag,
        action="append",
        default=[],
        type=task_path(placeholder),
        metavar=f"TASK={placeholder}",
        help=help,
    )


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
