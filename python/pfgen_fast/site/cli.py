"""`python -m pfgen_fast site OUT [--pfgen DIR ...] [--lctg DIR ...] [--mm DIR ...]
[--mm-data TASK=DIR ...] [--judge DIR ...] [--title T]`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.site.build import write_site
from pfgen_fast.site.figures import draw_figures
from pfgen_fast.site.judge_runs import collect_judge
from pfgen_fast.site.lctg_runs import collect_lctg
from pfgen_fast.site.mm_runs import collect_mm
from pfgen_fast.site.model import Collected
from pfgen_fast.site.pfgen_runs import collect_pfgen

DESCRIPTION = """\
Write a static site into OUT: a sortable leaderboard per benchmark and a page per run with
every item, that opens from file:// (OUT/index.html) with no server and no network. A run's
data loads when it is opened. Inputs are what pfgen_fast's commands write."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", type=Path, metavar="OUT", help="the site's folder (replaced)")
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
        metavar="TASK=DIR",
        help="a task's dataset (a local Hub-layout folder of parquet files) for its images",
    )
    parser.add_argument(
        "--judge",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="a folder of `judge pairwise --out` and `judge rank --out` outputs",
    )
    parser.add_argument("--title", default="pfgen_fast results", help="the page's title")


def mm_data(values: list[str]) -> dict[str, Path]:
    found = {}
    for value in values:
        task, separator, folder = value.partition("=")
        if not separator or not task or not folder:
            raise PfgenError(f"--mm-data {value}: expected TASK=DIR")
        found[task] = Path(folder)
    return found


def run(args: argparse.Namespace) -> int:
    inputs = [*args.pfgen, *args.lctg, *args.mm, *args.judge]
    if not inputs:
        raise PfgenError("site: give at least one input (--pfgen, --lctg, --mm or --judge)")
    missing = [str(p) for p in inputs if not p.exists()]
    if missing:
        raise PfgenError(f"{missing[0]}: no such file or folder")
    data = mm_data(args.mm_data)

    def fill(work: Path) -> Collected:
        collected = Collected()
        collect_pfgen(args.pfgen, collected)
        if args.pfgen and collected.boards:
            draw_figures(args.pfgen, work, collected)
        collect_lctg(args.lctg, collected)
        collect_mm(args.mm, data, work, collected)
        collect_judge(args.judge, collected)
        if not collected.boards:
            raise PfgenError("; ".join(collected.warnings) + " (site not written)")
        return collected

    collected = write_site(args.out, args.title, fill)
    for warning in collected.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    rows = sum(len(board.rows) for board in collected.boards)
    print(f"wrote {args.out / 'index.html'}: {rows} rows, {len(collected.pages)} run pages")
    return 1 if collected.warnings else 0
