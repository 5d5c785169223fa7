"""`judge rank`: models ranked by a Bradley-Terry fit of pairwise verdicts (a tie is half a
win each), with 95 % percentile bootstrap intervals of the log strengths (none with
`--bootstrap 0`)."""

from __future__ import annotations

import argparse
from pathlib import Path

import orjson

from pfgen_fast.common.cli_args import add_table_argument, non_negative_int
from pfgen_fast.common.tables import print_table
from pfgen_fast.judge.leaderboard import Comparison, rank_models
from pfgen_fast.judge.outputs import (
    INTERVAL_COLUMNS,
    RANKING_COLUMNS,
    comparisons,
    write_ranking,
)
from pfgen_fast.judge.verdicts import METHODS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results",
        nargs="+",
        type=Path,
        metavar="RESULT",
        help="items.jsonl files of `judge pairwise --out` (or those directories), with models",
    )
    parser.add_argument(
        "--method", choices=METHODS, default="proposed", help="which verdicts (default: proposed)"
    )
    parser.add_argument(
        "--bootstrap",
        type=non_negative_int,
        default=1000,
        help="bootstrap resamples for the intervals (default: 1000; 0: none)",
    )
    add_table_argument(parser, "the ranking")
    parser.add_argument("--json", action="store_true", help="print the ranking as JSON")


def load_comparisons(paths: list[Path], method: str) -> list[Comparison]:
    """The verdicts of `method` between named models, of every items file given."""
    return [comparison for path in paths for comparison in comparisons(path, method)]


def run(args: argparse.Namespace) -> int:
    ranked = rank_models(load_comparisons(args.results, args.method), bootstrap=args.bootstrap)
    with_interval = args.bootstrap > 0
    # Without resamples there is no interval: its columns are left out, not shown as zero width.
    columns = [c for c in RANKING_COLUMNS if with_interval or c not in INTERVAL_COLUMNS]
    rows = [
        [
            n,
            r.model,
            round(r.strength, 4),
            *((round(r.low, 4), round(r.high, 4)) if with_interval else ()),
            r.wins,
            r.losses,
            r.ties,
        ]
        for n, r in enumerate(ranked, start=1)
    ]
    if args.table is not None:
        write_ranking(args.table, columns, rows)
    if args.json:
        print(orjson.dumps([dict(zip(columns, row, strict=True)) for row in rows]).decode())
    else:
        interval = ", 95 % bootstrap interval" if with_interval else ""
        title = f"Bradley-Terry log strengths ({args.method} verdicts{interval})"
        print_table(title, columns, rows)
    return 0
