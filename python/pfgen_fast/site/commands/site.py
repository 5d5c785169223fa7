"""`python -m pfgen_fast site OUT [--pfgen DIR ...] [--lctg DIR ...] [--mm DIR ...]
[--mm-data TASK=DIR ...] [--judge DIR ...] [--title T]`: a static site that opens from file://
(OUT/index.html) with no server and no network, a sortable leaderboard per benchmark and a page
per run with every item. A run's data loads when it is opened."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pfgen_fast.common.cli_args import task_path
from pfgen_fast.site.build import write_site
from pfgen_fast.site.data import Inputs, collect


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "out",
        type=Path,
        metavar="OUT",
        help="the site's folder (new, empty, or a site written before: only its files replaced)",
    )
    parser.add_argument(
        "--pfgen",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="a pfgen-bench checkout or result tree (result.json files)",
    )
    parser.add_argument(
        "--lctg",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="a folder of `lctg eval --out` outputs",
    )
    parser.add_argument(
        "--mm",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="an llm-jp-eval-mm result folder (<task>/<model>/prediction.jsonl)",
    )
    parser.add_argument(
        "--mm-data",
        action="append",
        default=[],
        type=task_path("DIR"),
        metavar="TASK=DIR",
        help="a task's dataset for its images (a local copy in its Hub layout), instead of the "
        "folder its runs recorded",
    )
    parser.add_argument(
        "--judge",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="a folder of `judge pairwise --out` and `judge rank --table` outputs",
    )
    parser.add_argument("--title", default="pfgen_fast results", help="the page's title")


def run(args: argparse.Namespace) -> int:
    inputs = Inputs(args.pfgen, args.lctg, args.mm, dict(args.mm_data), args.judge)
    inputs.check()
    collected = write_site(args.out, args.title, lambda work: collect(inputs, work))
    for warning in [*collected.warnings, *collected.notices]:
        print(f"warning: {warning}", file=sys.stderr)
    rows = sum(len(board.rows) for board in collected.boards)
    print(f"wrote {args.out / 'index.html'}: {rows} rows, {len(collected.pages)} run pages")
    return 1 if collected.warnings else 0
