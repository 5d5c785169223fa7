"""`lctg leaderboard`: several evaluations side by side, and a figure per task."""

from __future__ import annotations

import argparse


def add_arguments(board: argparse.ArgumentParser) -> None:
    board.add_argument("scores", nargs="+", help="lctg-TASK-scores.json files or globs")
    board.add_argument("--out", help="write the table (.csv, .parquet or .json)")
    board.add_argument("--plots", help="folder for one figure per task (PNG and SVG)")


def run(args: argparse.Namespace) -> int:
    from pfgen_fast.lctg.leaderboard import run_leaderboard

    return run_leaderboard(args.scores, args.out, args.plots)
