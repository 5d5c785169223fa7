"""`mm leaderboard`: the leaderboard of a result directory's evaluations."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pfgen_fast.common.cli_args import add_table_argument
from pfgen_fast.common.errors import PfgenError

# A leaderboard cell without a score: no evaluation, or a judged metric with no item judged.
NO_SCORE = "n/a"


def add_arguments(leaderboard: argparse.ArgumentParser) -> None:
    leaderboard.add_argument("result_dir", type=Path, metavar="RESULT_DIR")
    add_table_argument(leaderboard, "the leaderboard")
    leaderboard.add_argument(
        "--format",
        choices=("markdown", "latex", "csv", "json"),
        help="print make_leaderboard.py's table instead: display names, percentages, cluster "
        "deviation scores, the best bold and the second underlined (json: its leaderboard.json)",
    )
    leaderboard.add_argument(
        "--plot",
        type=Path,
        metavar="FILE",
        help="write the tasks' Spearman correlation heatmap and clustering dendrogram "
        "(.png, .svg or .pdf; needs matplotlib)",
    )


def run(args: argparse.Namespace) -> int:
    from pfgen_fast.evalmm import leaderboard

    if args.plot is not None:
        plot_format = args.plot.suffix.lstrip(".").lower()
        if plot_format not in leaderboard.PLOT_FORMATS:
            raise PfgenError(
                f"--plot {args.plot}: unsupported format {args.plot.suffix or '(no suffix)'}; "
                f"the formats: {', '.join(f'.{name}' for name in leaderboard.PLOT_FORMATS)}"
            )
    results, problems = leaderboard.find_evaluations(args.result_dir)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if args.format is None:
        show_leaderboard(results, args.table)
    else:
        board = leaderboard.make_board(results)
        sys.stdout.write(leaderboard.format_board(board, args.format))
        sys.stdout.flush()
        if args.table is not None:
            from pfgen_fast.common.tables import write_table

            rows = [[m, *row] for m, row in zip(board.models, board.values, strict=True)]
            write_table(args.table, ["Model", *board.columns], rows)
    if args.plot is not None:
        from pfgen_fast.evalmm.task_correlation import plot_task_correlation

        plot_task_correlation(leaderboard.make_board(results), args.plot)
        print(f"wrote {args.plot}", file=sys.stderr)
    return 1 if problems else 0


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
