"""`python -m pfgen_fast site OUT [--pfgen DIR ...] [--lctg DIR ...] [--lctg-data DIR]
[--mm DIR ...] [--mm-data TASK=DIR ...] [--judge DIR ...] [--title T]`: a static site that
opens from file:// (OUT/index.html) with no server and no network, a sortable leaderboard per
benchmark and a page per run with every item. A run's data loads when it is opened."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pfgen_fast.common.cli_args import add_task_paths_argument
from pfgen_fast.site.build import write_site
from pfgen_fast.site.data import Inputs, collect


def add_folders_argument(parser: argparse.ArgumentParser, flag: str, help: str) -> None:
    """A repeatable `DIR` option: one benchmark's results."""
    parser.add_argument(flag, type=Path, action="append", default=[], metavar="DIR", help=help)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "out",
        type=Path,
        metavar="OUT",
        help="the site's folder: new, a site written before (only its files replaced), or one "
        "holding none of the site's names (a git checkout: no index.html); nothing else touched",
    )
    add_folders_argument(
        parser, "--pfgen", "a pfgen-bench checkout or result tree (result.json files)"
    )
    add_folders_argument(parser, "--lctg", "a folder of `lctg eval --out` outputs")
    parser.add_argument(
        "--lctg-data",
        type=Path,
        metavar="DIR",
        help="LCTG Bench's files, for the prompts' texts (as `lctg eval --data`; default: "
        "where `lctg eval` finds them)",
    )
    add_folders_argument(
        parser, "--mm", "an llm-jp-eval-mm result folder (<task>/<model>/prediction.jsonl)"
    )
    add_task_paths_argument(
        parser,
        "--mm-data",
        "DIR",
        "a task's dataset for its images (a local copy in its Hub layout), instead of the "
        "folder its runs recorded",
    )
    add_folders_argument(
        parser, "--judge", "a folder of `judge pairwise --out` and `judge rank --table` outputs"
    )
    parser.add_argument("--title", default="pfgen_fast results", help="the page's title")


def run(args: argparse.Namespace) -> int:
    inputs = Inputs(args.pfgen, args.lctg, args.mm, dict(args.mm_data), args.judge, args.lctg_data)
    inputs.check()
    collected = write_site(args.out, args.title, lambda work: collect(inputs, work))
    # An input left out is an error (exit status 1); what a page lacks, a warning.
    for error in collected.warnings:
        print(f"error: {error}", file=sys.stderr)
    for notice in collected.notices:
        print(f"warning: {notice}", file=sys.stderr)
    rows = sum(len(board.rows) for board in collected.boards)
    print(f"wrote {args.out / 'index.html'}: {rows} rows, {len(collected.pages)} run pages")
    return 1 if collected.warnings else 0
