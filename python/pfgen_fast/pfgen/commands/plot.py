"""`plot`: the paper's figures (PNG and SVG) from result.json files."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.markup import escape

from pfgen_fast.common.cli_args import add_data_argument, add_paths_argument, input_paths
from pfgen_fast.common.errors import InputError
from pfgen_fast.pfgen import plots
from pfgen_fast.pfgen.data import DATA_DEFAULT, load_questions, resolve_data_dir
from pfgen_fast.pfgen.exactness import add_legacy_sum_argument
from pfgen_fast.pfgen.results import load_result
from pfgen_fast.pfgen.stability import (
    STABILITY_SOURCES,
    print_pearson,
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


@dataclass
class FigureData:
    """The numbers the figures draw: one point per readable run (Fig. 1-3, score against
    length), and per source the scores of the runs that are not systems (Fig. 4-6)."""

    points: list[plots.RunPoint] = field(default_factory=list)
    stable_kinds: list[str] = field(default_factory=list)
    by_source: dict[str, list[float]] = field(
        default_factory=lambda: {source: [] for source in STABILITY_SOURCES}
    )
    errors: list[str] = field(default_factory=list)


def figure_data(
    paths: list[Path], question_ids: list[str] | None, legacy_sum: bool = False
) -> FigureData:
    """Reads one result.json at a time and keeps only the numbers the figures draw; source
    stability (with `question_ids`, the questions having all its sources) comes from
    result.json's aggregates too, so no trials file is read."""
    data = FigureData()
    for path in paths:
        try:
            result = load_result(path)
            point = plots.run_point(result, legacy_sum)
            if question_ids is not None and result.mode != "system":
                scores = result_source_scores(path, result.data, question_ids, legacy_sum)
                for source, score in scores.items():
                    data.by_source[source].append(score)
                data.stable_kinds.append(point.kind)
        except InputError as error:
            data.errors.append(str(error))
            continue
        data.points.append(point)
    return data


def run(args: argparse.Namespace) -> int:
    console = Console(stderr=True, soft_wrap=True)
    paths = input_paths(args.paths, DEFAULT_PATTERNS, console)
    question_ids = None
    if not args.no_stability:
        questions = load_questions(resolve_data_dir(args.data))
        question_ids = [q.question_id for q in stability_questions(questions)]
    data = figure_data(paths, question_ids, args.legacy_sum)
    for error in data.errors:
        console.print(f"[red]error:[/] {escape(error)}")
    if not data.points:
        raise InputError("no readable result.json files to plot")
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f"{args.out}: cannot create: {error.strerror}") from None
    written = plots.measure_figures(data.points, args.out)
    written += plots.length_figure(data.points, args.out)
    correlated = True
    if question_ids is not None:
        if len(data.stable_kinds) < 2:
            raise InputError("source stability needs at least two runs (or --no-stability)")
        scores = {source: np.array(values) for source, values in data.by_source.items()}
        written += plots.stability_figures(data.stable_kinds, scores, args.out)
        basis = f"{len(data.stable_kinds)} runs, from result.json"
        correlated = print_pearson(scores, basis, console)
    console.print(f"{len(written)} files written to {args.out}")
    return 1 if data.errors or not correlated else 0
