"""`report`: README.md beside each result.json, the leaderboard in a README, table exports."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from pfgen_fast.common.cli_args import (
    add_data_argument,
    add_paths_argument,
    input_paths,
)
from pfgen_fast.common.errors import InputError, PfgenError, UsageError
from pfgen_fast.common.files import read_bytes, write_atomically
from pfgen_fast.pfgen.data import DATA_DEFAULT, load_questions, resolve_data_dir
from pfgen_fast.pfgen.exactness import add_legacy_sum_argument
from pfgen_fast.pfgen.leaderboard import (
    export_bytes,
    markdown_table,
    print_leaderboard,
    rank_runs,
    replace_table,
)
from pfgen_fast.pfgen.pages import SampleCoverage, page_is_current, render_page
from pfgen_fast.pfgen.results import RunResult, load_results

DEFAULT_PATTERNS = ["result/**/result.json", "data/**/result.json"]
FORMATS = ("csv", "parquet", "json")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_paths_argument(parser, "result.json files", DEFAULT_PATTERNS)
    add_data_argument(parser, DATA_DEFAULT)
    parser.add_argument(
        "--readme", type=Path, help="README.md whose leaderboard (between the markers) to replace"
    )
    parser.add_argument("--format", choices=FORMATS, help="export the leaderboard (with --table)")
    parser.add_argument(
        "--table", type=Path, metavar="FILE", help="file to export the leaderboard to"
    )
    parser.add_argument("--force", action="store_true", help="rewrite pages already current")
    add_legacy_sum_argument(parser)


def write_pages(runs: list[RunResult], args: argparse.Namespace, console: Console) -> int:
    """Writes the README.md of every run whose page is not current; returns the failures."""
    data_arg, force = args.data, args.force
    stale = [r for r in runs if force or not page_is_current(r.path.parent / "README.md", r.sha1)]
    if not stale:
        console.print(f"{len(runs)} page(s) already current")
        return 0
    needed = {qid for run in stale for qid in run.data["questions"]}
    coverage = SampleCoverage(stale, load_questions(resolve_data_dir(data_arg), needed))
    failures = 0
    for run in stale:
        readme = run.path.parent / "README.md"
        try:
            page = render_page(run, coverage, args.legacy_sum)
            write_atomically(readme, page.encode())
        except PfgenError as error:  # write_atomically's WriteError included
            console.print(f"[red]error:[/] {escape(str(error))}")
            failures += 1
    written = len(stale) - failures
    console.print(f"{written} page(s) written, {len(runs) - len(stale)} already current")
    return failures


def update_readme(readme: Path, runs: list[RunResult], legacy_sum: bool) -> None:
    try:
        text = read_bytes(readme).decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{readme}: not UTF-8 text: {error}") from None
    table = markdown_table(rank_runs(runs, legacy_sum), readme.parent)
    updated = replace_table(text, table, readme)
    if updated != text:
        write_atomically(readme, updated.encode())


def run(args: argparse.Namespace) -> int:
    console = Console(stderr=True, soft_wrap=True)
    if (args.format is None) != (args.table is None):
        raise UsageError("--format and --table go together")
    paths = input_paths(args.paths, DEFAULT_PATTERNS, console)
    if not paths:
        raise InputError("no result.json files (give paths, or run inside a pfgen-bench checkout)")
    runs, errors = load_results(paths)
    for error in errors:
        console.print(f"[red]error:[/] {escape(error)}")
    failures = len(errors)
    if runs:
        failures += write_pages(runs, args, console)
        if args.readme is not None:
            update_readme(args.readme, runs, args.legacy_sum)
        entries = rank_runs(runs, args.legacy_sum)
        if args.table is not None:
            write_atomically(args.table, export_bytes(entries, args.format))
        print_leaderboard(entries)
    if failures:
        console.print(f"[red]{failures} result(s) failed[/]")
        return 1
    return 0
