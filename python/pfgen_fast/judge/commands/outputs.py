"""What the judge's commands share: their output options (the files are written in
`judge.outputs`)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_output_arguments(parser: argparse.ArgumentParser, files: str) -> None:
    parser.add_argument("--out", type=Path, help=f"write {files} into DIR")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
