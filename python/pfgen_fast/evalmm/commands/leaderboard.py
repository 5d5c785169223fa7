"""`mm leaderboard`: the leaderboard of a result directory's evaluations."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import PfgenError

# A leaderboard cell without a score: no evaluation, or a judged metric with no item judged.
NO_SCORE = "n/a"


def add_arguments(leaderboard: argparse.ArgumentParser) -> None:
    leaderboard.add_argument("result_dir", type=Path, metavar="RESULT_DIR")
    leaderboard.add_argument("--table", type=Path, help="also write it (.csv/.parquet/.json)")


def run(args: argparse.Namespace) -> int:
    from pfgen_fast.evalmm import leaderboard
    from pfgen_fast.evalmm.evaluate import EVALUATION

    results = {}
    for folder in sorted(args.result_dir.glob(f"*/*/{EVALUATION}")):
        results[(folder.parent.parent.name, folder.parent.name)] = leaderboard.read_evaluation(
            folder.parent
        )
    if not results:
        raise PfgenError(f"{args.result_dir}: no <task>/<model>/{EVALUATION} found")
    show_leaderboard(results, args.table)
    return 0


def show_leaderboard(results: dict[tuple[str, str], dict[str, Any]], table: Path | None) -> None:
    from pfgen_fast.common.tables import print_table, write_table
    from pfgen_fast.evalmm.leaderboard import leaderboard_rows

    if not results:
        return
    columns, rows = leaderboard_rows(results)
    shown = [[row[0], *(NO_SCORE if v is None else round(v, 4) for v in row[1:])] for row in rows]
    print_table("llm-jp-eval-mm", columns, shown)
    if table is not None:
        write_table(table, columns, rows)
