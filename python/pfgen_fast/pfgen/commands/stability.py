"""`stability`: score every run against one reference source at a time (the paper's Fig. 4-6)
and print the Pearson r of each pair of sources."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.markup import escape

from pfgen_fast.common.files import expand_paths
from pfgen_fast.pfgen.data import resolve_data_dir
from pfgen_fast.pfgen.scorer import ReferenceData
from pfgen_fast.pfgen.stability import source_scores

DEFAULT_PATTERN = "result/**/result.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="result.json (or trials) files or glob patterns with **; the trials file beside "
        f"each is scored; default: {DEFAULT_PATTERN}",
    )
    parser.add_argument("--data", help="directory of Qxx.json (default: ./data or the cache)")


def run(args: argparse.Namespace) -> int:
    console = Console(stderr=True, soft_wrap=True)
    paths, unmatched = expand_paths(args.paths or [DEFAULT_PATTERN])
    for pattern in unmatched:
        console.print(f"[yellow]warning:[/] nothing matches {escape(pattern)}")
    references = ReferenceData.load(resolve_data_dir(args.data))
    result = source_scores(paths, references, console)
    for (a, b), r in result.pearson().items():
        print(f"{a} vs {b}: r = {r:.5f}")
    console.print(f"{len(result.runs)} runs scored against each of {', '.join(result.scores)}")
    return 0
