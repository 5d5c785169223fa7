"""`stability`: score every run against one reference source at a time (the paper's Fig. 4-6)
and print the Pearson r of each pair of sources."""

from __future__ import annotations

import argparse

from rich.console import Console

from pfgen_fast.common.cli_args import add_data_argument, add_paths_argument, input_paths
from pfgen_fast.pfgen.data import DATA_DEFAULT, resolve_data_dir
from pfgen_fast.pfgen.exactness import add_legacy_sum_argument
from pfgen_fast.pfgen.scorer import ReferenceData
from pfgen_fast.pfgen.stability import print_pearson, source_scores

DEFAULT_PATTERN = "result/**/result.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    what = "result.json (or trials) files, the trials file beside each scored,"
    add_paths_argument(parser, what, [DEFAULT_PATTERN])
    add_data_argument(parser, DATA_DEFAULT)
    add_legacy_sum_argument(parser)


def run(args: argparse.Namespace) -> int:
    console = Console(stderr=True, soft_wrap=True)
    paths = input_paths(args.paths, [DEFAULT_PATTERN], console)
    references = ReferenceData.load(resolve_data_dir(args.data))
    result = source_scores(paths, references, console, args.legacy_sum)
    basis = f"{len(result.runs)} runs, every answer scored"
    correlated = print_pearson(result.scores, basis, console)
    console.print(f"{len(result.runs)} runs scored against each of {', '.join(result.scores)}")
    return 0 if correlated else 1
