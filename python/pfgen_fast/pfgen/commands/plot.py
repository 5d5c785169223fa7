"""`plot`: the paper's figures (PNG and SVG) from result.json files."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.markup import escape

from pfgen_fast.common.cli_args import add_data_argument, add_paths_argument, input_paths
from pfgen_fast.common.errors import InputError
from pfgen_fast.pfgen.data import DATA_DEFAULT, load_questions, resolve_data_dir
from pfgen_fast.pfgen.exactness import add_legacy_sum_argument
from pfgen_fast.pfgen.results import load_result
from pfgen_fast.pfgen.stability import (
    STABILITY_SOURCES,
    pearson_by_pair,
    result_source_scores,
    stability_questions,
)

DEFAULT_PATTERNS = ["result/**/result.json", "data/**/result.json"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_paths_argument(parser, "result.json files", DEFAULT_PATTERNS)
    parser.add_argument("--out", type=Path, required=True, help="directory for the figures")
    add_data_argument(parser, DATA_DEFAULT)
    parser.add_argument(
        "--no-stability", action="store_true", help="skip Fig. 4-6 (source stability)"
    )
    add_legacy_sum_argument(parser)


def run(args: argparse.Namespace) -> int:
    """Reads one result.json at a time and keeps only the numbers the figures draw: every
    figure, source stability included, is drawn from result.json's aggregates (no trials
    file is read)."""
    from pfgen_fast.pfgen import plots

    console = Console(stderr=True, soft_wrap=True)
    paths = input_paths(args.paths, DEFAULT_PATTERNS, console)
    question_ids = None
    if not args.no_stability:
        questions = load_questions(resolve_data_dir(args.data))
        question_ids = [q.question_id for q in stability_questions(questions)]
    points: list[plots.RunPoint] = []
    stable_kinds: list[str] = []
    by_source: dict[str, list[float]] = {source: [] for source in STABILITY_SOURCES}
    errors = 0
    for path in paths:
        try:
            result = load_result(path)
            point = plots.run_point(result, args.legacy_sum)
            if question_ids is not None and result.mode != "system":
                scores = result_source_scores(path, result.data, question_ids, args.legacy_sum)
                for source, score in scores.items():
                    by_source[source].append(score)
                stable_kinds.append(point.kind)
        except InputError as error:
            console.print(f"[red]error:[/] {escape(str(error))}")
            errors += 1
            continue
        points.append(point)
    if not points:
        raise InputError("no readable result.json files to plot")
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f"{args.out}: cannot create: {error.strerror}") from None
    written = plots.measure_figures(points, args.out) + plots.length_figure(points, args.out)
    if question_ids is not None:
        if len(stable_kinds) < 2:
            raise InputError("source stability needs at least two runs (or --no-stability)")
        scores = {source: np.array(values) for source, values in by_source.items()}
        written += plots.stability_figures(stable_kinds, scores, args.out)
        for (a, b), r in pearson_by_pair(scores).items():
            print(f"{a} vs {b}: r = {r:.5f}")
    console.print(f"{len(written)} files written to {args.out}")
    return 1 if errors else 0
