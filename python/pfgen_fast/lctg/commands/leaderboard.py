"""`lctg leaderboard`: several evaluations side by side, and a figure per task."""

from __future__ import annotations

import argparse

from pfgen_fast.common.cli_args import add_table_argument


def add_arguments(board: argparse.ArgumentParser) -> None:
    board.add_argument("scores", nargs="+", help="lctg-TASK-scores.json files or globs")
    add_table_argument(board, "the table")
    board.add_argument("--plots", help="folder for one figure per task (PNG and SVG)")


def run(args: argparse.Namespace) -> int:
    from pfgen_fast.lctg.leaderboard import run_leaderboard

    return run_leaderboard(args.scores, args.table, args.plots)
