"""`plot`: the paper's figures (PNG and SVG) from result.json files and their trials."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from pfgen_fast.common.cli_args import add_data_argument, add_paths_argument, input_paths
from pfgen_fast.common.errors import InputError
from pfgen_fast.pfgen.data import DATA_DEFAULT
from pfgen_fast.pfgen.exactness import add_legacy_sum_argument
from pfgen_fast.pfgen.results import load_results

DEFAULT_PATTERNS = ["result/**/result.json", "data/**/result.json"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_paths_argument(parser, "result.json files", DEFAULT_PATTERNS)
    parser.add_argument("--out", type=Path, required=True, help="directory for the figures")
    add_data_argument(parser, DATA_DEFAULT)
    parser.add_argument(
        "--no-stability",
        action="store_true",
        help="skip Fig. 4-6 (they score every run's trials three more times)",
    )
    add_legacy_sum_argument(parser)


def run(args: argparse.Namespace) -> int:
    from pfgen_fast.pfgen import plots

    console = Console(stderr=True, soft_wrap=True)
    paths = input_paths(args.paths, DEFAULT_PATTERNS, console)
    runs, errors = load_results(paths)
    for error in errors:
        console.print(f"[red]error:[/] {escape(error)}")
    if not runs:
        raise InputError("no readable result.json files to plot")
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f"{args.out}: cannot create: {error.strerror}") from None
    points = [plots.run_point(run, args.legacy_sum) for run in runs]
    written = plots.measure_figures(points, args.out) + plots.length_figure(points, args.out)
    if not args.no_stability:
        from pfgen_fast.pfgen.data import resolve_data_dir
        from pfgen_fast.pfgen.scorer import ReferenceData
        from pfgen_fast.pfgen.stability import source_scores

        references = ReferenceData.load(resolve_data_dir(args.data))
        scored_runs = [run.path for run in runs if run.mode != "system"]
        result = source_scores(scored_runs, references, console, args.legacy_sum)
        kinds = [plots.kind_of(run.mode) for run in result.runs]
        written += plots.stability_figures(kinds, result.scores, args.out)
        for (a, b), r in result.pearson().items():
            print(f"{a} vs {b}: r = {r:.5f}")
    console.print(f"{len(written)} files written to {args.out}")
    return 1 if errors else 0
