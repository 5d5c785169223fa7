"""`eval`: score trials files and write result.json beside each (the benchmark's `make`)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from pfgen_fast.common.cli_args import (
    add_data_argument,
    add_jobs_argument,
    add_json_argument,
    add_paths_argument,
    input_paths,
)
from pfgen_fast.common.errors import InputError
from pfgen_fast.pfgen.data import DATA_DEFAULT, resolve_data_dir
from pfgen_fast.pfgen.evaluate import Evaluator, RunOutcome
from pfgen_fast.pfgen.exactness import add_legacy_sum_argument
from pfgen_fast.pfgen.scorer import ReferenceData

DEFAULT_PATTERN = "result/**/trials.jsonl.xz"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_paths_argument(parser, "trials files", [DEFAULT_PATTERN])
    add_data_argument(parser, DATA_DEFAULT)
    parser.add_argument("--force", action="store_true", help="re-score runs already scored")
    add_jobs_argument(parser)
    add_json_argument(parser, "the summary")
    parser.add_argument(
        "--allow-partial",
        action="store_true",
        help="score runs that lack some questions, over the questions present",
    )
    parser.add_argument(
        "--sources",
        help="comma-separated reference sources to score against (e.g. P); questions that "
        "have none of them keep their own",
    )
    add_legacy_sum_argument(parser)


def summary_row(outcome: RunOutcome) -> dict[str, Any]:
    result = outcome.result or {}
    config = result.get("config") or {}
    scores = result.get("scores") or {}
    return {
        "path": str(outcome.path),
        "status": outcome.status,
        "model": config.get("model", str(outcome.path.parent)),
        "mode": config.get("mode", ""),
        "num_trials": result.get("num_trials"),
        "score": result.get("score"),
        "score_std": result.get("score_std"),
        "length": result.get("length"),
        "fluency": round(sum(scores.get("fluency", {}).values()), 4) if scores else None,
        "truthfulness": round(sum(scores.get("truthfulness", {}).values()), 4) if scores else None,
        "helpfulness": scores.get("helpfulness"),
        "error": outcome.error,
    }


def print_table(console: Console, rows: list[dict[str, Any]]) -> None:
    table = Table(title="Evaluated runs")
    for name in ("model", "mode", "trials", "score", "length", "Fluency", "Truthfulness", "Helpf."):
        table.add_column(name, justify="left" if name in ("model", "mode") else "right")
    for row in sorted(rows, key=lambda r: -(r["score"] or 0)):
        table.add_row(
            row["model"],
            row["mode"],
            str(row["num_trials"]),
            f"{row['score']:.4f} ± {row['score_std']:.4f}",
            f"{row['length']:.1f}",
            f"{row['fluency']:.4f}",
            f"{row['truthfulness']:.4f}",
            f"{row['helpfulness']:.4f}",
        )
    console.print(table)


def run(args: argparse.Namespace) -> int:
    console = Console(stderr=True, soft_wrap=True)
    paths = input_paths(args.paths, [DEFAULT_PATTERN], console)
    if not paths:
        raise InputError(
            "no trials files to evaluate (give paths, or run inside a pfgen-bench checkout)"
        )
    references = ReferenceData.load(resolve_data_dir(args.data))
    sources = [s for s in args.sources.split(",") if s] if args.sources else None
    evaluator = Evaluator(references, sources, args.allow_partial, args.force, args.legacy_sum)

    started = time.perf_counter()
    answers_done = 0
    progress = Progress(
        TextColumn("evaluating"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("files  {task.fields[rate]}"),
        TimeElapsedColumn(),
        console=console,
        disable=args.json,
    )

    def on_done(outcome: RunOutcome) -> None:
        nonlocal answers_done
        answers_done += outcome.num_answers
        rate = answers_done / max(time.perf_counter() - started, 1e-9)
        progress.update(task, advance=1, rate=f"{rate:,.0f} answers/s")
        for warning in outcome.warnings:
            console.print(f"[yellow]warning:[/] {escape(warning)}")
        if outcome.status == "failed":
            console.print(f"[red]error:[/] {escape(outcome.error or '')}")

    with progress:
        task = progress.add_task("eval", total=len(paths), rate="")
        outcomes = evaluator.run(paths, args.jobs, on_done)

    scored = [o for o in outcomes if o.status == "scored"]
    skipped = [o for o in outcomes if o.status == "skipped"]
    failed = [o for o in outcomes if o.status == "failed"]
    rows = [summary_row(o) for o in scored]
    if args.json:
        json.dump([summary_row(o) for o in outcomes], sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    elif rows:
        print_table(Console(), rows)
    elapsed = time.perf_counter() - started
    console.print(
        f"{len(scored)} scored, {len(skipped)} already current, {len(failed)} failed "
        f"in {elapsed:.1f} s ({answers_done:,} answers)"
    )
    if failed:
        console.print(f"[red]{len(failed)} run(s) failed:[/]")
        for outcome in failed:
            console.print(f"  {outcome.error}", markup=False, highlight=False)
        return 1
    return 0
